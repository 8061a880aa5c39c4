package commands_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Randomized differential streams of set commands against redis-server 7.0:
// a few keys, members that are integers, almost-integers ("-0", "01"),
// strings, long and binary strings, and limits that change under the sets'
// feet, so that every encoding and conversion is crossed many times.
//
// Replies are byte-compared where Redis's order is deterministic (intsets)
// and compared as collections where it comes from a hash table. Random
// picks (SPOP, SRANDMEMBER) are checked for their properties against a
// model, and after a random SPOP both servers are brought back to the same
// content. The dirty counter and keyspace hits and misses are compared
// after every command, and OBJECT ENCODING of the keys a command wrote.

const sxStreamLen = 3500

func TestSetsStreamLike70(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			sxStream(t, true, seed, sxStreamLen)
		})
	}
}

// TestSetsStreamListpack runs with Abacus's default listpack encoding (and
// Abacus-only changes of its limits), which Redis 7.0 does not have: the
// replies must still agree, with "listpack" standing for "hashtable".
func TestSetsStreamListpack(t *testing.T) {
	sxStream(t, false, 3, sxStreamLen)
}

type sxGen struct {
	t       *testing.T
	d       *servertest.Diff
	r       *rand.Rand
	like70  bool
	model   map[string]map[string]bool // the set keys' members
	intsets int                        // set-max-intset-entries now
	dc      *skDirtyCheck
	sent    int
}

var sxKeys = []string{"s0", "s1", "s2", "s3", "d"}

func (g *sxGen) key() string {
	if g.r.IntN(40) == 0 {
		return "str" // a string: WRONGTYPE
	}
	if g.r.IntN(30) == 0 {
		return "nosuch"
	}
	return sxKeys[g.r.IntN(len(sxKeys))]
}

func (g *sxGen) keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.key()
	}
	return out
}

func (g *sxGen) member() string {
	switch x := g.r.IntN(100); {
	case x < 45:
		return strconv.Itoa(g.r.IntN(40))
	case x < 55:
		return strconv.Itoa(-1 - g.r.IntN(10))
	case x < 58:
		return []string{"9223372036854775807", "-9223372036854775808", "9223372036854775808", "4294967296", "-4294967297"}[g.r.IntN(5)]
	case x < 65:
		return []string{"-0", "01", "+3", "1.5", " 2", "0x1", "", "00"}[g.r.IntN(8)]
	case x < 94:
		return string(rune('a' + g.r.IntN(8)))
	case x < 97:
		return strings.Repeat("L", 60+g.r.IntN(10))
	}
	return "b\x00" + strconv.Itoa(g.r.IntN(3))
}

func (g *sxGen) members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.member()
	}
	return out
}

// do runs one command on both servers and checks the counters after it.
func (g *sxGen) do(ordered bool, args ...string) string {
	g.t.Helper()
	a := sxDo(g.t, g.d, ordered, args...)
	g.dc.check(g.t, g.d, strings.Join(args, " "))
	g.sent++
	return a
}

// enc is the Redis encoding of key as both servers report it.
func (g *sxGen) enc(key string) string {
	g.t.Helper()
	e := sxEncoding(g.t, g.d, g.like70, key)
	g.dc.check(g.t, g.d, "OBJECT ENCODING "+key)
	g.sent++
	return e
}

// allIntset reports whether every existing key among keys is an intset.
func (g *sxGen) allIntset(keys []string) bool {
	ok := true
	for _, k := range keys {
		if e := g.enc(k); e != "" && e != "intset" {
			ok = false
		}
	}
	return ok
}

// isSet reports whether key holds a set in the model.
func (g *sxGen) isSet(key string) bool { return len(g.model[key]) > 0 }

func (g *sxGen) wrongType(keys ...string) bool {
	return slices.Contains(keys, "str")
}

func (g *sxGen) put(key string, ms map[string]bool) {
	if len(ms) == 0 {
		delete(g.model, key)
		return
	}
	g.model[key] = ms
}

// contentIntset reports whether a set built from scratch with members ms
// would be an intset in Redis 7.0.
func (g *sxGen) contentIntset(ms map[string]bool) bool {
	if len(ms) > g.intsets {
		return false
	}
	for m := range ms {
		if !sxIsIntMember(m) {
			return false
		}
	}
	return true
}

