package hll

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Golden values recorded from redis-server 7.0.15, so that the package is
// checked against Redis even where redis-server is not installed.
func TestGolden(t *testing.T) {
	seq := func(prefix string, n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = fmt.Appendf(nil, "%s%d", prefix, i)
		}
		return out
	}
	batches := func(b []byte, elems [][]byte, size int) []byte {
		for i := 0; i < len(elems); i += size {
			var err error
			b, _, err = Add(b, DefaultSparseMaxBytes, elems[i:min(i+size, len(elems))]...)
			if err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	count := func(b []byte) uint64 {
		c, _, err := Count(b)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

	// PFADD g1 a b c d e f g; PFCOUNT g1; GET g1
	g1, _, _ := Add(nil, DefaultSparseMaxBytes, []byte("a"), []byte("b"), []byte("c"), []byte("d"), []byte("e"), []byte("f"), []byte("g"))
	if c := count(g1); c != 7 {
		t.Errorf("PFCOUNT g1 = %d, want 7", c)
	}
	if want := "48594c4c010000000700000000000000466d80560c80443c84388050b184498c80426d80425a"; hex.EncodeToString(g1) != want {
		t.Errorf("g1 = %x\nwant %s", g1, want)
	}
	// PFADD g2 e0..e9999, 100 per command; PFCOUNT g2 (dense)
	g2 := batches(nil, seq("e", 10000), 100)
	if c := count(g2); c != 9973 {
		t.Errorf("PFCOUNT g2 = %d, want 9973", c)
	}
	if s := sum(g2); len(g2) != DenseSize || s != "c44e2d26f9f332c8f4369b82fc1a4a99449b59ddf9337f9680ccdd66872ca7b5" {
		t.Errorf("g2: len %d sha256 %s", len(g2), s)
	}
	// PFADD g3 x0..x199, 10 per command; PFCOUNT g3 (sparse)
	g3 := batches(nil, seq("x", 200), 10)
	if c := count(g3); c != 198 {
		t.Errorf("PFCOUNT g3 = %d, want 198", c)
	}
	if s := sum(g3); len(g3) != 498 || s != "69b80d1f02dc6306ce86e94a7a07a919302b6bff7d44fa2a2f47718f77294689" {
		t.Errorf("g3: len %d sha256 %s", len(g3), s)
	}
	// PFMERGE g4 g3 g1; PFCOUNT g4
	g4, err := Merge(nil, DefaultSparseMaxBytes, g3, g1)
	if err != nil {
		t.Fatal(err)
	}
	if c := count(g4); c != 204 {
		t.Errorf("PFCOUNT g4 = %d, want 204", c)
	}
	if s := sum(g4); len(g4) != 510 || s != "dfb2c161cb74c0f2e8a49fe7cac01d68b20b488201201176bcd6a453db1ab12d" {
		t.Errorf("g4: len %d sha256 %s", len(g4), s)
	}
	// PFCOUNT g2 g3 g1
	if c, err := CountMany(g2, g3, g1); err != nil || c != 10184 {
		t.Errorf("PFCOUNT g2 g3 g1 = %d, %v; want 10184", c, err)
	}
}

// model is the obvious HyperLogLog: 16384 bytes.
type model [Registers]uint8

func (m *model) add(e []byte) bool {
	i, c := patLen(e)
	if c > m[i] {
		m[i] = c
		return true
	}
	return false
}

func (m *model) count() uint64 {
	var h histogram
	for _, v := range m {
		h[v]++
	}
	return estimate(&h)
}

// TestModel runs random PFADD/PFCOUNT/PFMERGE sequences against the model:
// registers, replies and counts must agree, values must stay valid, and the
// encoding must be the one the rules ask for.
func TestModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 40; trial++ {
		limit := []int{0, 50, 300, DefaultSparseMaxBytes, 20000}[trial%5]
		var b []byte
		var m model
		var maxVal uint8
		for step := 0; step < 60; step++ {
			elems := randElems(r, r.IntN(1+trial*10))
			if r.IntN(10) == 0 {
				elems = append(elems, elemFor(r, r.IntN(Registers), 1+r.IntN(q+1)))
			}
			want := b == nil
			for _, e := range elems {
				want = m.add(e) || want
			}
			var changed bool
			var err error
			b, changed, err = Add(b, limit, elems...)
			if err != nil || changed != want {
				t.Fatalf("trial %d step %d: Add = %v, %v; want %v", trial, step, changed, err, want)
			}
			if got := decode(t, b); *got != [Registers]uint8(m) {
				t.Fatalf("trial %d step %d: registers differ from the model", trial, step)
			}
			for _, v := range m {
				maxVal = max(maxVal, v)
			}
			if maxVal > valMaxValue && !IsDense(b) {
				t.Fatalf("trial %d step %d: value %d held sparse", trial, step, maxVal)
			}
			if !IsDense(b) && len(b) > max(limit, HeaderSize+2) {
				t.Fatalf("trial %d step %d: sparse value of %d bytes passes limit %d", trial, step, len(b), limit)
			}
			if changed && cacheValid(b) {
				t.Fatalf("trial %d step %d: cache still valid after a change", trial, step)
			}
			if r.IntN(3) == 0 {
				c, updated, err := Count(b)
				if err != nil || c != m.count() {
					t.Fatalf("Count = %d, %v; model %d", c, err, m.count())
				}
				if c2, updated2, _ := Count(b); c2 != c || updated2 || !updated && changed {
					t.Fatalf("second Count = %d (updated %v), first %d (updated %v)", c2, updated2, c, updated)
				}
			}
		}
		// Merge into a fresh and into an existing destination.
		var m2 model
		other, _, _ := Add(nil, limit, randElems(r, r.IntN(3000))...)
		for i, v := range decode(t, other) {
			m2[i] = v
		}
		var union model
		for i := range union {
			union[i] = max(m[i], m2[i])
		}
		cm, err := CountMany(b, nil, other)
		if err != nil || cm != union.count() {
			t.Fatalf("CountMany = %d, %v; model %d", cm, err, union.count())
		}
		merged, err := Merge(nil, limit, b, other)
		if err != nil || *decode(t, merged) != [Registers]uint8(union) {
			t.Fatalf("Merge into new: %v or registers differ", err)
		}
		if (IsDense(b) || IsDense(other)) && !IsDense(merged) {
			t.Fatal("Merge of a dense source is not dense")
		}
		into, err := Merge(bytes.Clone(other), limit, b)
		if err != nil || *decode(t, into) != [Registers]uint8(union) || cacheValid(into) {
			t.Fatalf("Merge into existing: %v or registers differ", err)
		}
	}
}

// TestCursor checks that the cursor shortcut gives exactly the bytes a
// scan from the start gives, for ascending and arbitrary orders.
func TestCursor(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		a, bb := New(), New()
		cur := cursor{track: true}
		idx := r.Perm(Registers)[:r.IntN(600)]
		if trial%2 == 0 { // ascending, with repeats, as PFMERGE goes
			mod := 1 + r.IntN(Registers)
			for i := range idx {
				idx[i] %= mod
			}
			slices.Sort(idx)
		}
		for _, i := range idx {
			v := uint8(1 + r.IntN(4))
			var ra, rb int
			a, ra = sparseSet(a, i, v, 1<<20, &cur)
			bb, rb = sparseSet(bb, i, v, 1<<20, nil)
			if ra != rb || !bytes.Equal(a, bb) {
				t.Fatalf("trial %d: cursor and full scan differ after register %d", trial, i)
			}
		}
	}
}

