package stream

import (
	"math/rand"
	"reflect"
	"strconv"
	"testing"
)

// TestCursorAndEdges reads a changing stream the way a consumer group
// does (from after the last id read, starting at the cursor the previous
// read left) and checks every read, and the first and last entries,
// against the same reads by plain iterators.
func TestCursorAndEdges(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		lim := Limits{NodeMaxBytes: int64(60 + r.Intn(200)), NodeMaxEntries: int64(1 + r.Intn(6))}
		s := New()
		var cur Cursor
		var last ID // what the reader has read up to
		next := ID{1, 0}
		for op := 0; op < 3000; op++ {
			switch k := r.Intn(12); {
			case k < 5:
				next = ID{next.Ms + uint64(r.Intn(2)), uint64(1 + r.Intn(3))}
				if !s.CanAppend(next) {
					next = s.LastID
					next.Seq++
				}
				v := []byte(strconv.Itoa(r.Intn(1000)))
				s.Append(next, [][]byte{[]byte("a"), v, []byte("b"), []byte("x")}, lim)
			case k < 6:
				s.XDel([]ID{{next.Ms - min(next.Ms, uint64(r.Intn(3))), uint64(r.Intn(3))}})
			case k < 7:
				s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(r.Intn(30)), Approx: r.Intn(2) == 0})
			case k < 8:
				// Back to an earlier position, as XGROUP SETID moves a group.
				last = ID{uint64(r.Intn(int(next.Ms) + 1)), 0}
			case k < 9 && s.Len() == 0:
				// An empty stream's id set back: new nodes take ids (and
				// master ids) removed nodes had.
				back := ID{next.Ms - min(next.Ms-1, uint64(r.Intn(10))), 0}
				s.LastID, next = back, back
				if cur.gen != 0 && cur.master.Seq > 0 && r.Intn(2) == 0 {
					// A new node with the master id of the cursor's.
					s.LastID = ID{cur.master.Ms, cur.master.Seq - 1}
					next = cur.master
					s.Append(next, [][]byte{[]byte("a"), []byte("back"), []byte("b"), []byte("x")}, lim)
				}
			default:
				start, _ := last.Next()
				count := 1 + r.Intn(4)
				want := collect(s, start, MaxID, false)
				if len(want) > count {
					want = want[:count]
				}
				it := s.RangeFrom(start, MaxID, cur)
				var got []modelEntry
				for len(got) < count && it.Next() {
					e := modelEntry{id: it.ID}
					for _, b := range it.FV {
						e.fv = append(e.fv, string(b))
					}
					got = append(got, e)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d op %d: read from %v: got %v, want %v", seed, op, start, got, want)
				}
				if len(got) > 0 {
					cur = it.Cursor()
					last = it.ID
				}
			}
			all := collect(s, ID{}, MaxID, false)
			first, ok := s.FirstEntry(false)
			if ok != (len(all) > 0) || ok && first != all[0].id {
				t.Fatalf("seed %d op %d: first %v %v, want %v", seed, op, first, ok, all)
			}
			lastE, ok := s.LastEntry()
			if ok != (len(all) > 0) || ok && lastE != all[len(all)-1].id {
				t.Fatalf("seed %d op %d: last %v %v, want %v", seed, op, lastE, ok, all)
			}
		}
	}
}
