package list

import (
	"math"

	"github.com/abacusdb/abacus/internal/num"
)

// This file mirrors how Redis sizes listpacks and quicklist nodes, so that
// a list is packed (Packed) exactly when redis-server 7.2 would report it
// as a listpack after the same sequence of commands.

// DefaultFill is Redis's default list-max-listpack-size: nodes of at most
// 8 KiB.
const DefaultFill = -2

// sizeLevels are the node byte limits for fill -1 .. -5.
var sizeLevels = [...]int{4096, 8192, 16384, 32768, 65536}

const (
	// safetyLimit caps a node's bytes when fill counts entries.
	safetyLimit = 8192
	// insertOverhead is Redis's pessimistic per-entry overhead when it
	// decides whether one more entry fits in a node.
	insertOverhead = 8
	// lpHeaderBytes is a listpack's fixed size: 6 bytes of header and the
	// end marker.
	lpHeaderBytes = 7
)

// nodeLimit returns the byte and entry limits that fill imposes on one
// node (and on a whole list in listpack form). The limit that does not
// apply is math.MaxInt.
func nodeLimit(fill int) (bytes, count int) {
	if fill >= 0 {
		return math.MaxInt, max(fill, 1)
	}
	lvl := min(-fill-1, len(sizeLevels)-1)
	return sizeLevels[lvl], math.MaxInt
}

// exceedsLimit reports whether a node of lpBytes bytes holding count
// entries is over the limit set by fill.
func exceedsLimit(fill, lpBytes, count int) bool {
	bytes, maxCount := nodeLimit(fill)
	if fill < 0 {
		return lpBytes > bytes
	}
	return lpBytes > safetyLimit || count > maxCount
}

// lpEntrySize returns the bytes v occupies as one listpack entry: the
// encoding header and data, plus the back-length suffix. Strings that are
// canonical decimal integers are stored as integers, as listpack does.
func lpEntrySize(v []byte) int {
	if len(v) == 0 || (v[0] > '9' || v[0] < '0') && v[0] != '-' {
		// Not an integer: no parse (most strings stop here).
		return strEntrySize(len(v))
	}
	if x, ok := lpInt(v); ok {
		switch {
		case x >= 0 && x <= 127:
			return 1 + 1
		case x >= -4096 && x <= 4095:
			return 2 + 1
		case x >= math.MinInt16 && x <= math.MaxInt16:
			return 3 + 1
		case x >= -1<<23 && x < 1<<23:
			return 4 + 1
		case x >= math.MinInt32 && x <= math.MaxInt32:
			return 5 + 1
		default:
			return 9 + 1
		}
	}
	return strEntrySize(len(v))
}

// strEntrySize is lpEntrySize of a string of n bytes.
func strEntrySize(n int) int {
	var enc int
	switch {
	case n < 64:
		enc = 1 + n
	case n < 4096:
		enc = 2 + n
	default:
		enc = 5 + n
	}
	return enc + backlenSize(enc)
}

// backlenSize is the size of the variable-length back pointer that ends
// every listpack entry of enc bytes.
func backlenSize(enc int) int {
	switch {
	case enc <= 127:
		return 1
	case enc < 16383:
		return 2
	case enc < 2097151:
		return 3
	case enc < 268435455:
		return 4
	default:
		return 5
	}
}

// lpInt reports whether v is the canonical decimal form of an int64 (no
// sign other than a leading '-', no leading zeros, no "-0"), which is when
// listpack stores a value as an integer.
func lpInt(v []byte) (int64, bool) { return num.ParseInt(v) }
