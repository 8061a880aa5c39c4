package hll

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRedisBasics(t *testing.T) {
	s := startRedis(t)
	d := newDual(t, s)
	if v, ok := d.rc.must(t, "INFO", "server").([]byte); ok {
		for _, line := range strings.Split(string(v), "\r\n") {
			if strings.HasPrefix(line, "redis_version:") {
				t.Log("differential tests against", line)
			}
		}
	}
	d.pfadd("empty")     // created with no elements: reply 1, cache invalid
	d.pfcount("empty")   // computes 0 and writes the cache
	d.pfcount("empty")   // served from the cache
	d.pfadd("empty")     // existing key, nothing added: reply 0
	d.pfcount("missing") // 0, no key created
	d.compareValue("missing")
	d.pfadd("a", []byte("a"), []byte("b"), []byte("c"), []byte(""))
	d.pfadd("a", []byte("a"))
	d.pfcount("a")
	d.pfcount("a", "missing", "empty")
	d.pfmerge("m")
	d.pfmerge("m2", "missing")
	d.pfmerge("m3", "a", "empty")
	d.pfcount("m3")
	// New is what Redis creates; the stored value only differs by the flag.
	if want := d.rc.must(t, "GET", "m").([]byte); !bytes.Equal(New()[:15], want[:15]) || !bytes.Equal(New()[16:], want[16:]) {
		t.Fatalf("New() = % x, Redis creates % x", New(), want)
	}
}

// TestRedisSparse: small sets that stay sparse, in batches, with counts.
func TestRedisSparse(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(11, 12))
	for k := 0; k < 8; k++ {
		key := fmt.Sprint("s", k)
		for n := 0; n < 40; n++ {
			d.pfadd(key, randElems(r, 1+r.IntN(8))...)
			if r.IntN(3) == 0 {
				d.pfcount(key)
			}
		}
	}
	d.pfcount("s0", "s1", "s2")
	d.pfcount("s3", "s3")
}

// TestRedisDense: sets large enough to be promoted by size, then kept
// growing in dense form, at the default and at other sparse limits.
func TestRedisDense(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(21, 22))
	for _, limit := range []int{DefaultSparseMaxBytes, 0, 17, 100, 600, 12000, 20000} {
		d.setSparseMax(limit)
		key := fmt.Sprint("d", limit)
		total := 0
		for total < 6000 {
			n := 1 + r.IntN(60)
			d.pfadd(key, randElems(r, n)...)
			total += n
			if r.IntN(4) == 0 {
				d.pfcount(key)
			}
		}
		d.pfcount(key)
	}
	d.setSparseMax(DefaultSparseMaxBytes)
	// A large set in one command: many elements, few wire round trips.
	for i := 0; i < 5; i++ {
		d.pfadd("big", randElems(r, 20000)...)
		d.pfcount("big")
	}
}

// TestRedisLargeValues: register values above 32 force the dense encoding
// whatever the size; values up to 51 come from computed hash preimages.
func TestRedisLargeValues(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(31, 32))
	for trial := 0; trial < 30; trial++ {
		key := fmt.Sprint("L", trial)
		// A few ordinary elements, then one large value somewhere.
		d.pfadd(key, randElems(r, r.IntN(50))...)
		d.pfcount(key)
		cnt := 30 + r.IntN(q+1-30+1) // 30..51: both sides of the limit
		d.pfadd(key, elemFor(r, r.IntN(Registers), cnt))
		d.pfcount(key)
		d.pfadd(key, elemFor(r, r.IntN(Registers), 1+r.IntN(q+1)), elemFor(r, r.IntN(Registers), 1+r.IntN(q+1)))
		d.pfcount(key)
	}
	// The largest value at the first and the last register, and 32/33 exactly.
	d.pfadd("edge", elemFor(r, 0, 32), elemFor(r, Registers-1, 32))
	d.pfadd("edge", elemFor(r, Registers-1, 33))
	d.pfadd("edge", elemFor(r, 0, 51), elemFor(r, 1, 51))
	d.pfcount("edge")
	// Every register at 51: the tau term of the estimator.
	all := make([][]byte, 0, Registers)
	for i := 0; i < Registers; i++ {
		all = append(all, elemFor(r, i, q+1))
	}
	d.pfadd("full", all...)
	d.pfcount("full")
	d.pfadd("half", all[:Registers/2]...)
	d.pfcount("half")
	d.pfcount("half", "edge", "L3")
}

