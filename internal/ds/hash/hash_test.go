package hash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func b(s string) []byte { return []byte(s) }

// encodings runs f for a hash that stays small and one that is large from
// the first insert.
var encodings = []struct {
	name string
	lim  Limits
	want string
}{
	{"listpack", DefaultLimits(), EncListpack},
	{"hashtable", Limits{0, 0}, EncHashtable},
}

func fields(h *Hash, now int64) []string {
	var out []string
	h.Range(now, func(f, v []byte) bool {
		out = append(out, string(f)+"="+string(v))
		return true
	})
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestBasicOps(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			const now = 1000
			lim := enc.lim
			h := New()
			if h.Len(now) != 0 {
				t.Fatal("new hash not empty")
			}
			steps := []struct {
				op      string
				f, v    string
				want    bool
				wantLen int
			}{
				{"set", "a", "1", true, 1},
				{"set", "b", "2", true, 2},
				{"set", "a", "one", false, 2},       // update, longer value
				{"set", "a", "uno", false, 2},       // update, same length: in place
				{"set", "", "empty-field", true, 3}, // empty field name
				{"set", "e", "", true, 4},           // empty value
				{"setnx", "b", "x", false, 4},
				{"setnx", "c", "3", true, 5},
				{"del", "b", "", true, 4},
				{"del", "b", "", false, 4},
				{"del", "zz", "", false, 4},
				{"keepttl", "d", "4", true, 5},
				{"keepttl", "d", "44", false, 5},
			}
			for _, s := range steps {
				var got bool
				switch s.op {
				case "set":
					got = h.Set(now, b(s.f), b(s.v), lim)
				case "setnx":
					got = h.SetNX(now, b(s.f), b(s.v), lim)
				case "del":
					got = h.Delete(now, b(s.f))
				case "keepttl":
					got = h.SetKeepTTL(now, b(s.f), b(s.v), lim)
				}
				if got != s.want || h.Len(now) != s.wantLen {
					t.Fatalf("%s(%q,%q) = %v len %d, want %v len %d", s.op, s.f, s.v, got, h.Len(now), s.want, s.wantLen)
				}
				checkInvariants(t, h)
			}
			gets := map[string]string{"a": "uno", "": "empty-field", "e": "", "c": "3", "d": "44"}
			for f, want := range gets {
				v, ok := h.Get(now, b(f))
				if !ok || string(v) != want || !h.Exists(now, b(f)) || h.ValueLen(now, b(f)) != len(want) {
					t.Errorf("Get(%q) = %q,%v want %q", f, v, ok, want)
				}
			}
			if _, ok := h.Get(now, b("b")); ok || h.Exists(now, b("b")) || h.ValueLen(now, b("b")) != 0 {
				t.Error("deleted field still visible")
			}
			if h.Encoding() != enc.want {
				t.Errorf("encoding %s, want %s", h.Encoding(), enc.want)
			}
			got := fields(h, now)
			want := []string{"a=uno", "=empty-field", "e=", "c=3", "d=44"}
			if enc.want == EncListpack {
				if !slices.Equal(got, want) {
					t.Errorf("Range order %q, want insertion order %q", got, want)
				}
			} else if !slices.Equal(sorted(got), sorted(want)) {
				t.Errorf("Range %q, want %q", got, want)
			}
			v, ok := h.GetDel(now, b("a"))
			h.Set(now, b("c"), b("9"), lim) // would overwrite an aliased value
			if !ok || string(v) != "uno" || h.Exists(now, b("a")) {
				t.Errorf("GetDel = %q,%v", v, ok)
			}
			if _, ok := h.GetDel(now, b("a")); ok {
				t.Error("GetDel of a missing field succeeded")
			}
			for _, f := range []string{"", "e", "c", "d"} {
				h.Delete(now, b(f))
			}
			if h.Len(now) != 0 || len(fields(h, now)) != 0 {
				t.Errorf("not empty after deleting everything: %q", fields(h, now))
			}
			checkInvariants(t, h)
		})
	}
}