func sxStream(t *testing.T, like70 bool, seed uint64, n int) {
	d, _ := sxDiff(t, like70)
	g := &sxGen{t: t, d: d, r: rand.New(rand.NewPCG(seed, 77)), like70: like70,
		model: map[string]map[string]bool{}, intsets: 8}
	sxIntsetLimit(t, d, g.intsets)
	d.Do("SET", "str", "v")
	g.dc = newSkDirtyCheck(t, d)
	for g.sent < n && !t.Failed() {
		g.step()
	}
	// The model and both servers agree at the end.
	for _, k := range sxKeys {
		raw := g.do(false, "SMEMBERS", k)
		got := sxMembers(t, raw)
		if want := slices.Sorted(maps.Keys(g.model[k])); !slices.Equal(sxSorted(got), want) {
			t.Errorf("%s: servers hold %q, model %q", k, sxSorted(got), want)
		}
	}
	t.Logf("seed %d like70=%v: %d commands compared", seed, like70, g.sent)
}

func (g *sxGen) step() {
	r := g.r
	switch x := r.IntN(100); {
	case x < 2:
		g.intsets = []int{2, 5, 8, 16, 512}[r.IntN(5)]
		g.do(true, "CONFIG", "SET", "set-max-intset-entries", strconv.Itoa(g.intsets))
		if !g.like70 {
			// Abacus's own listpack limits; redis-server 7.0 has none.
			g.d.A.Do("CONFIG", "SET", "set-max-listpack-entries", []string{"3", "8", "128"}[r.IntN(3)],
				"set-max-listpack-value", []string{"4", "64"}[r.IntN(2)])
		}
	case x < 22:
		k := g.key()
		ms := g.members(1 + r.IntN(4))
		if r.IntN(15) == 0 {
			for i := 0; i < 20; i++ {
				ms = append(ms, strconv.Itoa(r.IntN(200)-50))
			}
		}
		g.do(true, append([]string{"SADD", k}, ms...)...)
		if !g.wrongType(k) {
			set := g.model[k]
			if set == nil {
				set = map[string]bool{}
			}
			for _, m := range ms {
				set[m] = true
			}
			g.put(k, set)
			g.enc(k)
		}
	case x < 32:
		k := g.key()
		ms := g.members(1 + r.IntN(4))
		g.do(true, append([]string{"SREM", k}, ms...)...)
		if set := g.model[k]; set != nil && !g.wrongType(k) {
			for _, m := range ms {
				delete(set, m)
			}
			g.put(k, set)
			g.enc(k)
		}
	case x < 40:
		k := g.key()
		switch r.IntN(3) {
		case 0:
			g.do(true, "SISMEMBER", k, g.member())
		case 1:
			g.do(true, append([]string{"SMISMEMBER", k}, g.members(1+r.IntN(4))...)...)
		default:
			g.do(true, "SCARD", k)
		}
	case x < 46:
		k := g.key()
		g.do(g.allIntset([]string{k}), "SMEMBERS", k)
	case x < 52:
		src, dst, m := g.key(), g.key(), g.member()
		if r.IntN(2) == 0 && g.isSet(src) {
			// A member that is there, most of the time.
			m = slices.Sorted(maps.Keys(g.model[src]))[r.IntN(len(g.model[src]))]
		}
		g.do(true, "SMOVE", src, dst, m)
		if g.isSet(src) && !g.wrongType(src, dst) && g.model[src][m] && src != dst {
			delete(g.model[src], m)
			g.put(src, g.model[src])
			set := g.model[dst]
			if set == nil {
				set = map[string]bool{}
			}
			set[m] = true
			g.put(dst, set)
			g.enc(src)
			g.enc(dst)
		}
	case x < 62:
		g.algebra()
	case x < 66:
		keys := g.keys(1 + r.IntN(3))
		args := append([]string{"SINTERCARD", strconv.Itoa(len(keys))}, keys...)
		if r.IntN(2) == 0 {
			args = append(args, "LIMIT", strconv.Itoa(r.IntN(6)))
		}
		g.do(true, args...)
	case x < 76:
		g.srandmember()
	case x < 86:
		g.spop()
	case x < 92:
		g.sscan()
	default:
		k := g.key()
		switch r.IntN(4) {
		case 0:
			g.enc(k)
		case 1:
			g.do(true, "TYPE", k)
		case 2:
			g.do(true, "EXISTS", k)
		default:
			if k != "str" && r.IntN(3) == 0 {
				g.do(true, "DEL", k)
				delete(g.model, k)
			}
		}
	}
}