// TestRedisSparseShapes aims elements at a narrow band of registers with
// small values, so that runs of VAL opcodes are split, overwritten and
// merged in every combination the in-place update knows.
func TestRedisSparseShapes(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(41, 42))
	for trial := 0; trial < 60; trial++ {
		key := fmt.Sprint("v", trial)
		base := r.IntN(Registers - 300)
		if trial%10 == 0 {
			base = 0 // runs at the very start
		} else if trial%10 == 1 {
			base = Registers - 300 // and at the very end
		}
		width := 1 + r.IntN(300)
		maxVal := 1 + r.IntN(5)
		for n := 0; n < 40; n++ {
			batch := make([][]byte, 1+r.IntN(6))
			for i := range batch {
				batch[i] = elemFor(r, base+r.IntN(width), 1+r.IntN(maxVal))
			}
			d.pfadd(key, batch...)
		}
		d.pfcount(key)
	}
	// Scattered registers at exact run boundaries of ZERO (64) and XZERO.
	for _, idx := range []int{63, 64, 65, 127, 128, 129, 16319, 16320, 16383, 0, 1} {
		d.pfadd("bounds", elemFor(r, idx, 2))
	}
	d.pfcount("bounds")
}

// TestRedisMerge: PFMERGE across sparse, dense and missing keys, with the
// destination itself sparse, dense or missing, and counts of the unions.
func TestRedisMerge(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(51, 52))
	sizes := []int{0, 1, 5, 40, 200, 1500, 5000}
	keys := []string{}
	for i, n := range sizes {
		k := fmt.Sprint("k", i)
		d.pfadd(k, randElems(r, n)...)
		keys = append(keys, k)
	}
	d.pfadd("big32", elemFor(r, 7, 40)) // dense only because of a large value
	keys = append(keys, "big32", "nokey")
	pick := func() []string {
		n := r.IntN(4)
		out := make([]string, n)
		for i := range out {
			out[i] = keys[r.IntN(len(keys))]
		}
		return out
	}
	for i := 0; i < 120; i++ {
		dst := fmt.Sprint("dst", r.IntN(6))
		switch r.IntN(5) {
		case 0:
			d.del(dst)
		case 1:
			d.pfadd(dst, randElems(r, r.IntN(100))...)
		}
		if i%7 == 0 {
			d.setSparseMax([]int{DefaultSparseMaxBytes, 50, 400, 10000}[r.IntN(4)])
		}
		srcs := pick()
		if r.IntN(5) == 0 {
			srcs = append(srcs, dst)
		}
		d.pfmerge(dst, srcs...)
		if r.IntN(2) == 0 {
			d.pfcount(dst)
		}
		d.pfcount(append(pick(), dst, keys[r.IntN(len(keys))])...)
	}
	// Merging many sparse sources into a sparse destination: the slow path.
	d.setSparseMax(DefaultSparseMaxBytes)
	for i := 0; i < 20; i++ {
		k := fmt.Sprint("ms", i)
		d.pfadd(k, randElems(r, 30)...)
		d.pfmerge("msum", k)
		d.pfmerge("msum2", "msum", k)
		d.pfcount("msum")
	}
}

// TestRedisCrafted: hand-made values SET directly, including dense values
// with register patterns hashing never produces and the estimator extremes.
func TestRedisCrafted(t *testing.T) {
	d := newDual(t, startRedis(t))
	dense := func(fill func(i int) uint8) []byte {
		b := make([]byte, DenseSize)
		copy(b, "HYLL")
		b[15] = cacheFlag
		for i := 0; i < Registers; i++ {
			densePut(b[HeaderSize:], i, fill(i))
		}
		return b
	}
	cases := map[string][]byte{
		"all60":  dense(func(int) uint8 { return 60 }), // z = 0: estimate infinite
		"all51":  dense(func(int) uint8 { return 51 }), // tau(0) term only
		"all63":  dense(func(int) uint8 { return 63 }), // ignored values
		"one50":  dense(func(i int) uint8 { return 50 + uint8(min(i, 1))*10 }),
		"mixed":  dense(func(i int) uint8 { return uint8(i % 64) }),
		"ones":   dense(func(int) uint8 { return 1 }),
		"zeros":  dense(func(int) uint8 { return 0 }),
		"stripe": dense(func(i int) uint8 { return uint8(i&1) * 33 }),
	}
	for k, v := range cases {
		d.set(k, v)
		d.pfcount(k)
		d.pfadd(k, []byte("x"), []byte("y"))
		d.pfcount(k)
	}
	d.pfcount("all60", "ones")
	d.pfcount("all63", "zeros")
	d.pfmerge("cm", "mixed", "stripe")
	d.pfcount("cm")
	// A valid cached cardinality is trusted as stored.
	v := New()
	v[8], v[9] = 0x39, 0x05
	d.set("cached", v)
	d.pfcount("cached")
	// Unused header bytes are carried along, also into a dense promotion.
	v = New()
	v[5], v[6], v[7] = 1, 2, 3
	d.set("unused", v)
	r := rand.New(rand.NewPCG(61, 62))
	d.pfadd("unused", randElems(r, 10)...)
	d.pfadd("unused", elemFor(r, 5, 40))
	d.pfcount("unused")
}

