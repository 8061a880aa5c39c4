package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// lcsMaxCells bounds the table (4 bytes a cell): where Redis's malloc
// would fail and it replies "Insufficient memory", Go would abort the
// process, so Abacus refuses tables past 4 GiB up front.
const lcsMaxCells = 1 << 30

// cmdLcs is LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the
// longest common subsequence of two strings by the classic dynamic
// programming table, walked back from the end. The walk breaks ties the
// way Redis does (towards the shorter prefix of the second string), so the
// subsequence and the match ranges are the ones redis-server reports.
func cmdLcs(c *engine.Ctx) {
	oa := c.DB.LookupRead(c.Key(1))
	ob := c.DB.LookupRead(c.Key(2))
	if (oa != nil && oa.Type != keyspace.TypeString) || (ob != nil && ob.Type != keyspace.TypeString) {
		c.Error("ERR The specified keys must contain string values")
		return
	}
	var ta, tb [24]byte
	var a, b []byte
	if oa != nil {
		a = strBytes(oa, ta[:0])
	}
	if ob != nil {
		b = strBytes(ob, tb[:0])
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := c.Args[j]
		more := len(c.Args) - 1 - j
		switch {
		case ascii.OptIs(opt, "idx"):
			getIdx = true
		case ascii.OptIs(opt, "len"):
			getLen = true
		case ascii.OptIs(opt, "withmatchlen"):
			withLen = true
		case ascii.OptIs(opt, "minmatchlen") && more > 0:
			v, ok := c.Int(j + 1)
			if !ok {
				return
			}
			minLen = max(v, 0)
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		c.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if len(a) >= math.MaxUint32-1 || len(b) >= math.MaxUint32-1 {
		c.Error("ERR String too long for LCS")
		return
	}

	// t[i*(lb+1)+j] is the LCS length of a[:i] and b[:j].
	la, lb := len(a), len(b)
	w := lb + 1
	if uint64(la+1)*uint64(w) > lcsMaxCells {
		c.Error("ERR Insufficient memory, failed allocating transient memory for LCS")
		return
	}
	t := make([]uint32, (la+1)*w)
	for i := 1; i <= la; i++ {
		row, prev := t[i*w:(i+1)*w], t[(i-1)*w:i*w]
		for j := 1; j <= lb; j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := t[la*w+lb]
	if getLen {
		c.W.Int(int64(total))
		return
	}

	// Walk back, collecting the subsequence and the runs of consecutive
	// matches (ranges), emitted from the end of the strings to the start.
	type match struct{ aStart, aEnd, bStart, bEnd int }
	var out []match
	seq := make([]byte, total)
	k := int(total)
	inRange := false
	var cur match
	i, j := la, lb
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			seq[k-1] = a[i-1]
			if !inRange {
				cur = match{i - 1, i - 1, j - 1, j - 1}
				inRange = true
			} else {
				// The previous step matched at (i, j): the run extends.
				cur.aStart--
				cur.bStart--
			}
			if cur.aStart == 0 || cur.bStart == 0 {
				emit = true
			}
			k--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			emit = inRange
		}
		if emit {
			if n := int64(cur.aEnd - cur.aStart + 1); minLen == 0 || n >= minLen {
				out = append(out, cur)
			}
			inRange = false
		}
	}
	if !getIdx {
		c.W.Bulk(seq)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(out))
	for _, m := range out {
		if withLen {
			c.W.Array(3)
		} else {
			c.W.Array(2)
		}
		c.W.Array(2)
		c.W.Int(int64(m.aStart))
		c.W.Int(int64(m.aEnd))
		c.W.Array(2)
		c.W.Int(int64(m.bStart))
		c.W.Int(int64(m.bEnd))
		if withLen {
			c.W.Int(int64(m.aEnd - m.aStart + 1))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