// algebra runs SINTER, SUNION or SDIFF, as a STORE into a set key or as a
// reply. The STORE form runs first into a scratch key, whose encoding tells
// whether Redis's reply is in intset order.
func (g *sxGen) algebra() {
	r := g.r
	op := []string{"SINTER", "SUNION", "SDIFF"}[r.IntN(3)]
	keys := g.keys(1 + r.IntN(3))
	result := g.compute(op, keys)
	if r.IntN(2) == 0 {
		dst := sxKeys[r.IntN(len(sxKeys))]
		g.do(true, append([]string{op + "STORE", dst}, keys...)...)
		if !g.wrongType(keys...) {
			g.put(dst, result)
			g.enc(dst)
		}
		return
	}
	ordered := true
	if !g.wrongType(keys...) {
		g.do(true, append([]string{op + "STORE", "tmp"}, keys...)...)
		e := g.enc("tmp")
		g.do(true, "DEL", "tmp")
		// SINTER replies in the order of its smallest input, the others in
		// the order of the result.
		ordered = e == "" || e == "intset"
		if op == "SINTER" && len(result) > 0 {
			ordered = g.allIntset(keys)
		}
	}
	raw := g.do(ordered, append([]string{op}, keys...)...)
	if !g.wrongType(keys...) {
		if got := sxSorted(sxMembers(g.t, raw)); !slices.Equal(got, slices.Sorted(maps.Keys(result))) {
			g.t.Errorf("%s %q: %q, model says %q", op, keys, got, slices.Sorted(maps.Keys(result)))
		}
	}
}

// compute is the model's answer to op over keys (ignoring WRONGTYPE).
func (g *sxGen) compute(op string, keys []string) map[string]bool {
	out := map[string]bool{}
	switch op {
	case "SUNION":
		for _, k := range keys {
			for m := range g.model[k] {
				out[m] = true
			}
		}
	case "SINTER":
		for m := range g.model[keys[0]] {
			in := true
			for _, k := range keys[1:] {
				in = in && g.model[k][m]
			}
			if in {
				out[m] = true
			}
		}
	case "SDIFF":
		for m := range g.model[keys[0]] {
			in := false
			for _, k := range keys[1:] {
				in = in || g.model[k][m]
			}
			if !in {
				out[m] = true
			}
		}
	}
	return out
}

func (g *sxGen) srandmember() {
	r := g.r
	k := g.key()
	set := g.model[k]
	if g.wrongType(k) || len(set) == 0 {
		g.do(true, "SRANDMEMBER", k)
		return
	}
	if r.IntN(4) == 0 {
		a, rr := g.both("SRANDMEMBER", k)
		for _, raw := range []string{a, rr} {
			if !set[sxBulk(g.t, raw)] {
				g.t.Errorf("SRANDMEMBER %s: %q is not a member", k, raw)
			}
		}
		return
	}
	count := r.IntN(2*len(set)+2) - len(set) - 1
	if count > 0 && count >= len(set) {
		// The whole set, in the set's order.
		g.do(g.allIntset([]string{k}), "SRANDMEMBER", k, strconv.Itoa(count))
		return
	}
	a, rr := g.both("SRANDMEMBER", k, strconv.Itoa(count))
	for _, raw := range []string{a, rr} {
		ms := sxMembers(g.t, raw)
		want := count
		if count < 0 {
			want = -count
		}
		if !strings.HasPrefix(raw, "*") || len(ms) != want {
			g.t.Errorf("SRANDMEMBER %s %d: %q", k, count, raw)
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if !set[m] || count > 0 && seen[m] {
				g.t.Errorf("SRANDMEMBER %s %d: %q not a member or repeated in %q", k, count, m, raw)
			}
			seen[m] = true
		}
	}
}

// both sends a command whose reply is random to both servers and returns
// the two replies, comparing only the counters.
func (g *sxGen) both(args ...string) (string, string) {
	g.t.Helper()
	req := servertest.Encode(args...)
	g.d.A.Write(req)
	g.d.R.Write(req)
	a, r := g.d.A.Read(), g.d.R.Read()
	g.dc.check(g.t, g.d, strings.Join(args, " "))
	g.sent++
	return a, r
}

