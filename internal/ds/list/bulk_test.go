package list

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// pushBackOneByOne is PushBack with a push into the tail node per value:
// the rule the bulk append must follow node by node.
func pushBackOneByOne(l *List, vals [][]byte) {
	l.growFor(vals...)
	for _, v := range vals {
		l.n++
		if l.ql == nil {
			l.lp.pushBack(v)
			continue
		}
		if k := l.ql.len(); k > 0 {
			t := l.ql.at(k - 1)
			if l.allowInsert(t, len(v)) {
				t.pushBack(v)
				continue
			}
			l.ql.pushBack(newNodeAfter(t, v))
			continue
		}
		l.ql.pushBack(newNode(v))
	}
}

func TestPushBackBulkSplitsAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, fill := range []int{-5, -2, -1, 0, 1, 5, 128} {
		for trial := 0; trial < 20; trial++ {
			bulk, ref := New(fill), New(fill)
			for step := 0; step < 5; step++ {
				vals := make([][]byte, r.IntN(3000)+1)
				for i := range vals {
					switch r.IntN(4) {
					case 0:
						vals[i] = strconv.AppendInt(nil, r.Int64N(1<<40)-1<<39, 10)
					case 1:
						vals[i] = bytes.Repeat([]byte{'x'}, r.IntN(5000))
					default:
						vals[i] = bytes.Repeat([]byte{'y'}, r.IntN(40))
					}
				}
				bulk.PushBack(vals...)
				pushBackOneByOne(ref, vals)
				sameNodes(t, "fill "+strconv.Itoa(fill), bulk, ref)
				if r.IntN(2) == 0 {
					bulk.PopFront(100)
					ref.PopFront(100)
				}
			}
		}
	}
}
