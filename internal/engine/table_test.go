package engine_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
)

// TestLookupCase: every command is found by its name in any case, and no
// name is longer than the 32 bytes engine.Lookup lowers on the stack.
func TestLookupCase(t *testing.T) {
	for _, c := range engine.All() {
		if len(c.Name) > 32 {
			t.Errorf("%q is longer than 32 bytes", c.Name)
		}
		upper := []byte(c.Name)
		for i, b := range upper {
			if 'a' <= b && b <= 'z' {
				upper[i] = b - 'a' + 'A'
			}
		}
		mixed := append([]byte(nil), upper...)
		mixed[0] = c.Name[0]
		for _, n := range [][]byte{[]byte(c.Name), upper, mixed} {
			if engine.Lookup(n) != c {
				t.Errorf("engine.Lookup(%q) = %v", n, engine.Lookup(n))
			}
		}
	}
	for _, n := range []string{"", "nosuchcommand", string(make([]byte, 40)), "GET\x00"} {
		if c := engine.Lookup([]byte(n)); c != nil {
			t.Errorf("engine.Lookup(%q) = %q", n, c.Name)
		}
	}
	if n := testing.AllocsPerRun(100, func() { engine.Lookup([]byte("INCR")) }); n != 0 {
		t.Errorf("engine.Lookup allocates %.1f times", n)
	}
}
