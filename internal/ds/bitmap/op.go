package bitmap

import "bytes"

// OpCode selects a BITOP operation.
type OpCode int

// The BITOP operations. For DIFF, DIFF1 and ANDOR the first source is X
// and the others are Y1, Y2 ...
const (
	OpAnd   OpCode = iota // bits set in every source
	OpOr                  // bits set in any source
	OpXor                 // bits set in an odd number of sources
	OpNot                 // the complement of the single source
	OpDiff                // X and not (Y1 or Y2 ...)
	OpDiff1               // (Y1 or Y2 ...) and not X
	OpAndOr               // X and (Y1 or Y2 ...)
	OpOne                 // bits set in exactly one source
)

var opNames = [...]string{"AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE"}

// String returns the operation's name as BITOP spells it.
func (op OpCode) String() string {
	if op < 0 || int(op) >= len(opNames) {
		return "UNKNOWN"
	}
	return opNames[op]
}

// Op computes BITOP op over srcs and returns the result, a new slice as
// long as the longest source; shorter sources (nil for a missing key) read
// as zeros past their end. An empty result (all sources empty) is nil:
// BITOP then deletes the destination. NOT uses only srcs[0]; DIFF, DIFF1
// and ANDOR with a single source give X, nothing and nothing. Op panics
// if srcs is empty.
func Op(op OpCode, srcs [][]byte) []byte {
	if len(srcs) == 0 {
		panic("bitmap: Op needs at least one source")
	}
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	if op == OpNot {
		n = len(srcs[0])
	}
	if n == 0 {
		return nil
	}
	x, ys := srcs[0], srcs[1:]
	var res []byte
	switch op {
	case OpAnd, OpOr, OpXor, OpDiff, OpOne:
		res = padded(x, n)
	default:
		res = make([]byte, n)
	}
	switch op {
	case OpAnd:
		for _, y := range ys {
			andInto(res, y)
			clear(res[len(y):]) // y is zero past its end
		}
	case OpOr:
		for _, y := range ys {
			orInto(res, y)
		}
	case OpXor:
		for _, y := range ys {
			xorInto(res, y)
		}
	case OpNot:
		notFrom(res, x)
	case OpDiff:
		for _, y := range ys {
			andNotInto(res, y)
		}
	case OpDiff1, OpAndOr:
		for _, y := range ys {
			orInto(res, y)
		}
		if op == OpDiff1 {
			andNotInto(res, x)
		} else {
			andInto(res, x)
			clear(res[len(x):])
		}
	case OpOne:
		one(res, srcs)
	default:
		panic("bitmap: unknown BITOP operation")
	}
	return res
}

// padded returns a copy of x extended with zeros to n (>= len(x)) bytes,
// zeroing only the extension.
func padded(x []byte, n int) []byte {
	if len(x) == n {
		return bytes.Clone(x)
	}
	return append(x[:len(x):len(x)], make([]byte, n-len(x))...)
}

// one computes BITOP ONE into res, which holds the first source padded to
// the longest, a block at a time so the bits-seen-twice scratch stays small
// and in cache.
func one(res []byte, srcs [][]byte) {
	var scratch [4096]byte
	for off := 0; off < len(res); off += len(scratch) {
		blk := res[off:min(off+len(scratch), len(res))]
		more := scratch[:len(blk)]
		clear(more)
		for _, y := range srcs[1:] {
			if len(y) > off {
				seenInto(blk, more, y[off:])
			}
		}
		andNotInto(blk, more)
	}
}
