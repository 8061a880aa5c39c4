package hash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// model is the naive hash the package is checked against: what is
// physically present (expired fields stay until something removes them, as
// in the real hash) and, for the small form, the order Redis shows.
type model struct {
	vals  map[string]string
	exp   map[string]int64 // 0: no TTL
	order []string         // physical order of the small form
}

func newModel() *model {
	return &model{vals: map[string]string{}, exp: map[string]int64{}}
}

func (m *model) live(f string, now int64) bool {
	_, ok := m.vals[f]
	if !ok {
		return false
	}
	e := m.exp[f]
	return e == 0 || e > now
}

func (m *model) liveLen(now int64) int {
	n := 0
	for f := range m.vals {
		if m.live(f, now) {
			n++
		}
	}
	return n
}

func (m *model) remove(f string) {
	delete(m.vals, f)
	delete(m.exp, f)
	if i := slices.Index(m.order, f); i >= 0 {
		m.order = slices.Delete(m.order, i, i+1)
	}
}

// place puts f in the order: at the end without a TTL, otherwise before
// the first field without one or with a later-or-equal expiry.
func (m *model) place(f string, ttl int64) {
	if i := slices.Index(m.order, f); i >= 0 {
		m.order = slices.Delete(m.order, i, i+1)
	}
	pos := len(m.order)
	if ttl != 0 {
		for i, g := range m.order {
			if e := m.exp[g]; e == 0 || e >= ttl {
				pos = i
				break
			}
		}
	}
	m.order = slices.Insert(m.order, pos, f)
}

// put mirrors Hash.put: mode as there.
func (m *model) put(now int64, f, v string, mode int, at int64) (created bool) {
	if _, ok := m.vals[f]; ok && !m.live(f, now) {
		m.remove(f)
	}
	if _, ok := m.vals[f]; ok {
		old := m.exp[f]
		ttl := old
		switch mode {
		case ttlClear:
			ttl = 0
		case ttlSet:
			ttl = at
		}
		m.vals[f] = v
		if ttl != old {
			m.place(f, ttl)
			m.exp[f] = ttl
		}
		return false
	}
	ttl := int64(0)
	if mode == ttlSet {
		ttl = at
	}
	m.place(f, ttl)
	m.vals[f] = v
	m.exp[f] = ttl
	return true
}

func (m *model) nextExpiry() (int64, bool) {
	var best int64
	ok := false
	for _, e := range m.exp {
		if e != 0 && (!ok || e < best) {
			best, ok = e, true
		}
	}
	return best, ok
}

type propConfig struct {
	name     string
	lim      Limits
	fields   int // size of the field universe
	ops      int
	seed     uint64
	longVals bool // sometimes values over 64 bytes
}

func TestPropertyAgainstModel(t *testing.T) {
	configs := []propConfig{
		{"listpack-default", DefaultLimits(), 40, 6000, 1, false},
		{"listpack-tight", Limits{16, 16}, 24, 6000, 2, false},
		{"convert-often", Limits{8, 12}, 30, 8000, 3, true},
		{"hashtable", Limits{0, 0}, 300, 10000, 4, true},
		{"hashtable-large", Limits{4, 8}, 2000, 20000, 5, true},
		{"mixed", DefaultLimits(), 200, 20000, 6, true},
	}
	for _, c := range configs {
		for rep := range 3 {
			c := c
			c.seed = c.seed*1000 + uint64(rep)
			t.Run(fmt.Sprintf("%s/seed%d", c.name, c.seed), func(t *testing.T) {
				runProperty(t, c)
			})
		}
	}
}

