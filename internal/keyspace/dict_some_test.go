package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestDictSome: eviction's sample gives at most n stored objects, none
// twice, and over many samples reaches every key of a table, sparse
// (after deletions) or not, rehashing or not.
func TestDictSome(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, keep := range []int{1000, 100, 3} {
		d := newDict()
		for i := range 1000 {
			d.Put(&Object{Key: strconv.Itoa(i)})
		}
		for i := keep; i < 1000; i++ {
			d.Delete(strconv.Itoa(i))
		}
		if d.rehashing() {
			d.Some(r, 5, func(o *Object) {}) // one random object
			for d.rehashing() {
				d.rehashStep(100)
			}
		}
		seen := map[string]bool{}
		for range 20000 {
			got := map[*Object]bool{}
			d.Some(r, 5, func(o *Object) {
				if got[o] {
					t.Fatalf("keep %d: %q twice in one sample", keep, o.Key)
				}
				if d.Get(o.Key) != o {
					t.Fatalf("keep %d: %q is not stored", keep, o.Key)
				}
				got[o] = true
				seen[o.Key] = true
			})
			if len(got) == 0 || len(got) > 5 {
				t.Fatalf("keep %d: %d objects", keep, len(got))
			}
		}
		if len(seen) != keep {
			t.Errorf("keep %d: samples reached %d keys", keep, len(seen))
		}
	}
}
