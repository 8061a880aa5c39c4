package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCommitReplacesTarget(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "dump.rdb"), filepath.Join(dir, "temp-1.rdb")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write([]byte("new"))
	if err := Commit(f, tmp, path, err); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("target holds %q, want new", b)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file still there: %v", err)
	}
	if err := SyncDir(path); err != nil {
		t.Fatal(err)
	}
}

func TestCommitFailedWriteKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "dump.rdb"), filepath.Join(dir, "temp-1.rdb")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	werr := errors.New("disk full")
	if err := Commit(f, tmp, path, werr); err != werr {
		t.Fatalf("Commit returned %v, want the write error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("target holds %q, want old", b)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}