func runProperty(t *testing.T, c propConfig) {
	if testing.Short() {
		c.ops /= 5
	}
	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	h := New()
	m := newModel()
	now := int64(1_000_000)
	wasLarge := false

	field := func() string {
		i := rng.IntN(c.fields)
		// Field names of varying length; some share prefixes.
		return fmt.Sprintf("f%d%s", i, string(make([]byte, i%7)))
	}
	value := func() string {
		n := rng.IntN(20)
		if c.longVals && rng.IntN(50) == 0 {
			n = 60 + rng.IntN(200)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	when := func() int64 {
		switch rng.IntN(10) {
		case 0:
			return now - int64(rng.IntN(5)) // already due
		case 1:
			return now // exactly now: due
		default:
			return now + 1 + int64(rng.IntN(60))
		}
	}

	for op := range c.ops {
		switch k := rng.IntN(100); {
		case k < 22:
			f, v := field(), value()
			want := m.put(now, f, v, ttlClear, 0)
			if got := h.Set(now, []byte(f), []byte(v), c.lim); got != want {
				t.Fatalf("op %d Set(%q) created=%v, want %v", op, f, got, want)
			}
		case k < 28:
			f, v := field(), value()
			want := m.put(now, f, v, ttlKeep, 0)
			if got := h.SetKeepTTL(now, []byte(f), []byte(v), c.lim); got != want {
				t.Fatalf("op %d SetKeepTTL(%q) created=%v, want %v", op, f, got, want)
			}
		case k < 36:
			f, v, at := field(), value(), when()
			var want bool
			if at <= now {
				want = !m.live(f, now)
				m.remove(f)
			} else {
				want = m.put(now, f, v, ttlSet, at)
			}
			if got := h.SetWithExpiry(now, []byte(f), []byte(v), at, c.lim); got != want {
				t.Fatalf("op %d SetWithExpiry(%q, %d) created=%v, want %v", op, f, at-now, got, want)
			}
		case k < 40:
			f, v := field(), value()
			want := !m.live(f, now)
			if want {
				m.put(now, f, v, ttlClear, 0)
			}
			if got := h.SetNX(now, []byte(f), []byte(v), c.lim); got != want {
				t.Fatalf("op %d SetNX(%q)=%v, want %v", op, f, got, want)
			}
		case k < 46:
			f := field()
			want := m.live(f, now)
			m.remove(f)
			if got := h.Delete(now, []byte(f)); got != want {
				t.Fatalf("op %d Delete(%q)=%v, want %v", op, f, got, want)
			}
		case k < 48:
			f := field()
			wantV, want := m.vals[f], m.live(f, now)
			if want {
				m.remove(f)
			}
			got, ok := h.GetDel(now, []byte(f))
			if ok != want || (ok && string(got) != wantV) {
				t.Fatalf("op %d GetDel(%q)=%q,%v want %q,%v", op, f, got, ok, wantV, want)
			}
		case k < 58:
			f, at := field(), when()
			cond := Cond(rng.IntN(5))
			want := ExpireNoField
			if m.live(f, now) {
				old := m.exp[f]
				switch {
				case old == 0 && (cond == CondXX || cond == CondGT):
					want = ExpireNotSet
				case old != 0 && (cond == CondNX || cond == CondGT && old >= at || cond == CondLT && old <= at):
					want = ExpireNotSet
				case at <= now:
					want = ExpireDeleted
					m.remove(f)
				default:
					want = ExpireSet
					if at != old {
						m.place(f, at)
						m.exp[f] = at
					}
				}
			}
			if got := h.SetExpiry(now, []byte(f), at, cond); got != want {
				t.Fatalf("op %d SetExpiry(%q, %d, %d)=%d, want %d", op, f, at-now, cond, got, want)
			}
		case k < 62:
			f := field()
			want := PersistNoField
			if m.live(f, now) {
				if m.exp[f] == 0 {
					want = PersistNoTTL
				} else {
					want = Persisted
					m.place(f, 0)
					m.exp[f] = 0
				}
			}
			if got := h.Persist(now, []byte(f)); got != want {
				t.Fatalf("op %d Persist(%q)=%d, want %d", op, f, got, want)
			}
		case k < 66:
			max := 1 + rng.IntN(5)
			var expired []int64
			for f, e := range m.exp {
				if e != 0 && e <= now {
					_ = f
					expired = append(expired, e)
				}
			}
			sort.Slice(expired, func(i, j int) bool { return expired[i] < expired[j] })
			var names []string
			n := h.ExpireFields(now, max, func(f []byte) { names = append(names, string(f)) })
			if n != min(max, len(expired)) || len(names) != n {
				t.Fatalf("op %d ExpireFields removed %d (%d names), want %d", op, n, len(names), min(max, len(expired)))
			}
			for _, f := range names {
				e, ok := m.exp[f]
				if !ok || e == 0 || e > now {
					t.Fatalf("op %d ExpireFields removed %q, not expired", op, f)
				}
				if n < len(expired) && e > expired[n-1] {
					t.Fatalf("op %d ExpireFields removed %q (at %d) before sooner ones", op, f, e)
				}
				m.remove(f)
			}
		case k < 72:
			now += int64(rng.IntN(8))
		case k < 80:
			f := field()
			v, ok := h.Get(now, []byte(f))
			if ok != m.live(f, now) || (ok && string(v) != m.vals[f]) {
				t.Fatalf("op %d Get(%q)=%q,%v want %q,%v", op, f, v, ok, m.vals[f], m.live(f, now))
			}
			if h.Exists(now, []byte(f)) != ok || h.ValueLen(now, []byte(f)) != len(v) {
				t.Fatalf("op %d Exists/ValueLen(%q) disagree with Get", op, f)
			}
			at, exists := h.Expiry(now, []byte(f))
			if exists != ok || (ok && at != m.exp[f]) {
				t.Fatalf("op %d Expiry(%q)=%d,%v want %d,%v", op, f, at, exists, m.exp[f], ok)
			}
		case k < 84:
			compareAll(t, op, h, m, now)
		case k < 88:
			checkScan(t, op, h, m, now, rng)
		case k < 92:
			checkRandom(t, op, h, m, now, rng)
		default:
			if got, want := h.Len(now), m.liveLen(now); got != want {
				t.Fatalf("op %d Len=%d want %d", op, got, want)
			}
		}
		// The model's NextExpiry is O(n): check it at every op on small
		// hashes, now and then on large ones.
		if len(m.vals) <= 256 || op%16 == 0 {
			at, ok := h.NextExpiry()
			wat, wok := m.nextExpiry()
			if ok != wok || at != wat {
				t.Fatalf("op %d NextExpiry=%d,%v want %d,%v", op, at, ok, wat, wok)
			}
		}
		if h.tab() != nil {
			wasLarge = true
		} else if wasLarge {
			t.Fatalf("op %d: hash went back to the small form", op)
		} else if len(m.vals) > c.lim.MaxListpackEntries {
			t.Fatalf("op %d: %d fields in the small form, limit %d", op, len(m.vals), c.lim.MaxListpackEntries)
		}
		if op%50 == 0 || op == c.ops-1 {
			checkInvariants(t, h)
		}
	}
	compareAll(t, c.ops, h, m, now)
	t.Logf("final: %s, %d live of %d, now %d", h.Encoding(), h.Len(now), len(m.vals), now)
}

// compareAll checks Len and Range (and, in the small form, the order).
func compareAll(t *testing.T, op int, h *Hash, m *model, now int64) {
	t.Helper()
	if got, want := h.Len(now), m.liveLen(now); got != want {
		t.Fatalf("op %d Len=%d want %d", op, got, want)
	}
	var got []string
	h.RangeWithExpiry(now, func(f, v []byte, at int64) bool {
		if !m.live(string(f), now) || m.vals[string(f)] != string(v) || m.exp[string(f)] != at {
			t.Fatalf("op %d Range gave %q=%q at %d; model %q at %d live %v", op, f, v, at,
				m.vals[string(f)], m.exp[string(f)], m.live(string(f), now))
		}
		got = append(got, string(f))
		return true
	})
	if len(got) != m.liveLen(now) {
		t.Fatalf("op %d Range gave %d fields, want %d", op, len(got), m.liveLen(now))
	}
	if h.tab() == nil {
		var want []string
		for _, f := range m.order {
			if m.live(f, now) {
				want = append(want, f)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("op %d order (%s)\n got %q\nwant %q", op, h.Encoding(), got, want)
		}
	}
}

func checkScan(t *testing.T, op int, h *Hash, m *model, now int64, rng *rand.Rand) {
	t.Helper()
	seen := map[string]int{}
	cur := uint64(0)
	for steps := 0; ; steps++ {
		cur = h.Scan(now, cur, 1+rng.IntN(20), func(f, v []byte) {
			if !m.live(string(f), now) || m.vals[string(f)] != string(v) {
				t.Fatalf("op %d Scan gave %q=%q, not live in model", op, f, v)
			}
			seen[string(f)]++
		})
		if cur == 0 {
			break
		}
		if steps > 100000 {
			t.Fatalf("op %d Scan does not end", op)
		}
	}
	for f := range m.vals {
		if m.live(f, now) && seen[f] == 0 {
			t.Fatalf("op %d Scan missed %q", op, f)
		}
	}
	for f, n := range seen {
		if n > 1 {
			t.Fatalf("op %d Scan without changes gave %q %d times", op, f, n)
		}
	}
}

func checkRandom(t *testing.T, op int, h *Hash, m *model, now int64, rng *rand.Rand) {
	t.Helper()
	n := m.liveLen(now)
	f, v, ok := h.RandomField(now, rng)
	if ok != (n > 0) || (ok && (!m.live(string(f), now) || m.vals[string(f)] != string(v))) {
		t.Fatalf("op %d RandomField=%q,%v with %d live", op, f, ok, n)
	}
	count := rng.IntN(n + 5)
	repeat := rng.IntN(2) == 0
	seen := map[string]bool{}
	got := 0
	h.RandomFields(now, count, repeat, rng, func(f, v []byte) {
		if !m.live(string(f), now) || m.vals[string(f)] != string(v) {
			t.Fatalf("op %d RandomFields gave %q, not live", op, f)
		}
		if !repeat && seen[string(f)] {
			t.Fatalf("op %d RandomFields without repeat gave %q twice", op, f)
		}
		seen[string(f)] = true
		got++
	})
	want := count
	if n == 0 {
		want = 0
	} else if !repeat {
		want = min(count, n)
	}
	if got != want {
		t.Fatalf("op %d RandomFields(%d, repeat=%v) gave %d, want %d (live %d)", op, count, repeat, got, want, n)
	}
}

// TestScanUnderMutation checks HSCAN's guarantee while the hash changes
// between steps: growth, shrinking, compaction, expiry and deletion of other
// fields must not make the scan miss a field present throughout.
func TestScanUnderMutation(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		h := New()
		lim := Limits{4, 64}
		now := int64(1000)
		stable := map[string]bool{}
		for i := range 300 {
			f := fmt.Sprintf("stable-%d", i)
			h.Set(now, []byte(f), []byte("v"), lim)
			stable[f] = true
		}
		churn := 0
		seen := map[string]bool{}
		cur := uint64(0)
		for steps := 0; ; steps++ {
			cur = h.Scan(now, cur, 1+rng.IntN(30), func(f, _ []byte) { seen[string(f)] = true })
			if cur == 0 {
				break
			}
			// Mutate: a burst of inserts (growth), or of deletes (shrink and
			// compaction), or expiries, or value rewrites (relocation).
			switch rng.IntN(4) {
			case 0:
				for range rng.IntN(400) {
					h.Set(now, fmt.Appendf(nil, "churn-%d", churn), []byte("x"), lim)
					churn++
				}
			case 1:
				for i := range churn {
					if rng.IntN(2) == 0 {
						h.Delete(now, fmt.Appendf(nil, "churn-%d", i))
					}
				}
			case 2:
				for range 50 {
					h.SetExpiry(now, fmt.Appendf(nil, "churn-%d", rng.IntN(churn+1)), now+1, CondNone)
				}
				now += 2
				h.ExpireFields(now, 1000, nil)
			case 3:
				for f := range stable {
					if rng.IntN(4) == 0 {
						h.Set(now, []byte(f), []byte("a longer value"), lim)
					}
				}
			}
			checkInvariants(t, h)
		}
		for f := range stable {
			if !seen[f] {
				t.Fatalf("seed %d: scan missed %q", seed, f)
			}
		}
	}
}
