package hll

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// MurmurHash64A is a bijection on 8-byte keys (odd multipliers and
// xor-shifts by 47 are invertible), so an element that lands on any chosen
// register with any chosen value can be computed rather than searched for.
// That lets tests reach register values up to 51, which hashing random
// elements would take billions of tries to hit.

const murmurM = 0xc6a4a7935bd1e995

// inverse of murmurM modulo 2^64, by Newton's iteration.
var murmurMInv = func() uint64 {
	inv := uint64(murmurM)
	for i := 0; i < 6; i++ {
		inv *= 2 - murmurM*inv
	}
	return inv
}()

func unshift47(x uint64) uint64 { return x ^ x>>47 } // its own inverse: 47 >= 32

// preimage returns the 8-byte element whose hash is h.
func preimage(h uint64) []byte {
	h = unshift47(h)
	h *= murmurMInv
	h = unshift47(h)
	h *= murmurMInv
	m := uint64(murmurM)
	k := h ^ (hashSeed ^ 8*m)
	k *= murmurMInv
	k = unshift47(k)
	k *= murmurMInv
	return binary.LittleEndian.AppendUint64(nil, k)
}

// elemFor returns an element that offers value count (1..51) to register
// index; r fills the hash bits that do not matter.
func elemFor(r *rand.Rand, index int, count int) []byte {
	h := uint64(index)
	if count <= q {
		h |= 1 << (precision + count - 1)
		h |= r.Uint64() << (precision + count) // may shift everything out
	}
	return preimage(h)
}

func TestPreimage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		idx, cnt := r.IntN(Registers), 1+r.IntN(q+1)
		e := elemFor(r, idx, cnt)
		gi, gc := patLen(e)
		if gi != idx || int(gc) != cnt {
			t.Fatalf("elemFor(%d,%d) = %x hashes to (%d,%d)", idx, cnt, e, gi, gc)
		}
	}
}

// randElems returns n distinct-ish random elements of varied lengths.
func randElems(r *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		switch r.IntN(3) {
		case 0:
			out[i] = fmt.Appendf(nil, "elem:%d", r.Uint64())
		case 1:
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			out[i] = b
		default:
			out[i] = fmt.Appendf(nil, "%d", r.IntN(1_000_000))
		}
	}
	return out
}

// decode returns the registers of a valid value (test helper).
func decode(t testing.TB, b []byte) *[Registers]uint8 {
	t.Helper()
	if err := Validate(b); err != nil {
		t.Fatalf("decode: %v", err)
	}
	var m [Registers]uint8
	if !mergeMax(&m, b) {
		t.Fatal("decode: mergeMax failed on a valid value")
	}
	return &m
}
