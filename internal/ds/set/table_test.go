package set

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestTableRecordsTrackEntries drives the hashtable encoding directly
// through growth, churn and shrinking, checking after the operations that
// every record's index still names its ents entry (swap-removes rewrite
// it, compaction and clone move records) and that the slots lead to the
// records. It insists that each of those paths actually ran.
func TestTableRecordsTrackEntries(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 99))
		tb, m := &table{}, model{}
		var grew, shrank, compacted, swapped, clones int
		check := func(op int) {
			t.Helper()
			if len(m) == 0 {
				if tb.len() != 0 || len(tb.arena) != 0 {
					t.Fatalf("seed %d op %d: empty table holds %d entries", seed, op, tb.len())
				}
				return
			}
			if err := tableError(tb); err != nil {
				t.Fatalf("seed %d op %d: %v", seed, op, err)
			}
		}
		member := func() string {
			k := rng.IntN(20000)
			switch k % 5 {
			case 0:
				return "" // the empty member is a member like any other
			case 1:
				return strings.Repeat("x", k%97) + strconv.Itoa(k)
			}
			return "element:" + strconv.Itoa(k)
		}
		// Grow to a few thousand, churn, shrink to a handful, grow again.
		target := []int{4000, 4000, 10, 3000, 0}
		op := 0
		for _, want := range target {
			for steps := 0; steps < 20000 && (len(m) != want || steps < 3000); steps++ {
				op++
				slots, dead, n := len(tb.slots), tb.dead, tb.len()
				switch {
				case len(m) < want || len(m) == 0 || (len(m) == want && rng.IntN(2) == 0):
					x := member()
					_, had := m[x]
					if tb.add([]byte(x)) == had {
						t.Fatalf("seed %d op %d: add(%q) with present=%v", seed, op, x, had)
					}
					m[x] = struct{}{}
				case rng.IntN(3) == 0:
					i := rng.IntN(tb.len())
					x := string(tb.member(i))
					if i != n-1 {
						swapped++
					}
					tb.removeIndex(i)
					delete(m, x)
				default:
					x := m.pick(rng)
					if rng.IntN(4) == 0 {
						x = member()
					}
					_, had := m[x]
					if tb.remove([]byte(x)) != had {
						t.Fatalf("seed %d op %d: remove(%q) with present=%v", seed, op, x, had)
					}
					delete(m, x)
				}
				switch {
				case len(tb.slots) > slots && slots > 0:
					grew++
				case len(tb.slots) < slots && tb.len() > 0:
					shrank++
				}
				if dead > 0 && tb.dead == 0 && tb.len() > 0 && tb.len() <= n {
					compacted++
				}
				if tb.len() < 64 || op%97 == 0 || len(tb.slots) != slots || (dead > 0 && tb.dead == 0) {
					check(op)
				}
				if op%1000 == 0 && tb.len() > 0 {
					clones++
					c := tb.clone()
					if err := tableError(c); err != nil {
						t.Fatalf("seed %d op %d: clone: %v", seed, op, err)
					}
					if c.dead != 0 || c.len() != tb.len() {
						t.Fatalf("clone has %d dead bytes, %d of %d members", c.dead, c.len(), tb.len())
					}
					for x := range m {
						if !c.contains([]byte(x)) {
							t.Fatalf("clone lacks %q", x)
						}
					}
					c.removeIndex(0) // must not disturb tb
				}
			}
			if len(m) != want {
				t.Fatalf("seed %d: reached %d members, want %d", seed, len(m), want)
			}
			check(op)
			for x := range m {
				if !tb.contains([]byte(x)) {
					t.Fatalf("seed %d: lost %q", seed, x)
				}
			}
		}
		if grew == 0 || shrank == 0 || compacted == 0 || swapped == 0 || clones == 0 {
			t.Fatalf("seed %d: paths not exercised: grew %d shrank %d compacted %d swapped %d clones %d",
				seed, grew, shrank, compacted, swapped, clones)
		}
		t.Logf("seed %d: %d ops, grew %d shrank %d compacted %d swapped %d clones %d",
			seed, op, grew, shrank, compacted, swapped, clones)
	}
}