func TestRangeStops(t *testing.T) {
	for _, enc := range encodings {
		h := New()
		for i := range 10 {
			h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), enc.lim)
		}
		n := 0
		h.Range(0, func(_, _ []byte) bool { n++; return n < 3 })
		if n != 3 {
			t.Errorf("%s: Range went on after false: %d calls", enc.name, n)
		}
	}
}

func TestEncodingConversion(t *testing.T) {
	lim := Limits{MaxListpackEntries: 4, MaxListpackValue: 8}
	cases := []struct {
		name string
		do   func(h *Hash)
		want string
	}{
		{"at the entry limit", func(h *Hash) {
			for i := range 4 {
				h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), lim)
			}
		}, EncListpack},
		{"past the entry limit", func(h *Hash) {
			for i := range 5 {
				h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), lim)
			}
		}, EncHashtable},
		{"updates do not count", func(h *Hash) {
			for range 10 {
				h.Set(0, b("f"), b("v"), lim)
			}
		}, EncListpack},
		{"value at the length limit", func(h *Hash) { h.Set(0, b("f"), b("12345678"), lim) }, EncListpack},
		{"value past the length limit", func(h *Hash) { h.Set(0, b("f"), b("123456789"), lim) }, EncHashtable},
		{"field past the length limit", func(h *Hash) { h.Set(0, b("123456789"), b("v"), lim) }, EncHashtable},
		{"long value on update", func(h *Hash) {
			h.Set(0, b("f"), b("v"), lim)
			h.Set(0, b("f"), b("123456789"), lim)
		}, EncHashtable},
		{"expiry gives listpackex", func(h *Hash) {
			h.Set(0, b("f"), b("v"), lim)
			h.SetExpiry(0, b("f"), 100, CondNone)
		}, EncListpackEx},
		{"expiry call on a missing field still gives listpackex", func(h *Hash) {
			h.Set(0, b("f"), b("v"), lim)
			h.SetExpiry(0, b("nope"), 100, CondNone)
		}, EncListpackEx},
		{"set with expiry gives listpackex", func(h *Hash) {
			h.SetWithExpiry(0, b("f"), b("v"), 100, lim)
		}, EncListpackEx},
		{"listpackex stays after persist", func(h *Hash) {
			h.SetWithExpiry(0, b("f"), b("v"), 100, lim)
			h.Persist(0, b("f"))
		}, EncListpackEx},
		{"listpackex converts with its TTLs", func(h *Hash) {
			for i := range 5 {
				h.SetWithExpiry(0, fmt.Appendf(nil, "f%d", i), b("v"), int64(100+i), lim)
			}
		}, EncHashtable},
		{"never back to small", func(h *Hash) {
			for i := range 5 {
				h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), lim)
			}
			for i := range 5 {
				h.Delete(0, fmt.Appendf(nil, "f%d", i))
			}
			h.Set(0, b("f"), b("v"), lim)
		}, EncHashtable},
		{"zero limits: always hashtable", func(h *Hash) { h.Set(0, b("f"), b("v"), Limits{}) }, EncHashtable},
	}
	for _, c := range cases {
		h := New()
		c.do(h)
		if got := h.Encoding(); got != c.want {
			t.Errorf("%s: encoding %s, want %s", c.name, got, c.want)
		}
		checkInvariants(t, h)
	}
	// The TTLs survive the conversion.
	h := New()
	for i := range 5 {
		h.SetWithExpiry(0, fmt.Appendf(nil, "f%d", i), b("v"), int64(100+i), lim)
	}
	for i := range 5 {
		if at, ok := h.Expiry(0, fmt.Appendf(nil, "f%d", i)); !ok || at != int64(100+i) {
			t.Errorf("f%d: expiry %d,%v after conversion", i, at, ok)
		}
	}
	if at, _ := h.NextExpiry(); at != 100 {
		t.Errorf("NextExpiry %d after conversion", at)
	}
}

