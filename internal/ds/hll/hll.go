// Package hll implements HyperLogLog in Redis's own byte representation.
//
// A HyperLogLog is an ordinary string value: PFADD, PFCOUNT and PFMERGE read
// and write it, and GET, DUMP and RDB files carry its bytes unchanged. To be
// interchangeable with redis-server, every function here produces exactly the
// bytes Redis 7.0 produces for the same sequence of operations, including the
// slightly non-canonical sparse encodings that Redis's in-place updates leave
// behind, and returns the same cardinalities.
//
// # Layout
//
// A value starts with a 16-byte header:
//
//	offset 0  "HYLL"
//	offset 4  encoding: 0 dense, 1 sparse
//	offset 5  3 unused bytes (carried along, never interpreted)
//	offset 8  cached cardinality, 8 bytes little endian; the top bit of
//	          byte 15 set means "cache invalid"
//
// There are 16384 registers (P = 14). The dense encoding stores them as 6-bit
// fields, register i at bit 6*i, least significant bits first, for exactly
// 12304 bytes in all. The sparse encoding is a run-length code of opcodes that
// must cover exactly 16384 registers:
//
//	ZERO  00xxxxxx           1..64 zero registers
//	XZERO 01xxxxxx yyyyyyyy  1..16384 zero registers (14-bit length - 1)
//	VAL   1vvvvvxx           1..4 registers of value 1..32
//
// A sparse value becomes dense when a register needs a value above 32, or when
// an update would make it longer than the caller's hll-sparse-max-bytes.
//
// # Ownership
//
// Add, Count and Merge may modify the slice they are given in place (Count
// writes the cache bytes; Add and Merge update registers) and Add and Merge
// may return a different slice, possibly with spare capacity as a sparse value
// grows. Callers pass the stored value, store the returned one, and must not
// hand in a slice that someone else is reading (a snapshot, say) without
// copying it first. Values are never retained.
//
// # Fidelity
//
// The reference is redis-server 7.0 (src/hyperloglog.c). The tests in
// diff_test.go drive a local redis-server, when one is installed, with the
// same operations and compare every reply and every GET byte for byte,
// including corrupt values and the estimator at its extremes.
//
// A nil slice means "no such key"; an empty non-nil slice is an empty string,
// which is not a HyperLogLog.
package hll

import (
	"encoding/binary"
	"errors"
)

const (
	precision = 14 // register index bits (Redis's HLL_P)
	regBits   = 6  // bits per dense register

	// Registers is the number of registers in every HyperLogLog.
	Registers = 1 << precision
	// HeaderSize is the length of the header that starts every value.
	HeaderSize = 16
	// DenseSize is the exact length of a dense value.
	DenseSize = HeaderSize + (Registers*regBits+7)/8
	// DefaultSparseMaxBytes is the default of Redis's hll-sparse-max-bytes.
	DefaultSparseMaxBytes = 3000

	encDense  = 0
	encSparse = 1
	encOffset = 4
	cacheOff  = 8
	cacheFlag = 0x80 // in byte 15: cached cardinality is stale

	trackMin = 16 // elements in one Add from which sparseSet keeps a cursor
)

// Errors. The command layer maps them to replies; the messages are Redis's
// reply texts so that they can be sent as they are.
var (
	// ErrNotHLL: the value is a string but its header is not a HyperLogLog
	// header (too short, wrong magic, unknown encoding, or a dense value of
	// the wrong length). Redis answers
	// "-WRONGTYPE Key is not a valid HyperLogLog string value."
	ErrNotHLL = errors.New("WRONGTYPE Key is not a valid HyperLogLog string value.")
	// ErrCorrupt: the header is fine but the sparse registers do not decode
	// to exactly 16384 registers. Redis answers
	// "-INVALIDOBJ Corrupted HLL object detected".
	ErrCorrupt = errors.New("INVALIDOBJ Corrupted HLL object detected")
)