func (g *sxGen) spop() {
	r := g.r
	k := g.key()
	set := g.model[k]
	withCount := r.IntN(3) > 0
	count := 1
	if withCount {
		count = r.IntN(len(set) + 3)
	}
	if g.wrongType(k) || len(set) == 0 || count == 0 {
		args := []string{"SPOP", k}
		if withCount {
			args = append(args, strconv.Itoa(count))
		}
		g.do(true, args...)
		return
	}
	if count >= len(set) {
		// Everything: the set's content, in a fresh set's order.
		args := []string{"SPOP", k}
		if withCount {
			args = append(args, strconv.Itoa(count))
		}
		g.do(!withCount || g.contentIntset(set), args...)
		delete(g.model, k)
		return
	}
	var a, rr string
	if withCount {
		a, rr = g.both("SPOP", k, strconv.Itoa(count))
	} else {
		a, rr = g.both("SPOP", k)
	}
	for _, raw := range []string{a, rr} {
		var ms []string
		if withCount {
			ms = sxMembers(g.t, raw)
			if raw[0] != '*' || len(ms) != count {
				g.t.Errorf("SPOP %s %d: %q", k, count, raw)
			}
		} else {
			ms = []string{sxBulk(g.t, raw)}
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if !set[m] || seen[m] {
				g.t.Errorf("SPOP %s: %q not a member or repeated in %q", k, m, raw)
			}
			seen[m] = true
		}
	}
	// Each server's encoding now: when most members went, Redis rebuilt the
	// set from those that stay, so the encoding follows their content;
	// otherwise popping converted nothing.
	rebuilt := (len(set)-count)*5 <= count
	for i, c := range []*servertest.Conn{g.d.A, g.d.R} {
		raw := []string{a, rr}[i]
		kept := maps.Clone(set)
		if withCount {
			for _, m := range sxMembers(g.t, raw) {
				delete(kept, m)
			}
		} else {
			delete(kept, sxBulk(g.t, raw))
		}
		e := c.Do("OBJECT", "ENCODING", k)
		switch {
		case !rebuilt:
			// checked below against the other server, after the resync
		case g.contentIntset(kept) && e != "$6\r\nintset\r\n",
			!g.contentIntset(kept) && e == "$6\r\nintset\r\n":
			g.t.Errorf("server %d: SPOP %s %d left %v encoded %q", i, k, count, kept, e)
		}
	}
	g.dc.check(g.t, g.d, "OBJECT ENCODING after SPOP")
	if !rebuilt {
		g.enc(k)
	}
	// The servers popped different members: give both the same content
	// again, the set less count members the generator picks, so that the
	// stream stays a function of its seed.
	sorted := slices.Sorted(maps.Keys(set))
	g.r.Shuffle(len(sorted), func(i, j int) { sorted[i], sorted[j] = sorted[j], sorted[i] })
	for _, m := range sorted[:count] {
		delete(set, m)
	}
	g.put(k, set)
	g.do(true, "DEL", k)
	if len(set) > 0 {
		g.do(true, append([]string{"SADD", k}, slices.Sorted(maps.Keys(set))...)...)
	}
	g.enc(k)
}

func (g *sxGen) sscan() {
	r := g.r
	k := g.key()
	var extra []string
	if r.IntN(2) == 0 {
		extra = append(extra, "COUNT", strconv.Itoa(1+r.IntN(5)))
	}
	if r.IntN(3) == 0 {
		extra = append(extra, "MATCH", []string{"1*", "*a*", "?", "-*", "[a-c]"}[r.IntN(5)])
	}
	if g.wrongType(k) || !g.isSet(k) || g.allIntset([]string{k}) {
		g.do(true, append([]string{"SSCAN", k, "0"}, extra...)...)
		return
	}
	// A hash table: the walk differs, what it returns does not.
	a, _ := sxScanAll(g.t, g.d.A, k, extra...)
	rr, _ := sxScanAll(g.t, g.d.R, k, extra...)
	if !maps.Equal(a, rr) {
		g.t.Errorf("SSCAN %s %q: abacus %v, redis %v", k, extra, a, rr)
	}
	g.sent += 2
	// The two walks took different numbers of calls: start counting again.
	g.dc = newSkDirtyCheck(g.t, g.d)
}

// sxBulk decodes a bulk string reply.
func sxBulk(t testing.TB, raw string) string {
	t.Helper()
	v, err := servertest.Parse(raw)
	if err != nil || v.Kind != '$' || v.Null {
		t.Fatalf("expected a bulk string, got %q (%v)", raw, err)
	}
	return v.Str
}