// TestListpackExOrder checks the order Redis shows for a small hash with
// TTLs: fields with a TTL first, soonest first, then the others in
// insertion order.
func TestListpackExOrder(t *testing.T) {
	lim := DefaultLimits()
	h := New()
	for _, f := range []string{"a", "b", "c", "d", "e"} {
		h.Set(0, b(f), b("v"), lim)
	}
	order := func() string {
		s := ""
		h.Range(0, func(f, _ []byte) bool { s += string(f); return true })
		return s
	}
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, "abcde"},
		{func() { h.SetExpiry(0, b("d"), 500, CondNone) }, "dabce"},
		{func() { h.SetExpiry(0, b("b"), 300, CondNone) }, "bdace"},
		{func() { h.SetExpiry(0, b("e"), 300, CondNone) }, "ebdac"}, // equal expiry: before the existing one
		{func() { h.Set(0, b("a"), b("w"), lim) }, "ebdac"},         // no TTL: value changes in place
		{func() { h.Set(0, b("b"), b("w"), lim) }, "edacb"},         // TTL cleared: to the end
		{func() { h.SetKeepTTL(0, b("d"), b("w"), lim) }, "edacb"},
		{func() { h.Persist(0, b("e")) }, "dacbe"},
		{func() { h.SetWithExpiry(0, b("f"), b("v"), 400, lim) }, "fdacbe"},
		{func() { h.SetExpiry(0, b("d"), 200, CondNone) }, "dfacbe"},
		{func() { h.Delete(0, b("f")) }, "dacbe"},
		{func() { h.Set(0, b("g"), b("v"), lim) }, "dacbeg"},
	}
	for i, s := range steps {
		s.do()
		if got := order(); got != s.want {
			t.Fatalf("step %d: order %q, want %q", i, got, s.want)
		}
		checkInvariants(t, h)
	}
}