// New returns an empty HyperLogLog as Redis creates it: sparse, one XZERO
// opcode covering all registers, cached cardinality 0 and valid.
//
// PFADD and PFMERGE on a missing key store such a value with the cache marked
// invalid; Add(nil, ...) and Merge(nil, ...) do that for you.
func New() []byte {
	b := make([]byte, HeaderSize+2)
	copy(b, "HYLL")
	b[encOffset] = encSparse
	putXZero(b[HeaderSize:], Registers)
	return b
}

// checkHeader is Redis's isHLLObjectOrReply for a string value.
func checkHeader(b []byte) error {
	if len(b) < HeaderSize || string(b[:4]) != "HYLL" || b[encOffset] > encSparse {
		return ErrNotHLL
	}
	if b[encOffset] == encDense && len(b) != DenseSize {
		return ErrNotHLL
	}
	return nil
}

// Validate reports whether PFCOUNT or PFMERGE would accept b: nil if so,
// ErrNotHLL for a bad header, ErrCorrupt for a sparse encoding that does not
// cover exactly 16384 registers. (Dense register values above 51 cannot come
// from hashing but are accepted, as Redis accepts them.)
func Validate(b []byte) error {
	if err := checkHeader(b); err != nil {
		return err
	}
	if b[encOffset] == encSparse && !sparseValid(b[HeaderSize:]) {
		return ErrCorrupt
	}
	return nil
}

// IsValid reports whether Validate(b) == nil.
func IsValid(b []byte) bool { return Validate(b) == nil }

// IsDense reports whether b (which must pass Validate) uses the dense encoding.
func IsDense(b []byte) bool { return len(b) > encOffset && b[encOffset] == encDense }

func cacheValid(b []byte) bool { return b[15]&cacheFlag == 0 }
func invalidateCache(b []byte) { b[15] |= cacheFlag }

// Add is PFADD: it adds each element to the HyperLogLog b and reports whether
// any register changed (the PFADD reply 1 or 0). A nil b is a missing key: a
// new HyperLogLog is created and changed is true even with no elements. When
// anything changed, the cached cardinality is marked invalid.
//
// sparseMaxBytes is hll-sparse-max-bytes: a sparse value that would grow past
// it is converted to dense.
//
// A bad header returns ErrNotHLL with b untouched. ErrCorrupt is returned when
// an element lands on a register the sparse encoding does not cover; the
// returned value then holds the updates made by earlier elements, as Redis
// leaves them, and should be stored (Redis keeps them but neither signals the
// key as modified nor propagates the command).
func Add(b []byte, sparseMaxBytes int, elems ...[]byte) (out []byte, changed bool, err error) {
	out, n, err := AddCount(b, sparseMaxBytes, elems...)
	return out, n > 0, err
}

// AddCount is Add reporting the number of changes Redis's PFADD adds to its
// dirty counter instead of a flag: 1 for creating the value, plus 1 for each
// element that changed a register.
func AddCount(b []byte, sparseMaxBytes int, elems ...[]byte) (out []byte, changes int, err error) {
	if b == nil {
		b = New()
		changes = 1
	} else if err := checkHeader(b); err != nil {
		return b, 0, err
	}
	// Elements come in no particular order; remembering opcode offsets still
	// pays for itself when there are many of them.
	cur := cursor{track: len(elems) >= trackMin}
	for _, e := range elems {
		index, count := patLen(e)
		var r int
		if b[encOffset] == encDense {
			r = denseSet(b[HeaderSize:], index, count)
		} else {
			b, r = sparseSet(b, index, count, sparseMaxBytes, &cur)
		}
		switch r {
		case 1:
			changes++
		case -1:
			return b, changes, ErrCorrupt
		}
	}
	if changes > 0 {
		invalidateCache(b)
	}
	return b, changes, nil
}