// TestRedisInvalid: values PFADD/PFCOUNT/PFMERGE must refuse, and how they
// are refused (WRONGTYPE for a bad header, INVALIDOBJ for bad sparse data),
// including what a half-done PFADD leaves behind.
func TestRedisInvalid(t *testing.T) {
	d := newDual(t, startRedis(t))
	sparse := func(ops ...byte) []byte { return append(New()[:HeaderSize:HeaderSize], ops...) }
	cases := map[string][]byte{
		"short":      []byte("HYLL"),
		"empty":      {},
		"magic":      append([]byte("HYLX"), New()[4:]...),
		"enc2":       func() []byte { b := New(); b[4] = 2; return b }(),
		"denseshort": func() []byte { b := make([]byte, DenseSize-1); copy(b, "HYLL"); return b }(),
		"denselong":  func() []byte { b := make([]byte, DenseSize+1); copy(b, "HYLL"); return b }(),
		"nocover":    sparse(),
		"under":      sparse(0x7f, 0xfe),       // 16383 registers
		"over":       sparse(0x7f, 0xff, 0x00), // 16385
		"valover":    sparse(0x7f, 0xfc, 0x83), // VAL run past the end
		// 255 zero registers, then an XZERO whose second byte is missing:
		// Redis reads the NUL after the string and finds 16129 more.
		"cutxzero":  sparse(0x3f, 0x3f, 0x3f, 0x3e, 0x7f),
		"cutxzero2": sparse(0x7f, 0x00, 0x7e, 0x7f),
		// Covers registers 0..16128 only: PFADD fails at a register above,
		// after earlier elements of the same command were added.
		"halfdone":  sparse(0x7f, 0x00),
		"int":       []byte("12345678901234567"),                                    // integer-looking
		"sparsebig": append(sparse(0x7f, 0xff), bytes.Repeat([]byte{0x80}, 100)...), // extra VALs past the end
	}
	r := rand.New(rand.NewPCG(71, 72))
	for k, v := range cases {
		d.set(k, v)
		d.pfcount(k)
		d.pfcount(k, "nokey")
		d.pfadd(k, randElems(r, 3)...)
		d.pfadd(k, elemFor(r, 100, 5), elemFor(r, 0, 1), elemFor(r, 16300, 2), elemFor(r, 9000, 2))
		d.set(k, d.vals[k])
		d.pfadd(k, elemFor(r, 16200, 3), elemFor(r, 16383, 1))
		d.set(k, d.vals[k])
		d.pfadd(k, elemFor(r, 40, 40))
		d.pfmerge("dst", k)
		d.pfmerge(k, "nokey")
		d.pfcount(k)
	}
	// Random corruption of valid values: mutated, truncated, extended.
	for i := 0; i < 300; i++ {
		d.setSparseMax([]int{DefaultSparseMaxBytes, 30}[i%2])
		base, _, _ := Add(nil, d.maxBytes, randElems(r, r.IntN(30))...)
		b := bytes.Clone(base)
		switch r.IntN(4) {
		case 0:
			b[HeaderSize+r.IntN(len(b)-HeaderSize)] = byte(r.Uint32())
		case 1:
			b = b[:HeaderSize+r.IntN(len(b)-HeaderSize)]
		case 2:
			b = append(b, byte(r.Uint32()))
		case 3:
			j := HeaderSize + r.IntN(len(b)-HeaderSize)
			b = append(b[:j], b[j+1:]...)
		}
		k := fmt.Sprint("c", i)
		d.set(k, b)
		switch r.IntN(3) {
		case 0:
			d.pfadd(k, randElems(r, 1+r.IntN(5))...)
		case 1:
			d.pfcount(k)
		case 2:
			d.pfmerge("cdst", k)
		}
		// Start the next command from a freshly SET copy: a corrupt value
		// whose cut-off XZERO was rewritten can leave a byte just past the
		// end of Redis's string that only later commands read (cursor.past).
		d.set(k, d.vals[k])
		d.pfadd(k, randElems(r, 2)...)
		d.set(k, d.vals[k])
		d.pfcount(k)
	}
}

