package acl

import (
	"math/rand"
	"testing"
)

// The index answers as the patterns walked in order do, for patterns with
// and without literal prefixes, read/write permissions and keys that hit
// and miss them.
func TestKeyIndexAgreesWithWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"a", "b", "ab", ":", "*", "?", "[ab]", "\\*", "x", ""}
	word := func() string {
		s := ""
		for n := rng.Intn(4); n >= 0; n-- {
			s += pieces[rng.Intn(len(pieces))]
		}
		return s
	}
	keyPieces := []string{"a", "b", ":", "x", "*", ""}
	key := func() []byte {
		s := ""
		for n := rng.Intn(5); n >= 0; n-- {
			s += keyPieces[rng.Intn(len(keyPieces))]
		}
		return []byte(s)
	}
	for round := 0; round < 2000; round++ {
		s := &Selector{}
		for n := rng.Intn(12); n >= 0; n-- {
			s.keys = append(s.keys, newKeyPattern(word(), 1+rng.Intn(3)))
		}
		walk := &Selector{keys: s.keys}
		s.keyIdx = newKeyIndex(s.keys)
		for i := 0; i < 50; i++ {
			k, need := key(), 1+rng.Intn(3)
			if got, want := s.KeyAllowed(k, need), walk.KeyAllowed(k, need); got != want {
				t.Fatalf("patterns %v key %q need %d: index %v, walk %v", s.keys, k, need, got, want)
			}
		}
	}
}
