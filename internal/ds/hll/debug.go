package hll

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strconv"
)

// What PFDEBUG and PFSELFTEST need (Redis's pfdebugCommand and
// pfselftestCommand).

// ToDense returns b (which must pass checkHeader) in the dense encoding:
// b itself when it is dense already (converted false), else a new dense
// value with b's header (converted true), or ErrCorrupt for a sparse
// encoding that does not decode to 16384 registers.
func ToDense(b []byte) (out []byte, converted bool, err error) {
	if b[encOffset] == encDense {
		return b, false, nil
	}
	d, ok := sparseToDense(b, 0)
	if !ok {
		return nil, false, ErrCorrupt
	}
	return d, true, nil
}

// DenseRegisters appends the 16384 register values of the dense value b
// to dst.
func DenseRegisters(dst []uint8, b []byte) []uint8 {
	regs := b[HeaderSize:]
	for i := 0; i < Registers; i++ {
		dst = append(dst, denseGet(regs, i))
	}
	return dst
}

// DecodeSparse is PFDEBUG DECODE's text for the sparse value b: its
// opcodes as "z:<len>", "Z:<len>" and "v:<value>,<len>", space-separated.
// Like Redis it decodes whatever is there, corrupt or not; an XZERO cut
// off by the end reads a NUL as its second byte.
func DecodeSparse(b []byte) string {
	s := b[HeaderSize:]
	var out []byte
	for p := 0; p < len(s); {
		if len(out) > 0 {
			out = append(out, ' ')
		}
		op := s[p]
		switch {
		case isZero(op):
			out = append(append(out, "z:"...), strconv.Itoa(zeroLen(op))...)
			p++
		case isXZero(op):
			out = append(append(out, "Z:"...), strconv.Itoa(xzeroLen(s, p, 0))...)
			p += 2
		default:
			out = fmt.Appendf(out, "v:%d,%d", valValue(op), valLen(op))
			p++
		}
	}
	return string(out)
}

// SelfTest is PFSELFTEST: the dense registers hold what is stored in
// them without disturbing their neighbours, and the estimate of n unique
// elements added to a dense and a sparse value at once stays within six
// standard errors at n = 1, 10, 100 ... 10^7, the two agreeing and the
// sparse one staying sparse while n is under sparseMaxBytes/2. It returns
// the error reply's text ("TESTFAILED ..."), "" when all is well.
func SelfTest(rng *rand.Rand, sparseMaxBytes int) string {
	const cycles = 1000 // Redis's HLL_TEST_CYCLES
	dense := make([]byte, DenseSize)
	copy(dense, "HYLL")
	regs := dense[HeaderSize:]
	var want [Registers]uint8
	for j := 0; j < cycles; j++ {
		for i := range want {
			want[i] = uint8(rng.Intn(64))
			densePut(regs, i, want[i])
		}
		for i := range want {
			if v := denseGet(regs, i); v != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], v)
			}
		}
	}

	clear(regs)
	invalidateCache(dense)
	sparse := New()
	relerr := 1.04 / math.Sqrt(Registers)
	checkpoint := int64(1)
	seed := uint64(rng.Uint32()) | uint64(rng.Uint32())<<32
	var ele [8]byte
	for j := int64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		dense, _, _ = AddCount(dense, sparseMaxBytes, ele[:])
		sparse, _, _ = AddCount(sparse, sparseMaxBytes, ele[:])
		if j != checkpoint {
			continue
		}
		if j < int64(sparseMaxBytes/2) && IsDense(sparse) {
			return "TESTFAILED sparse encoding not used"
		}
		cd, _, _ := Count(dense)
		cs, _, _ := Count(sparse)
		if cd != cs {
			return "TESTFAILED dense/sparse disagree"
		}
		abserr := checkpoint - int64(cd)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr)
		}
		checkpoint *= 10
	}
	return ""
}
