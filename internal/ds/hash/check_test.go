package hash

import (
	"fmt"
	"testing"
)

// checkInvariants verifies the internal structure of h and fails t when it
// is broken.
func checkInvariants(t testing.TB, h *Hash) {
	t.Helper()
	if err := invariantErr(h); err != nil {
		t.Fatal(err)
	}
}

func invariantErr(h *Hash) error {
	if h.tab() == nil {
		return lpInvariantErr(h.block())
	}
	if len(h.block()) != 0 {
		return fmt.Errorf("large hash keeps a small block")
	}
	return tableInvariantErr(h.tab())
}

func lpInvariantErr(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, ex, p := lpHeader(b)
	k := 0
	var prev int64
	seen := map[string]bool{}
	noTTLSeen := false
	for p < len(b) {
		e := lpEntryAt(b, p, ex)
		if e.end > len(b) {
			return fmt.Errorf("entry at %d runs past the block", p)
		}
		f := string(b[e.fOff : e.fOff+e.fLen])
		if seen[f] {
			return fmt.Errorf("duplicate field %q", f)
		}
		seen[f] = true
		if ex {
			if e.ttl == 0 {
				noTTLSeen = true
			} else {
				if noTTLSeen {
					return fmt.Errorf("field %q with TTL after a field without", f)
				}
				if e.ttl < prev {
					return fmt.Errorf("field %q out of expiry order", f)
				}
				prev = e.ttl
			}
		}
		k++
		p = e.end
	}
	if k != n {
		return fmt.Errorf("header says %d entries, block has %d", n, k)
	}
	return nil
}

func tableInvariantErr(t *table) error {
	if len(t.slots) != 1<<t.bits {
		return fmt.Errorf("slots %d, bits %d", len(t.slots), t.bits)
	}
	mask := len(t.slots) - 1
	count := 0
	indexed := map[int]bool{}
	for i, s := range t.slots {
		if s == 0 {
			continue
		}
		count++
		off := slotOff(s)
		r := t.rec(off)
		if r.flags&recDead != 0 {
			return fmt.Errorf("slot %d points to a dead record", i)
		}
		hv := hashOf(t.field(r))
		if hv>>offBits != s>>offBits {
			return fmt.Errorf("slot %d: wrong tag", i)
		}
		home := int(hv >> (64 - t.bits))
		if t.home(s, t.bits) != home {
			return fmt.Errorf("slot %d: home from tag %d, from hash %d", i, t.home(s, t.bits), home)
		}
		for j := home; j != i; j = (j + 1) & mask {
			if t.slots[j] == 0 {
				return fmt.Errorf("slot %d: empty slot %d between it and its home %d", i, j, home)
			}
		}
		indexed[off] = true
	}
	if count != t.count {
		return fmt.Errorf("count %d, slots in use %d", t.count, count)
	}
	if t.count*4 > len(t.slots)*3 {
		return fmt.Errorf("load over 3/4: %d in %d", t.count, len(t.slots))
	}
	garbage, nttl, live := 0, 0, 0
	for p := 0; p < len(t.arena); {
		r := t.rec(p)
		if r.flags&recDead != 0 {
			garbage += r.end - r.off
			if indexed[p] {
				return fmt.Errorf("dead record %d indexed", p)
			}
		} else {
			live++
			if !indexed[p] {
				return fmt.Errorf("live record %d not indexed", p)
			}
			if t.ttlOf(r) != 0 {
				nttl++
			}
		}
		p = r.end
	}
	if live != t.count {
		return fmt.Errorf("live records %d, count %d", live, t.count)
	}
	if garbage != t.garbage {
		return fmt.Errorf("garbage %d, counted %d", t.garbage, garbage)
	}
	if nttl != t.nttl {
		return fmt.Errorf("nttl %d, counted %d", t.nttl, nttl)
	}
	valid := 0
	for i, e := range t.heap {
		if i > 0 && t.heap[(i-1)/2].at > e.at {
			return fmt.Errorf("heap order broken at %d", i)
		}
		if t.valid(e) {
			valid++
		}
	}
	if valid != nttl {
		return fmt.Errorf("valid heap entries %d, fields with TTL %d", valid, nttl)
	}
	if len(t.heap) > 0 && !t.valid(t.heap[0]) {
		return fmt.Errorf("heap top is stale")
	}
	return nil
}