// Count is PFCOUNT with one key. A valid cached cardinality is returned as it
// is; otherwise the cardinality is computed and written into b's header in
// place, and updated is true (Redis then counts the key as modified: it
// signals watchers and propagates the new bytes). A nil b counts 0.
//
// Redis replies with the count as a signed 64-bit integer, so reply with
// int64(card). The one count that differs is 1<<63, which only crafted dense
// values reach (Redis's llroundl overflows): the reply is then
// -9223372036854775808, and as the cached value's top bit is the cache-invalid
// flag, it is recomputed on every PFCOUNT, as in Redis.
func Count(b []byte) (card uint64, updated bool, err error) {
	if b == nil {
		return 0, false, nil
	}
	if err := checkHeader(b); err != nil {
		return 0, false, err
	}
	if cacheValid(b) {
		return binary.LittleEndian.Uint64(b[cacheOff:]), false, nil
	}
	var hist histogram
	if b[encOffset] == encDense {
		denseHisto(b[HeaderSize:], &hist)
	} else if !sparseHisto(b[HeaderSize:], &hist) {
		return 0, false, ErrCorrupt
	}
	card = estimate(&hist)
	binary.LittleEndian.PutUint64(b[cacheOff:], card)
	return card, true, nil
}

// CountMany is PFCOUNT with two or more keys: the cardinality of the union,
// computed on a temporary register array, with no cache read or written. Nil
// entries are missing keys and count as empty. The first invalid value, in
// order, decides the error. (PFCOUNT with a single key must use Count.) Reply
// with int64 of the count, as for Count.
func CountMany(hlls ...[]byte) (uint64, error) {
	var maxRegs [Registers]uint8
	for _, h := range hlls {
		if h == nil {
			continue
		}
		if err := checkHeader(h); err != nil {
			return 0, err
		}
		if !mergeMax(&maxRegs, h) {
			return 0, ErrCorrupt
		}
	}
	var hist histogram
	rawHisto(&maxRegs, &hist)
	return estimate(&hist), nil
}

// Merge is PFMERGE dst src...: dst becomes the union of itself and the
// sources and its cached cardinality is marked invalid. A nil dst or source
// is a missing key; a missing dst is created. The result is dense when dst or
// any source is dense; otherwise dst stays sparse until a register needs more
// than 32 or it would pass sparseMaxBytes, as in Redis.
//
// On error (ErrNotHLL or ErrCorrupt from dst, then each source, in order)
// dst is returned untouched and nothing should be stored.
func Merge(dst []byte, sparseMaxBytes int, srcs ...[]byte) ([]byte, error) {
	var maxRegs [Registers]uint8
	useDense := false
	// Redis reads the destination first, as the first of the merged keys.
	for i := -1; i < len(srcs); i++ {
		h := dst
		if i >= 0 {
			h = srcs[i]
		}
		if h == nil {
			continue
		}
		if err := checkHeader(h); err != nil {
			return dst, err
		}
		if h[encOffset] == encDense {
			useDense = true
		}
		if !mergeMax(&maxRegs, h) {
			return dst, ErrCorrupt
		}
	}
	if dst == nil {
		dst = New()
	}
	if useDense && dst[encOffset] == encSparse {
		d, ok := sparseToDense(dst, 0)
		if !ok { // cannot happen: dst was validated by mergeMax
			return dst, ErrCorrupt
		}
		dst = d
	}
	if dst[encOffset] == encDense {
		// Redis raises each register to maxRegs; since maxRegs already
		// includes dst's own registers, that sets every register to it.
		densePack(dst[HeaderSize:], &maxRegs)
	} else {
		cur := cursor{track: true}
		for j, v := range maxRegs {
			if v == 0 {
				continue
			}
			if dst[encOffset] == encDense { // promoted on the way
				denseSet(dst[HeaderSize:], j, v)
			} else {
				dst, _ = sparseSet(dst, j, v, sparseMaxBytes, &cur)
			}
		}
	}
	invalidateCache(dst)
	return dst, nil
}

// mergeMax folds the registers of h (header already checked) into maxRegs, as
// Redis's hllMerge does. It reports false for a corrupt sparse encoding.
func mergeMax(maxRegs *[Registers]uint8, h []byte) bool {
	if h[encOffset] == encDense {
		denseMax(h[HeaderSize:], maxRegs)
		return true
	}
	return sparseMax(h[HeaderSize:], maxRegs)
}
