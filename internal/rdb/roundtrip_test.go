package rdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// describe renders an object's value and encoding for comparison.
func describe(o *keyspace.Object, now int64) string {
	switch o.Type {
	case keyspace.TypeString:
		return fmt.Sprintf("string enc=%d %q", o.Enc, o.Bytes(nil))
	case keyspace.TypeList:
		l := o.Val().(*list.List)
		var es []string
		for _, v := range l.All() {
			es = append(es, string(v))
		}
		return fmt.Sprintf("list %s %q", l.Encoding(), es)
	case keyspace.TypeSet:
		s := o.Val().(*set.Set)
		var ms []string
		for m := range s.All() {
			ms = append(ms, string(m))
		}
		slices.Sort(ms)
		return fmt.Sprintf("set %s %q", s.Encoding(), ms)
	case keyspace.TypeZSet:
		z := o.Val().(*zset.Set)
		var es []string
		for m, f := range z.All() {
			es = append(es, m+"="+strconv.FormatFloat(f, 'g', -1, 64))
		}
		return fmt.Sprintf("zset %s %q", z.Encoding(), es)
	case keyspace.TypeHash:
		h := o.Val().(*hash.Hash)
		var fs []string
		h.RangeWithExpiry(now, func(f, v []byte, at int64) bool {
			fs = append(fs, fmt.Sprintf("%s=%s@%d", f, v, at))
			return true
		})
		slices.Sort(fs)
		return fmt.Sprintf("hash %s %q", h.Encoding(), fs)
	case keyspace.TypeTimeSeries:
		return describeSeries(o.Val().(*ts.Series))
	}
	return "?"
}

type valueGen struct {
	r   *rand.Rand
	opt Options
	now int64
}

func (g *valueGen) str() []byte {
	switch g.r.IntN(6) {
	case 0:
		return strconv.AppendInt(nil, g.r.Int64N(1<<40)-1<<39, 10)
	case 1:
		return strconv.AppendInt(nil, int64(g.r.IntN(300))-150, 10)
	case 2:
		return []byte{}
	}
	// around the 64-byte value threshold, sometimes long
	n := g.r.IntN(70)
	if g.r.IntN(20) == 0 {
		n = g.r.IntN(5000)
	}
	b := make([]byte, n)
	alpha := 2 + g.r.IntN(60)
	for i := range b {
		b[i] = byte('!' + g.r.IntN(alpha))
	}
	return b
}

// size is a count around the 128 and 512 thresholds.
func (g *valueGen) size() int {
	switch g.r.IntN(4) {
	case 0:
		return 1 + g.r.IntN(10)
	case 1:
		return 120 + g.r.IntN(20)
	case 2:
		return 505 + g.r.IntN(15)
	}
	return 1 + g.r.IntN(1000)
}

func (g *valueGen) object() *keyspace.Object {
	switch g.r.IntN(5) {
	case 0:
		return keyspace.NewString(g.str())
	case 1:
		l := list.New(g.opt.ListFill)
		for n := g.size(); n > 0; n-- {
			l.PushBack(g.str())
		}
		return keyspace.NewValue(keyspace.TypeList, l)
	case 2:
		s := set.New()
		ints := g.r.IntN(2) == 0
		for n := g.size(); n > 0; n-- {
			if ints {
				s.AddInt(g.opt.Set, g.r.Int64N(1<<33)-1<<32)
			} else {
				s.Add(g.opt.Set, g.str())
			}
		}
		return keyspace.NewValue(keyspace.TypeSet, s)
	case 3:
		m := map[string]float64{}
		for n := g.size(); n > 0; n-- {
			var f float64
			switch g.r.IntN(5) {
			case 0:
				f = float64(g.r.IntN(1000) - 500)
			case 1:
				f = math.Inf(1 - 2*g.r.IntN(2))
			case 2:
				f = float64(g.r.Int64N(1 << 62))
			default:
				f = g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(40)-20))
			}
			m[string(g.str())] = f
		}
		return keyspace.NewValue(keyspace.TypeZSet, zset.FromMap(m, g.opt.ZSet))
	}
	o, h := keyspace.NewHash()
	ttls := g.r.IntN(3) == 0
	for n := g.size(); n > 0; n-- {
		f, v := g.str(), g.str()
		if ttls && g.r.IntN(2) == 0 {
			h.SetWithExpiry(g.now, f, v, g.now+1+g.r.Int64N(1e9), g.opt.Hash)
		} else {
			h.Set(g.now, f, v, g.opt.Hash)
		}
	}
	return o
}

func TestValueRoundTrip(t *testing.T) {
	const now = 1_700_000_000_000
	g := &valueGen{r: rand.New(rand.NewPCG(7, 11)), opt: DefaultOptions(), now: now}
	g.opt.Now = now
	seen := map[byte]int{}
	for i := 0; i < 300; i++ {
		o := g.object()
		want := describe(o, now)
		for _, compress := range []bool{false, true} {
			b, typ, err := AppendValue(nil, o, EncodeOptions{Compress: compress, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			seen[typ]++
			back, n, err := DecodeValue(typ, b, g.opt)
			if err != nil {
				t.Fatalf("value %d (type %d): %v\n%.300s", i, typ, err, want)
			}
			if n != len(b) {
				t.Fatalf("value %d: decoded %d of %d bytes", i, n, len(b))
			}
			if got := describe(back, now); got != want && !shrunk(got, want) {
				t.Fatalf("value %d (type %d, compress %v):\ngot  %.500s\nwant %.500s", i, typ, compress, got, want)
			}
			// Dump/Restore wrap the same bytes.
			p, err := Dump(o, EncodeOptions{Compress: compress, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			back, err = Restore(p, g.opt)
			if got := describe(back, now); err != nil || got != want && !shrunk(got, want) {
				t.Fatalf("value %d: Dump/Restore: %v", i, err)
			}
		}
	}
	for _, typ := range []byte{TypeString, TypeListQuicklist2, TypeSetIntset, TypeSet, TypeZSetListpack, TypeZSet2,
		TypeHashListpack, TypeHash, TypeHashListpackEx, TypeHashMetadata} {
		if seen[typ] == 0 {
			t.Errorf("type %d never written", typ)
		}
	}
}

// shrunk reports descriptions that differ only in the encoding, the
// decoded one compact where the original had converted to the large form:
// a value that grew past a threshold and shrank again loads compact, as in
// Redis.
func shrunk(got, want string) bool {
	g := strings.SplitN(got, " ", 3)
	w := strings.SplitN(want, " ", 3)
	return len(g) == 3 && len(w) == 3 && g[0] == w[0] && g[2] == w[2] &&
		(w[1] == "hashtable" || w[1] == "skiplist") && g[1] != w[1]
}

// Every prefix of a valid encoding is refused, never accepted or panicked on.
func TestTruncatedValues(t *testing.T) {
	const now = 1_700_000_000_000
	g := &valueGen{r: rand.New(rand.NewPCG(3, 4)), opt: DefaultOptions(), now: now}
	for i := 0; i < 60; i++ {
		o := g.object()
		b, typ, err := AppendValue(nil, o, EncodeOptions{Compress: i%2 == 0, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		step := 1 + len(b)/300
		for k := 0; k < len(b); k += step {
			if _, _, err := DecodeValue(typ, b[:k], g.opt); err == nil {
				t.Fatalf("type %d: prefix of %d of %d bytes accepted", typ, k, len(b))
			}
		}
	}
}