func TestExpiryEdgeCases(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			lim := enc.lim
			h := New()
			h.Set(100, b("f"), b("v"), lim)
			h.Set(100, b("g"), b("w"), lim)

			// Expiry exactly at now: invisible at that millisecond.
			if r := h.SetExpiry(100, b("f"), 150, CondNone); r != ExpireSet {
				t.Fatalf("SetExpiry = %d", r)
			}
			if at, ok := h.Expiry(100, b("f")); at != 150 || !ok {
				t.Fatalf("Expiry = %d,%v", at, ok)
			}
			if _, ok := h.Get(149, b("f")); !ok || h.Len(149) != 2 {
				t.Fatal("field gone before its time")
			}
			if _, ok := h.Get(150, b("f")); ok || h.Len(150) != 1 || h.Exists(150, b("f")) {
				t.Fatal("field visible at its expiry time")
			}
			if got := fields(h, 150); !slices.Equal(got, []string{"g=w"}) {
				t.Fatalf("Range at expiry: %q", got)
			}
			if _, ok := h.Expiry(150, b("f")); ok {
				t.Fatal("Expiry of an expired field")
			}
			if h.SetExpiry(150, b("f"), 999, CondNone) != ExpireNoField || h.Persist(150, b("f")) != PersistNoField {
				t.Fatal("expiry ops on an expired field")
			}
			if at, ok := h.NextExpiry(); !ok || at != 150 {
				t.Fatalf("NextExpiry = %d,%v before reclaim", at, ok)
			}
			var gone []string
			if n := h.ExpireFields(150, 10, func(f []byte) { gone = append(gone, string(f)) }); n != 1 || !slices.Equal(gone, []string{"f"}) {
				t.Fatalf("ExpireFields = %d %q", n, gone)
			}
			if _, ok := h.NextExpiry(); ok {
				t.Fatal("NextExpiry after reclaim")
			}
			checkInvariants(t, h)

			// TTL cleared by Set, kept by SetKeepTTL.
			h.SetExpiry(200, b("g"), 300, CondNone)
			h.SetKeepTTL(200, b("g"), b("w2"), lim)
			if at, _ := h.Expiry(200, b("g")); at != 300 {
				t.Fatalf("keep-TTL lost the TTL: %d", at)
			}
			h.SetKeepTTL(200, b("g"), b("w3"), lim) // same length: in place
			if at, _ := h.Expiry(200, b("g")); at != 300 {
				t.Fatalf("keep-TTL in place lost the TTL: %d", at)
			}
			h.Set(200, b("g"), b("w4"), lim)
			if at, ok := h.Expiry(200, b("g")); at != 0 || !ok {
				t.Fatalf("Set kept the TTL: %d", at)
			}
			if _, ok := h.NextExpiry(); ok {
				t.Fatal("NextExpiry after the TTL was cleared")
			}
			if v, ok := h.Get(10_000, b("g")); !ok || string(v) != "w4" {
				t.Fatal("field expired after Set cleared its TTL")
			}
			checkInvariants(t, h)

			// Writes to an expired, unreclaimed field see it as absent.
			h.SetExpiry(200, b("g"), 250, CondNone)
			if !h.SetKeepTTL(300, b("g"), b("new"), lim) {
				t.Fatal("SetKeepTTL on an expired field: not created")
			}
			if at, _ := h.Expiry(300, b("g")); at != 0 {
				t.Fatalf("re-created field inherited the old TTL %d", at)
			}
			h.SetExpiry(300, b("g"), 350, CondNone)
			if !h.Set(400, b("g"), b("n2"), lim) {
				t.Fatal("Set on an expired field: not created")
			}
			h.SetExpiry(400, b("g"), 450, CondNone)
			if !h.SetNX(500, b("g"), b("n3"), lim) {
				t.Fatal("SetNX on an expired field refused")
			}
			h.SetExpiry(500, b("g"), 550, CondNone)
			if h.Delete(600, b("g")) {
				t.Fatal("Delete of an expired field reported it live")
			}
			if h.Len(600) != 0 || h.ExpireFields(600, 10, nil) != 0 {
				t.Fatal("Delete left the expired field behind")
			}
			checkInvariants(t, h)

			// Deleting the last live field while an expired one remains.
			h.Set(700, b("x"), b("1"), lim)
			h.Set(700, b("y"), b("2"), lim)
			h.SetExpiry(700, b("x"), 710, CondNone)
			h.Delete(720, b("y"))
			if h.Len(720) != 0 || len(fields(h, 720)) != 0 {
				t.Fatal("expired field still counted")
			}
			if h.ExpireFields(720, 10, nil) != 1 || h.Len(0) != 0 {
				t.Fatal("expired field not reclaimed")
			}
			checkInvariants(t, h)

			// SetExpiry at or before now deletes.
			h.Set(800, b("z"), b("1"), lim)
			if r := h.SetExpiry(800, b("z"), 800, CondNone); r != ExpireDeleted || h.Exists(800, b("z")) || h.Len(0) != 0 {
				t.Fatalf("SetExpiry(now) = %d", r)
			}
			// SetWithExpiry at or before now deletes, and no expiry is Set.
			h.Set(800, b("z"), b("1"), lim)
			if h.SetWithExpiry(800, b("z"), b("2"), 799, lim) || h.Exists(800, b("z")) {
				t.Fatal("SetWithExpiry in the past kept the field")
			}
			if !h.SetWithExpiry(800, b("z"), b("2"), 0, lim) {
				t.Fatal("SetWithExpiry(0) did not create")
			}
			if at, _ := h.Expiry(800, b("z")); at != 0 {
				t.Fatal("SetWithExpiry(0) set a TTL")
			}
			if h.SetWithExpiry(800, b("z"), b("3"), 900, lim) {
				t.Fatal("SetWithExpiry on a live field reported created")
			}
			if at, _ := h.Expiry(800, b("z")); at != 900 {
				t.Fatal("SetWithExpiry did not set the TTL")
			}
			checkInvariants(t, h)
		})
	}
}