func TestEmptyAndCache(t *testing.T) {
	b := New()
	if !IsValid(b) || IsDense(b) || len(b) != HeaderSize+2 {
		t.Fatalf("New() = % x", b)
	}
	if c, updated, err := Count(b); c != 0 || updated || err != nil {
		t.Fatalf("Count(New()) = %d %v %v", c, updated, err)
	}
	b, changed, err := Add(nil, DefaultSparseMaxBytes)
	if !changed || err != nil || cacheValid(b) {
		t.Fatalf("Add(nil) = %v %v, cache valid %v", changed, err, cacheValid(b))
	}
	if c, updated, err := Count(b); c != 0 || !updated || err != nil || !cacheValid(b) {
		t.Fatalf("Count after create = %d %v %v", c, updated, err)
	}
	if _, changed, _ := Add(b, DefaultSparseMaxBytes, []byte("x")); !changed {
		t.Fatal("adding to an empty HLL changed nothing")
	}
	if c, _, err := Count(nil); c != 0 || err != nil {
		t.Fatal("Count(nil)")
	}
	if c, err := CountMany(nil, nil); c != 0 || err != nil {
		t.Fatal("CountMany(nil, nil)")
	}
}

func TestErrors(t *testing.T) {
	bad := map[string]struct {
		b    []byte
		want error
	}{
		"empty":    {[]byte{}, ErrNotHLL},
		"short":    {[]byte("HYLL\x01"), ErrNotHLL},
		"magic":    {append([]byte("hyll"), New()[4:]...), ErrNotHLL},
		"encoding": {append([]byte("HYLL\x02"), New()[5:]...), ErrNotHLL},
		"dense":    {append([]byte("HYLL\x00"), make([]byte, 100)...), ErrNotHLL},
		"cover":    {append(New()[:HeaderSize:HeaderSize], 0x7f, 0xfe), ErrCorrupt},
		"valpast":  {append(New()[:HeaderSize:HeaderSize], 0x7f, 0xfd, 0x83), ErrCorrupt},
		"trailing": {append(New(), 0x00), ErrCorrupt},
	}
	for name, c := range bad {
		if err := Validate(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: Validate = %v, want %v", name, err, c.want)
		}
		b := bytes.Clone(c.b)
		if len(b) >= HeaderSize {
			invalidateCache(b)
		}
		if _, _, err := Count(b); !errors.Is(err, c.want) {
			t.Errorf("%s: Count = %v, want %v", name, err, c.want)
		}
		if _, err := CountMany(New(), b); !errors.Is(err, c.want) {
			t.Errorf("%s: CountMany = %v, want %v", name, err, c.want)
		}
		orig := bytes.Clone(b)
		if out, err := Merge(b, DefaultSparseMaxBytes, New()); !errors.Is(err, c.want) || !bytes.Equal(out, orig) {
			t.Errorf("%s: Merge = %v, want %v and dst untouched", name, err, c.want)
		}
		if _, err := Merge(nil, DefaultSparseMaxBytes, New(), b); !errors.Is(err, c.want) {
			t.Errorf("%s: Merge source = %v, want %v", name, err, c.want)
		}
	}
	// A corrupt value with a valid cache is served from the cache, as in Redis.
	b := append(New()[:HeaderSize:HeaderSize], 0x00)
	b[8] = 42
	if c, _, err := Count(b); c != 42 || err != nil {
		t.Errorf("cached Count = %d, %v", c, err)
	}
}

