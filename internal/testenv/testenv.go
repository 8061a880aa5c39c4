// Package testenv finds the Redis programs that differential tests compare
// Abacus with (redis-server, redis-check-rdb) and keeps their absence from
// passing unnoticed:
//
//   - with ABACUS_REQUIRE_REDIS=1 in the environment (CI sets it), a test
//     that needs a missing program fails, saying which;
//   - without it the test is skipped, and Run, called from the package's
//     TestMain, prints how many tests were skipped and why once the
//     package's tests are done, with or without -v.
//
// It imports nothing of Abacus, so the tests of any package can use it,
// including the data-structure packages, which would import themselves
// through servertest (that one imports the whole server).
package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// RequireEnv is the environment variable that turns a missing Redis
// program from a skip into a failure when set to "1".
const RequireEnv = "ABACUS_REQUIRE_REDIS"

// Required reports whether missing Redis programs fail tests.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

var (
	mu sync.Mutex
	// missed counts, per reason, the tests that were skipped or that left
	// a comparison out, for Run's report.
	missed = map[string]int{}
)

// NeedRedis returns the path of redis-server; without one on PATH it
// skips t (fails it when Required).
func NeedRedis(t testing.TB) string {
	t.Helper()
	return Need(t, "redis-server")
}

// Need returns the path of the named Redis program (redis-server,
// redis-check-rdb, redis-cli); without it on PATH it skips t (fails it
// when Required).
func Need(t testing.TB, program string) string {
	t.Helper()
	p := find(t, program, "differential tests skipped")
	if p == "" {
		t.Skipf("differential test skipped: no %s on PATH (%s=1 makes this a failure)", program, RequireEnv)
	}
	return p
}

// Have returns the path of the named Redis program, or "" when it is
// not on PATH, for a test that runs a comparison with it only when it is
// there and goes on without it. The absence fails t when Required, and is
// counted in Run's report otherwise.
func Have(t testing.TB, program string) string {
	t.Helper()
	p := find(t, program, "differential checks left out")
	if p == "" {
		t.Logf("no %s on PATH: the comparison with it is left out (%s=1 makes this a failure)", program, RequireEnv)
	}
	return p
}

// Skip skips t for a missing part of the environment that no variable
// requires (a file that a distribution's package installs, say), counting
// it for Run's report.
func Skip(t testing.TB, reason string) {
	t.Helper()
	count("tests skipped", reason)
	t.Skipf("skipped: %s", reason)
}

// find looks program up on PATH. When it is missing, it fails t if
// Required and otherwise counts the absence under what.
func find(t testing.TB, program, what string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err == nil {
		return p
	}
	if Required() {
		t.Fatalf("%s is not on PATH, and %s=1 requires it: install Redis 7.0 (Debian: apt-get install redis-server redis-tools)", program, RequireEnv)
	}
	count(what, "no "+program+" on PATH")
	return ""
}

func count(what, reason string) {
	mu.Lock()
	missed[what+": "+reason]++
	mu.Unlock()
}

// Run runs the package's tests and then reports, on one line per reason,
// how many were skipped or left a comparison out for a missing program.
// A package's TestMain calls it as os.Exit(testenv.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	report()
	return code
}

func report() {
	mu.Lock()
	defer mu.Unlock()
	if len(missed) == 0 {
		return
	}
	keys := make([]string, 0, len(missed))
	for k := range missed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	var b strings.Builder
	for _, k := range keys {
		what, reason, _ := strings.Cut(k, ": ")
		fmt.Fprintf(&b, "%s: %d %s: %s\n", pkg, missed[k], what, reason)
	}
	fmt.Fprint(os.Stderr, b.String())
	// go test ./... discards what a passing package printed unless -v
	// is given, which would hide the report where it matters; so it goes
	// to the terminal too when stderr is not one and there is one.
	if !testing.Verbose() && !isTerminal(os.Stderr) {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			io.WriteString(tty, b.String())
			tty.Close()
		}
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// PythonRedis returns a python3 interpreter that can import redis-py
// (Debian's python3-redis, which CI installs): Debian's interpreter
// first, since a python3 earlier on PATH may be another one. Without one
// it skips t (fails it when Required).
func PythonRedis(t testing.TB) string {
	t.Helper()
	var err error
	for _, cand := range []string{"/usr/bin/python3", "python3"} {
		var py string
		if py, err = exec.LookPath(cand); err == nil {
			if err = exec.Command(py, "-c", "import redis").Run(); err == nil {
				return py
			}
		}
	}
	if Required() {
		t.Fatalf("python3 with the redis module (Debian's python3-redis) is needed: %v", err)
	}
	Skip(t, "no python3 with the redis module (python3-redis)")
	return ""
}
