package aof

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/resp"
)

func TestManifestRoundTrip(t *testing.T) {
	text := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
	m, err := ParseManifest([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if m.Base == nil || m.Base.Name != "appendonly.aof.1.base.rdb" || len(m.Incrs) != 2 || m.Incrs[1].Seq != 2 {
		t.Fatalf("parsed %+v", m)
	}
	if got := string(m.Bytes()); got != text {
		t.Fatalf("formatted %q", got)
	}
	q, err := ParseManifest([]byte("file \"my file.aof.1.incr.aof\" seq 1 type i\n"))
	if err != nil || q.Incrs[0].Name != "my file.aof.1.incr.aof" {
		t.Fatalf("quoted: %v %+v", err, q)
	}
	if !strings.Contains(string(q.Bytes()), `"my file.aof.1.incr.aof"`) {
		t.Fatalf("quoted name not quoted back: %q", q.Bytes())
	}
	for _, bad := range []string{"", "file a seq x type b\n", "file a seq 1 type z\n", "file a seq 1\n",
		"file a seq 1 type b\nfile b seq 2 type b\n", "file ../x seq 1 type i\n", "file \"a seq 1 type i\n"} {
		if _, err := ParseManifest([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNames(t *testing.T) {
	if BaseName("appendonly.aof", 3, true) != "appendonly.aof.3.base.rdb" || BaseName("x", 1, false) != "x.1.base.aof" ||
		IncrName("appendonly.aof", 2) != "appendonly.aof.2.incr.aof" || ManifestName("appendonly.aof") != "appendonly.aof.manifest" {
		t.Fatal("names differ from Redis 7.0's")
	}
}

func cmds(argvs ...[]string) []byte {
	var b []byte
	for _, a := range argvs {
		bs := make([][]byte, len(a))
		for i, s := range a {
			bs[i] = []byte(s)
		}
		b = resp.AppendCommand(b, bs...)
	}
	return b
}

func collect(b []byte) ([]string, int64, error) {
	var got []string
	good, err := Replay(b, func(argv [][]byte) error {
		parts := make([]string, len(argv))
		for i, a := range argv {
			parts[i] = string(a)
		}
		got = append(got, strings.Join(parts, " "))
		return nil
	})
	return got, good, err
}

func TestReplayAndTruncation(t *testing.T) {
	full := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"MULTI"}, []string{"INCR", "x"}, []string{"INCR", "y"}, []string{"EXEC"}, []string{"SET", "b", "with\r\nCRLF"})
	got, good, err := collect(full)
	if err != nil || good != int64(len(full)) {
		t.Fatalf("err %v good %d of %d", err, good, len(full))
	}
	want := "SELECT 0|SET a 1|INCR x|INCR y|SET b with\r\nCRLF"
	if strings.Join(got, "|") != want {
		t.Fatalf("got %q", got)
	}
	// Every proper prefix is either a whole-command boundary or torn; an
	// open MULTI is never applied.
	for n := 0; n < len(full); n++ {
		got, good, err := collect(full[:n])
		if good > int64(n) {
			t.Fatalf("prefix %d: good %d", n, good)
		}
		for _, g := range got {
			if g == "INCR x" {
				if !strings.Contains(strings.Join(got, "|"), "INCR y") {
					t.Fatalf("prefix %d: half a transaction applied: %q", n, got)
				}
			}
		}
		if err != nil && !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d: %v", n, err)
		}
		if err == nil && good != int64(n) {
			t.Fatalf("prefix %d: clean but good %d", n, good)
		}
		// The good prefix replays cleanly and gives the same commands.
		again, g2, err2 := collect(full[:good])
		if err2 != nil || g2 != good || strings.Join(again, "|") != strings.Join(got, "|") {
			t.Fatalf("prefix %d: fixed prefix replays as %q %d %v, want %q", n, again, g2, err2, got)
		}
	}
}

func TestFormatErrors(t *testing.T) {
	for _, bad := range []string{"SET a b\r\n", "*1\r\n:5\r\n", "*x\r\n", "*1\r\n$3\r\nabcXY", "*0\r\n", "*1\r\n$-1\r\n", "*2\r\n$1\r\na\r\n$99999999999\r\n"} {
		_, err := Replay([]byte(bad), func([][]byte) error { return nil })
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := Replay(cmds([]string{"MULTI"}, []string{"MULTI"}), func([][]byte) error { return nil }); err == nil {
		t.Error("nested MULTI accepted")
	}
	// Annotations (aof-timestamp-enabled) are skipped.
	b := append([]byte("#TS:1700000000\r\n"), cmds([]string{"SET", "a", "1"})...)
	if got, _, err := collect(b); err != nil || len(got) != 1 {
		t.Fatalf("annotation: %q %v", got, err)
	}
}

func TestWriterRotateInstall(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Base: &ManifestFile{Name: BaseName("appendonly.aof", 1, false), Seq: 1, Type: TypeBase}}
	if err := os.WriteFile(filepath.Join(dir, m.Base.Name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(dir, "appendonly.aof", m, func() int { return FsyncAlways })
	if err != nil {
		t.Fatal(err)
	}
	a.Feed([]Entry{{DB: 0, Argv: [][]byte{[]byte("SET"), []byte("a"), []byte("1")}}}, false)
	a.Feed([]Entry{{DB: 2, Argv: [][]byte{[]byte("INCR"), []byte("x")}}, {DB: 2, Argv: [][]byte{[]byte("INCR"), []byte("y")}}}, true)
	if err := a.Rotate(); err != nil {
		t.Fatal(err)
	}
	a.Feed([]Entry{{DB: 2, Argv: [][]byte{[]byte("DEL"), []byte("x")}}}, false)
	off := a.Flush()
	if off == 0 {
		t.Fatal("appendfsync always: Flush gave nothing to wait for")
	}
	a.WaitDurable(off)
	if again := a.Flush(); again != 0 {
		t.Fatalf("after WaitDurable Flush still asks to wait for %d", again)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.manifest"))
	want := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
	if string(got) != want {
		t.Fatalf("manifest after rotate %q", got)
	}
	one, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"))
	if w := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"SELECT", "2"}, []string{"MULTI"}, []string{"INCR", "x"}, []string{"INCR", "y"}, []string{"EXEC"}); !bytes.Equal(one, w) {
		t.Fatalf("incr 1 = %q", one)
	}
	two, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.2.incr.aof"))
	if w := cmds([]string{"SELECT", "2"}, []string{"DEL", "x"}); !bytes.Equal(two, w) {
		t.Fatalf("incr 2 starts with SELECT: %q", two)
	}
	if err := os.WriteFile(filepath.Join(dir, BaseName("appendonly.aof", 2, true)), []byte("REDIS0010"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Install(BaseName("appendonly.aof", 2, true), 2, 2); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "appendonly.aof.manifest"))
	if string(got) != "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n" {
		t.Fatalf("manifest after install %q", got)
	}
	for _, gone := range []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still there", gone)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckMain(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "appendonly.aof.1.incr.aof")
	full := cmds([]string{"SET", "a", "1"}, []string{"INCR", "b"})
	os.WriteFile(p, full[:len(full)-3], 0o644)
	var out bytes.Buffer
	if code := CheckMain([]string{p}, &out); code != 1 || !strings.Contains(out.String(), "Use the --fix option") {
		t.Fatalf("check of a torn file: %d %s", code, out.String())
	}
	out.Reset()
	if code := CheckMain([]string{"--fix", p}, &out); code != 0 {
		t.Fatalf("fix: %d %s", code, out.String())
	}
	b, _ := os.ReadFile(p)
	if !bytes.Equal(b, cmds([]string{"SET", "a", "1"})) {
		t.Fatalf("fixed file %q", b)
	}
	out.Reset()
	if code := CheckMain([]string{p}, &out); code != 0 || !strings.Contains(out.String(), "is valid") {
		t.Fatalf("after fix: %d %s", code, out.String())
	}
}

func FuzzLoadAOF(f *testing.F) {
	f.Add(cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"MULTI"}, []string{"INCR", "x"}, []string{"EXEC"}))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1"))
	f.Add([]byte("*1\r\n$5\r\nMULTI\r\n*1\r\n$5\r\nMULTI\r\n"))
	f.Add([]byte("#TS:1\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*9999999999\r\n"))
	f.Add([]byte("file appendonly.aof.1.base.rdb seq 1 type b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		good, err := Replay(b, func(argv [][]byte) error {
			if len(argv) == 0 {
				t.Fatal("empty command handed over")
			}
			return nil
		})
		if good < 0 || good > int64(len(b)) {
			t.Fatalf("good %d of %d", good, len(b))
		}
		if err == nil && good != int64(len(b)) {
			t.Fatalf("clean parse stopped at %d of %d", good, len(b))
		}
		ParseManifest(b)
	})
}

// A failed write keeps the bytes, marks the AOF failing (the server then
// refuses writes) and is retried by the next Flush.
func TestWriteErrorKeepsBytes(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	m := &Manifest{}
	a, err := Open(dir, "appendonly.aof", m, func() int { return FsyncEverysec })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	good := a.f
	a.mu.Lock()
	a.f = full
	a.mu.Unlock()
	a.Feed([]Entry{{DB: 0, Argv: [][]byte{[]byte("SET"), []byte("k"), []byte("v")}}}, false)
	a.Flush()
	if !a.Failing() || a.Err() == nil {
		t.Fatal("write to /dev/full not reported")
	}
	a.mu.Lock()
	a.f = good
	a.mu.Unlock()
	full.Close()
	a.Flush()
	if a.Failing() || a.Err() != nil {
		t.Fatalf("still failing after a good write: %v", a.Err())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"))
	if want := cmds([]string{"SELECT", "0"}, []string{"SET", "k", "v"}); !bytes.Equal(b, want) {
		t.Fatalf("file %q, want %q", b, want)
	}
}