// TestRedisRandom: a long random mix of every operation over a few keys,
// with the sparse limit changing underneath, for several seeds.
func TestRedisRandom(t *testing.T) {
	d := newDual(t, startRedis(t))
	for seed := uint64(0); seed < 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 81))
		d.rc.must(t, "FLUSHALL")
		clear(d.vals)
		keys := []string{"r0", "r1", "r2", "r3", "r4"}
		key := func() string { return keys[r.IntN(len(keys))] }
		for op := 0; op < 600; op++ {
			switch x := r.IntN(100); {
			case x < 2:
				d.setSparseMax([]int{0, 20, 100, 700, DefaultSparseMaxBytes, 9000}[r.IntN(6)])
			case x < 4:
				d.del(key())
			case x < 55:
				elems := randElems(r, r.IntN([]int{3, 20, 300}[r.IntN(3)]))
				if r.IntN(8) == 0 {
					elems = append(elems, elemFor(r, r.IntN(Registers), 1+r.IntN(q+1)))
				}
				if r.IntN(4) == 0 { // a narrow band: long VAL runs
					base := r.IntN(Registers - 50)
					for i := 0; i < 10; i++ {
						elems = append(elems, elemFor(r, base+r.IntN(50), 1+r.IntN(3)))
					}
				}
				d.pfadd(key(), elems...)
			case x < 75:
				d.pfcount(key())
			case x < 85:
				ks := make([]string, 2+r.IntN(3))
				for i := range ks {
					ks[i] = key()
				}
				d.pfcount(ks...)
			default:
				srcs := make([]string, r.IntN(4))
				for i := range srcs {
					srcs[i] = key()
				}
				d.pfmerge(key(), srcs...)
			}
		}
	}
}

// TestRedisLimitBoundary adds one element per command until each value is
// promoted, so that the exact length at which Redis gives up the sparse
// encoding is observed (within one command only the final bytes show).
func TestRedisLimitBoundary(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(91, 92))
	for _, limit := range []int{18, 19, 20, 21, 40, 41, 42, 43, 100, 101, 102, 250} {
		d.setSparseMax(limit)
		for k := 0; k < 6; k++ {
			key := fmt.Sprint("b", limit, "_", k)
			for n := 0; n < 400; n++ {
				var e []byte
				if k%2 == 0 {
					e = randElems(r, 1)[0]
				} else { // neighbouring registers: VAL runs, merges, splits
					e = elemFor(r, 5000+r.IntN(120), 1+r.IntN(3))
				}
				d.pfadd(key, e)
				if IsDense(d.vals[key]) {
					break
				}
			}
			if k%2 == 0 && !IsDense(d.vals[key]) {
				t.Fatalf("%s never promoted", key)
			}
		}
	}
}

// TestRedisEstimator compares the estimate for many register histograms,
// from crafted dense values: empty to saturated, with and without registers
// at 51 (the tau term) and at values hashing cannot produce. Large estimates
// make the comparison sensitive to the last bits of the floating-point
// computation, which integer rounding hides for small ones.
func TestRedisEstimator(t *testing.T) {
	d := newDual(t, startRedis(t))
	r := rand.New(rand.NewPCG(101, 102))
	b := make([]byte, DenseSize)
	copy(b, "HYLL")
	for i := 0; i < 1500; i++ {
		zeros := r.Float64() * r.Float64()    // share of empty registers
		shift := r.IntN(40)                   // as if the set were 2^shift times larger
		at51 := r.Float64() * r.Float64() / 4 // share of registers at 51
		wild := i%10 == 0                     // uniform 0..63
		if i%3 == 0 {                         // no empty registers: estimates up to about 2^54
			zeros = 0
		}
		if i%6 == 0 {
			at51 = 0
		}
		for j := 0; j < Registers; j++ {
			var v int
			switch {
			case wild:
				v = r.IntN(64)
			case r.Float64() < zeros:
				v = 0
			case r.Float64() < at51:
				v = q + 1
			default:
				v = min(q+1, shift+1+bitsTrailing(r.Uint64()))
			}
			densePut(b[HeaderSize:], j, uint8(v))
		}
		b[15] = cacheFlag
		d.set("est", b)
		d.pfcount("est")
		if i%5 == 0 {
			d.pfcount("est", "nokey")
		}
	}
}

func bitsTrailing(x uint64) int {
	n := 0
	for x&1 == 0 && n < 64 {
		x >>= 1
		n++
	}
	return n
}
