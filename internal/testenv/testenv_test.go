package testenv

import (
	"fmt"
	"runtime"
	"testing"
)

// fakeTB records what the helpers ask of a test. Like a real one, Skipf
// and Fatalf end the goroutine that calls them.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Logf(string, ...any) {}

func (f *fakeTB) Skipf(format string, a ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, a...)
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, a ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, a...)
	runtime.Goexit()
}

// call runs fn on f in a goroutine of its own, as the testing package runs
// a test, and returns what fn returned ("" when it ended the goroutine).
func call(f *fakeTB, fn func(testing.TB, string) string, program string) string {
	var p string
	done := make(chan struct{})
	go func() {
		defer close(done)
		p = fn(f, program)
	}()
	<-done
	return p
}

const absent = "abacus-testenv-no-such-program"

func TestMissingProgram(t *testing.T) {
	defer func() { missed = map[string]int{} }()
	for _, c := range []struct {
		require      string
		have         bool
		skip, fail   bool
		countedUnder string
	}{
		{"", false, true, false, "differential tests skipped: no " + absent + " on PATH"},
		{"", true, false, false, "differential checks left out: no " + absent + " on PATH"},
		{"1", false, false, true, ""},
		{"1", true, false, true, ""},
	} {
		t.Setenv(RequireEnv, c.require)
		missed = map[string]int{}
		f := &fakeTB{}
		fn := Need
		if c.have {
			fn = Have
		}
		p := call(f, fn, absent)
		if p != "" || f.skipped != c.skip || f.failed != c.fail {
			t.Errorf("require=%q have=%v: path %q skipped %v failed %v (%s)", c.require, c.have, p, f.skipped, f.failed, f.msg)
		}
		if c.countedUnder != "" && missed[c.countedUnder] != 1 {
			t.Errorf("require=%q have=%v: counted %v", c.require, c.have, missed)
		}
		if c.countedUnder == "" && len(missed) != 0 {
			t.Errorf("require=%q have=%v: a failure was also counted: %v", c.require, c.have, missed)
		}
	}
}

func TestPresentProgram(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	f := &fakeTB{}
	if p := call(f, Need, "go"); p == "" || f.skipped || f.failed {
		t.Errorf("go: path %q skipped %v failed %v", p, f.skipped, f.failed)
	}
}