func TestExpireConditions(t *testing.T) {
	const now = 1000
	cases := []struct {
		old  int64 // 0: no TTL
		at   int64
		cond Cond
		want ExpireResult
	}{
		{0, 2000, CondNone, ExpireSet},
		{0, 2000, CondNX, ExpireSet},
		{0, 2000, CondXX, ExpireNotSet},
		{0, 2000, CondGT, ExpireNotSet}, // no TTL = infinite
		{0, 2000, CondLT, ExpireSet},
		{1500, 2000, CondNX, ExpireNotSet},
		{1500, 2000, CondXX, ExpireSet},
		{1500, 2000, CondGT, ExpireSet},
		{1500, 1500, CondGT, ExpireNotSet},
		{1500, 1200, CondGT, ExpireNotSet},
		{1500, 1200, CondLT, ExpireSet},
		{1500, 1500, CondLT, ExpireNotSet},
		{1500, 1500, CondNone, ExpireSet},
		{1500, 900, CondLT, ExpireDeleted},
		{1500, 900, CondGT, ExpireNotSet}, // the condition is checked first
		{0, 1000, CondNone, ExpireDeleted},
		{0, 1000, CondXX, ExpireNotSet},
	}
	for _, enc := range encodings {
		for _, c := range cases {
			h := New()
			h.Set(now, b("f"), b("v"), enc.lim)
			h.Set(now, b("other"), b("v"), enc.lim)
			if c.old != 0 {
				h.SetExpiry(now, b("f"), c.old, CondNone)
			}
			got := h.SetExpiry(now, b("f"), c.at, c.cond)
			if got != c.want {
				t.Errorf("%s: old %d, at %d, cond %d: got %d want %d", enc.name, c.old, c.at, c.cond, got, c.want)
			}
			at, exists := h.Expiry(now, b("f"))
			switch c.want {
			case ExpireSet:
				if at != c.at {
					t.Errorf("%s: expiry %d after set to %d", enc.name, at, c.at)
				}
			case ExpireNotSet:
				if at != c.old {
					t.Errorf("%s: expiry changed to %d on a failed condition", enc.name, at)
				}
			case ExpireDeleted:
				if exists {
					t.Errorf("%s: field kept after a past expiry", enc.name)
				}
			}
			if h.SetExpiry(now, b("missing"), 5000, c.cond) != ExpireNoField {
				t.Errorf("%s: missing field", enc.name)
			}
			checkInvariants(t, h)
		}
	}
}

func TestPersist(t *testing.T) {
	for _, enc := range encodings {
		h := New()
		h.Set(0, b("f"), b("v"), enc.lim)
		h.Set(0, b("g"), b("v"), enc.lim)
		if r := h.Persist(0, b("f")); r != PersistNoTTL {
			t.Errorf("%s: Persist without TTL = %d", enc.name, r)
		}
		if r := h.Persist(0, b("nope")); r != PersistNoField {
			t.Errorf("%s: Persist of missing = %d", enc.name, r)
		}
		h.SetExpiry(0, b("f"), 100, CondNone)
		h.SetExpiry(0, b("g"), 200, CondNone)
		if r := h.Persist(0, b("f")); r != Persisted {
			t.Errorf("%s: Persist = %d", enc.name, r)
		}
		if at, ok := h.NextExpiry(); !ok || at != 200 {
			t.Errorf("%s: NextExpiry after persisting the soonest = %d,%v", enc.name, at, ok)
		}
		if _, ok := h.Get(1000, b("f")); !ok {
			t.Errorf("%s: persisted field expired", enc.name)
		}
		if h.Len(1000) != 1 {
			t.Errorf("%s: Len %d", enc.name, h.Len(1000))
		}
		checkInvariants(t, h)
	}
}

