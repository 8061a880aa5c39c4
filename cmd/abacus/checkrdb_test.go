package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `abacus check-rdb FILE` exits 0 on a good file, 1 on a corrupt one, 2 on
// a usage error (the report itself is tested in internal/rdb).
func TestCheckRDBSubcommand(t *testing.T) {
	good := filepath.Join("..", "..", "internal", "rdb", "testdata", "redis70.rdb")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.rdb")
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"check-rdb", good}, 0},
		{[]string{"check-rdb", bad}, 1},
		{[]string{"check-rdb"}, 2},
		{[]string{"check-rdb", filepath.Join(t.TempDir(), "missing.rdb")}, 2},
	} {
		if got := run(c.args, strings.NewReader(""), &stderr, &stderr, nil); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, got, c.code)
		}
	}
}