func TestEstimatorEdges(t *testing.T) {
	var h histogram
	h[0] = Registers
	if e := estimate(&h); e != 0 {
		t.Errorf("empty estimate %d", e)
	}
	h = histogram{}
	h[60] = Registers // z == 0: Redis's llroundl of +Inf, read as uint64
	if e := estimate(&h); e != 1<<63 {
		t.Errorf("infinite estimate %d", e)
	}
	if llround(math.NaN()) != 1<<63 || llround(2.5) != 3 || llround(1e30) != 1<<63 {
		t.Error("llround")
	}
}

func TestMurmurTail(t *testing.T) {
	// Every tail length takes the same path through the switch in Redis; the
	// loop here must fold bytes identically. Compare with a direct transcription.
	ref := func(data []byte, seed uint64) uint64 {
		const m = 0xc6a4a7935bd1e995
		h := seed ^ uint64(len(data))*m
		n := len(data) &^ 7
		for i := 0; i < n; i += 8 {
			var k uint64
			for j := 7; j >= 0; j-- {
				k = k<<8 | uint64(data[i+j])
			}
			k *= m
			k ^= k >> 47
			k *= m
			h ^= k
			h *= m
		}
		tail := data[n:]
		switch len(tail) {
		case 7:
			h ^= uint64(tail[6]) << 48
			fallthrough
		case 6:
			h ^= uint64(tail[5]) << 40
			fallthrough
		case 5:
			h ^= uint64(tail[4]) << 32
			fallthrough
		case 4:
			h ^= uint64(tail[3]) << 24
			fallthrough
		case 3:
			h ^= uint64(tail[2]) << 16
			fallthrough
		case 2:
			h ^= uint64(tail[1]) << 8
			fallthrough
		case 1:
			h ^= uint64(tail[0])
			h *= m
		}
		h ^= h >> 47
		h *= m
		h ^= h >> 47
		return h
	}
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 100; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if got, want := murmur64A(b, hashSeed), ref(b, hashSeed); got != want {
			t.Fatalf("len %d: %x != %x", n, got, want)
		}
	}
}

func TestDenseRegisters(t *testing.T) {
	regs := make([]byte, DenseSize-HeaderSize)
	r := rand.New(rand.NewPCG(9, 10))
	var m model
	for n := 0; n < 100000; n++ {
		i, v := r.IntN(Registers), uint8(r.IntN(64))
		densePut(regs, i, v)
		m[i] = v
		if j := r.IntN(Registers); denseGet(regs, j) != m[j] {
			t.Fatalf("register %d = %d, want %d", j, denseGet(regs, j), m[j])
		}
	}
	var h, hm histogram
	denseHisto(regs, &h)
	for _, v := range m {
		hm[v]++
	}
	if h != hm {
		t.Fatal("dense histogram differs")
	}
	var mx [Registers]uint8
	denseMax(regs, &mx)
	if mx != [Registers]uint8(m) {
		t.Fatal("denseMax differs")
	}
}