func TestExpireFieldsMaxAndOrder(t *testing.T) {
	for _, enc := range encodings {
		h := New()
		for i := range 20 {
			h.SetWithExpiry(0, fmt.Appendf(nil, "f%02d", i), b("v"), int64(100+(i*7)%20), enc.lim)
		}
		h.Set(0, b("keep"), b("v"), enc.lim)
		var got []string
		n := h.ExpireFields(110, 4, func(f []byte) { got = append(got, string(f)) })
		// Expiries 100..110 belong to 11 fields; the 4 soonest go first.
		if n != 4 || !slices.Equal(got, []string{"f00", "f03", "f06", "f09"}) {
			t.Errorf("%s: ExpireFields = %d %q", enc.name, n, got)
		}
		if h.Len(110) != 21-11 {
			t.Errorf("%s: Len %d", enc.name, h.Len(110))
		}
		if at, _ := h.NextExpiry(); at != 104 {
			t.Errorf("%s: NextExpiry %d", enc.name, at)
		}
		if n := h.ExpireFields(110, 100, nil); n != 7 {
			t.Errorf("%s: second ExpireFields = %d", enc.name, n)
		}
		if n := h.ExpireFields(1000, 100, nil); n != 9 || h.Len(0) != 1 {
			t.Errorf("%s: final ExpireFields = %d, Len %d", enc.name, n, h.Len(0))
		}
		if _, ok := h.NextExpiry(); ok {
			t.Errorf("%s: NextExpiry with no TTLs left", enc.name)
		}
		checkInvariants(t, h)
	}
}

func TestScanSmallIsOneStep(t *testing.T) {
	h := New()
	for i := range 10 {
		h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), DefaultLimits())
	}
	n := 0
	if cur := h.Scan(0, 0, 2, func(_, _ []byte) { n++ }); cur != 0 || n != 10 {
		t.Errorf("Scan of a small hash: cursor %d, %d fields", cur, n)
	}
}

func TestScanLarge(t *testing.T) {
	h := New()
	lim := Limits{0, 0}
	for i := range 5000 {
		h.Set(0, fmt.Appendf(nil, "field:%d", i), b("v"), lim)
	}
	for i := range 5000 {
		if i%3 == 0 {
			h.SetExpiry(0, fmt.Appendf(nil, "field:%d", i), 50, CondNone)
		}
	}
	seen := map[string]int{}
	steps := 0
	for cur := uint64(0); ; {
		cur = h.Scan(100, cur, 100, func(f, _ []byte) { seen[string(f)]++ })
		steps++
		if cur == 0 {
			break
		}
	}
	if len(seen) != h.Len(100) {
		t.Fatalf("scan saw %d fields, Len %d", len(seen), h.Len(100))
	}
	for f, n := range seen {
		if n != 1 {
			t.Fatalf("%q seen %d times", f, n)
		}
	}
	if steps < 20 || steps > 80 {
		t.Errorf("%d steps for 3333 fields at count 100", steps)
	}
}

func TestRandom(t *testing.T) {
	for _, enc := range encodings {
		h := New()
		r := rand.New(rand.NewPCG(1, 2))
		if _, _, ok := h.RandomField(0, r); ok {
			t.Fatal("RandomField of an empty hash")
		}
		for i := range 10 {
			h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), enc.lim)
		}
		for i := range 5 {
			h.SetExpiry(0, fmt.Appendf(nil, "f%d", i), 10, CondNone)
		}
		// At 10 only f5..f9 are live; each should come up about 1/5 of the time.
		counts := map[string]int{}
		for range 5000 {
			f, _, ok := h.RandomField(10, r)
			if !ok {
				t.Fatal("RandomField found nothing")
			}
			counts[string(f)]++
		}
		for i := 5; i < 10; i++ {
			if c := counts[fmt.Sprintf("f%d", i)]; c < 850 || c > 1150 {
				t.Errorf("%s: f%d picked %d times of 5000", enc.name, i, c)
			}
		}
		if len(counts) != 5 {
			t.Errorf("%s: picked %v", enc.name, counts)
		}
		var all []string
		h.RandomFields(10, 100, false, r, func(f, _ []byte) { all = append(all, string(f)) })
		if !slices.Equal(all, []string{"f5", "f6", "f7", "f8", "f9"}) && enc.want == EncListpack {
			t.Errorf("%s: RandomFields(all) = %q", enc.name, all)
		}
		if len(all) != 5 {
			t.Errorf("%s: RandomFields(all) = %q", enc.name, all)
		}
		n := 0
		h.RandomFields(10, 12, true, nil, func(_, _ []byte) { n++ })
		if n != 12 {
			t.Errorf("%s: RandomFields with repeat gave %d", enc.name, n)
		}
	}
}

