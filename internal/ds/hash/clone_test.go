package hash

import (
	"math"
	"strconv"
	"testing"
)

// TestClone copies hashes of the three encodings and checks that the copy
// has the same encoding, fields, values and expiry times, and that changing
// either one leaves the other alone.
func TestClone(t *testing.T) {
	const now = 1_000_000
	lim := Limits{MaxListpackEntries: 8, MaxListpackValue: 16}
	for _, n := range []int{0, 3, 50} {
		for _, ttl := range []bool{false, true} {
			h := New()
			for i := 0; i < n; i++ {
				h.Set(now, []byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), lim)
				if ttl && i%2 == 0 {
					h.SetExpiry(now, []byte("f"+strconv.Itoa(i)), now+int64(1000+i), CondNone)
				}
			}
			c := h.Clone()
			if c.Encoding() != h.Encoding() || c.Len(now) != h.Len(now) {
				t.Fatalf("n=%d ttl=%v: clone is %s/%d, original %s/%d", n, ttl, c.Encoding(), c.Len(now), h.Encoding(), h.Len(now))
			}
			h.RangeWithExpiry(now, func(f, v []byte, at int64) bool {
				cv, ok := c.Get(now, f)
				cat, _ := c.Expiry(now, f)
				if !ok || string(cv) != string(v) || cat != at {
					t.Fatalf("n=%d ttl=%v: field %s is %q/%d in the clone, %q/%d in the original", n, ttl, f, cv, cat, v, at)
				}
				return true
			})
			if a, ok := c.NextExpiry(); ttl && n > 0 && (!ok || a != now+1000) {
				t.Fatalf("n=%d: clone's next expiry %d %v", n, a, ok)
			}
			// Independence both ways.
			c.Set(now, []byte("f0"), []byte("changed"), lim)
			c.Set(now, []byte("new"), []byte("x"), lim)
			h.Delete(now, []byte("f1"))
			if v, _ := h.Get(now, []byte("f0")); n > 0 && string(v) != "v0" {
				t.Fatalf("n=%d: writing the clone changed the original: %q", n, v)
			}
			if h.Exists(now, []byte("new")) {
				t.Fatal("a field added to the clone appeared in the original")
			}
			if n > 1 && !c.Exists(now, []byte("f1")) {
				t.Fatal("a field deleted from the original vanished from the clone")
			}
			// Expiry in the clone proceeds on its own.
			if ttl && n > 0 {
				before := h.Len(math.MinInt64) // every field, expired or not
				// The even fields had TTLs, but setting f0 above cleared its.
				if removed := c.ExpireFields(now+5000, 1<<20, nil); removed != (n+1)/2-1 {
					t.Fatalf("n=%d: expiring the clone removed %d fields, want %d", n, removed, (n+1)/2-1)
				}
				if h.Len(math.MinInt64) != before {
					t.Fatal("expiring the clone removed fields of the original")
				}
			}
		}
	}
}
