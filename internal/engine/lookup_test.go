package engine_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
)

// lookupFor answers from the session's last lookup only when the name is
// that command's, in any letter case, and otherwise is engine.Lookup.
func TestLookupForCache(t *testing.T) {
	s := &engine.Session{}
	steps := []struct {
		name string
		want string // "" for an unknown command
	}{
		{"SADD", "sadd"},
		{"sadd", "sadd"},
		{"sAdD", "sadd"},
		{"saddx", ""},
		{"sad", ""},
		{"SREM", "srem"},
		{"sadd", "sadd"},
		{"", ""},
		{"GET", "get"},
		{"GEt", "get"},
		{"SET", "set"},
		{"get\x00", ""},
	}
	for i, st := range steps {
		c := s.LookupFor([]byte(st.name))
		got := ""
		if c != nil {
			got = c.Name
		}
		if got != st.want {
			t.Fatalf("step %d: lookupFor(%q) = %q, want %q", i, st.name, got, st.want)
		}
		if l := engine.Lookup([]byte(st.name)); l != c {
			t.Fatalf("step %d: lookupFor(%q) differs from engine.Lookup", i, st.name)
		}
	}
}

// BenchmarkLookup compares the table lookup with the session's cached one
// for a pipeline repeating one command.
func BenchmarkLookup(b *testing.B) {
	name := []byte("SADD")
	b.Run("table", func(b *testing.B) {
		for range b.N {
			if engine.Lookup(name) == nil {
				b.Fatal("no sadd")
			}
		}
	})
	b.Run("session", func(b *testing.B) {
		s := &engine.Session{}
		for range b.N {
			if s.LookupFor(name) == nil {
				b.Fatal("no sadd")
			}
		}
	})
}