// TestRandomMostlyExpired exercises the fallback of the large form's random
// pick when nearly every slot holds an expired field.
func TestRandomMostlyExpired(t *testing.T) {
	h := New()
	lim := Limits{0, 0}
	for i := range 2000 {
		h.SetWithExpiry(0, fmt.Appendf(nil, "f%d", i), b("v"), 10, lim)
	}
	h.Set(0, b("live"), b("v"), lim)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f, _, ok := h.RandomField(10, r)
		if !ok || string(f) != "live" {
			t.Fatalf("RandomField = %q,%v", f, ok)
		}
	}
	h.Delete(10, b("live"))
	if _, _, ok := h.RandomField(10, r); ok {
		t.Fatal("RandomField found an expired field")
	}
}

// TestStaleHeapRebuild persists many fields so that the heap fills with
// stale entries and is rebuilt.
func TestStaleHeapRebuild(t *testing.T) {
	h := New()
	lim := Limits{0, 0}
	for i := range 1000 {
		h.SetWithExpiry(0, fmt.Appendf(nil, "f%d", i), b("v"), int64(1000+i), lim)
	}
	for i := range 990 {
		h.Persist(0, fmt.Appendf(nil, "f%d", i))
	}
	if len(h.tab().heap) > 2*10+64 {
		t.Errorf("heap of %d entries for 10 TTLs", len(h.tab().heap))
	}
	if at, _ := h.NextExpiry(); at != 1990 {
		t.Errorf("NextExpiry %d", at)
	}
	checkInvariants(t, h)
}

func TestHomeBeyondTag(t *testing.T) {
	h := New()
	for i := range 100 {
		h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), Limits{})
	}
	tb := h.tab()
	for _, s := range tb.slots {
		if s == 0 {
			continue
		}
		hv := hashOf(tb.field(tb.rec(slotOff(s))))
		for bits := uint(minSlotBits); bits <= 40; bits++ {
			if got, want := tb.home(s, bits), int(hv>>(64-bits)); got != want {
				t.Fatalf("home(%d bits) = %d, want %d", bits, got, want)
			}
		}
	}
}

func TestMemoryUsageGrows(t *testing.T) {
	for _, enc := range encodings {
		h := New()
		prev := h.MemoryUsage()
		for i := range 200 {
			h.Set(0, fmt.Appendf(nil, "field-%d", i), b("some value"), enc.lim)
		}
		if got := h.MemoryUsage(); got < prev+200*20 {
			t.Errorf("%s: MemoryUsage %d after 200 fields", enc.name, got)
		}
	}
}

// TestCompaction rewrites values of changing length until the arena is
// compacted, and checks nothing is lost and the arena stays bounded.
func TestCompaction(t *testing.T) {
	h := New()
	lim := Limits{0, 0}
	const n = 500
	for i := range n {
		h.Set(0, fmt.Appendf(nil, "f%d", i), b("v"), lim)
	}
	for round := range 20 {
		val := make([]byte, 1+round%5)
		for i := range n {
			h.SetKeepTTL(0, fmt.Appendf(nil, "f%d", i), val, lim)
			if i%50 == 0 {
				h.SetExpiry(0, fmt.Appendf(nil, "f%d", i), int64(1000+round), CondNone)
			}
		}
		checkInvariants(t, h)
	}
	if h.Len(0) != n {
		t.Fatalf("Len %d", h.Len(0))
	}
	live := 0
	h.Range(0, func(f, v []byte) bool { live += len(f) + len(v) + 3; return true })
	if len(h.tab().arena) > 2*live+8*n {
		t.Errorf("arena %d bytes for %d live bytes", len(h.tab().arena), live)
	}
	for i := range n {
		if v, _ := h.Get(0, fmt.Appendf(nil, "f%d", i)); len(v) != 5 {
			t.Fatalf("f%d = %q", i, v)
		}
	}
}
