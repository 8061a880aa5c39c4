package list

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A snapshot keeps the elements of its range as they were, whatever is
// done to the list afterwards: in-place edits (Set, Insert, Remove,
// Trim), pops, pushes, and the compactions and splits they cause.
func TestSnapshotSurvivesMutations(t *testing.T) {
	for _, fill := range []int{-2, -1, 3, 16} {
		r := rand.New(rand.NewPCG(uint64(fill+10), 7))
		l := New(fill)
		type taken struct {
			s    *Snapshot
			want []string
		}
		var snaps []taken
		val := func() []byte {
			n := r.IntN(30)
			if r.IntN(20) == 0 {
				n = 3000 + r.IntN(9000) // a node of its own
			}
			return []byte(fmt.Sprintf("%d-%s", r.IntN(50), make([]byte, n)))
		}
		for step := range 3000 {
			switch k := r.IntN(10); {
			case k < 3 || l.Len() < 5:
				if r.IntN(2) == 0 {
					l.PushBack(val(), val())
				} else {
					l.PushFront(val())
				}
			case k == 3:
				l.Set(r.IntN(l.Len()), val())
			case k == 4:
				pivot, _ := l.Index(r.IntN(l.Len()))
				l.Insert(append([]byte(nil), pivot...), val(), r.IntN(2) == 0)
			case k == 5:
				v, _ := l.Index(r.IntN(l.Len()))
				l.Remove(r.IntN(3)-1, append([]byte(nil), v...))
			case k == 6:
				l.Trim(r.IntN(3), -1-r.IntN(3))
			case k == 7:
				l.PopFront(1 + r.IntN(3))
			case k == 8:
				l.PopBack(1 + r.IntN(3))
			default:
				start, stop := r.IntN(l.Len()+2)-1, r.IntN(l.Len()+4)-2
				var want []string
				for _, v := range l.Range(start, stop) {
					want = append(want, string(v))
				}
				snaps = append(snaps, taken{l.SnapshotRange(start, stop), want})
			}
			if step%100 == 0 || step == 2999 {
				for i, s := range snaps {
					if s.s.Len() != len(s.want) {
						t.Fatalf("fill %d step %d: snapshot %d has %d elements, want %d", fill, step, i, s.s.Len(), len(s.want))
					}
					for j, w := range s.want {
						if got := s.s.At(j); string(got) != w {
							t.Fatalf("fill %d step %d: snapshot %d element %d changed", fill, step, i, j)
						}
					}
				}
			}
		}
		if len(snaps) < 100 {
			t.Fatalf("only %d snapshots taken", len(snaps))
		}
	}
}

// At works in any order, not only forward.
func TestSnapshotAtAnyOrder(t *testing.T) {
	l := New(2)
	for i := range 20 {
		l.PushBack([]byte(fmt.Sprint(i)))
	}
	s := l.SnapshotRange(3, -3)
	for _, i := range []int{14, 0, 7, 8, 1, 13, 2} {
		if got := string(s.At(i)); got != fmt.Sprint(i+3) {
			t.Fatalf("At(%d) = %q", i, got)
		}
	}
	if e := l.SnapshotRange(5, 2); e.Len() != 0 {
		t.Fatalf("empty range: %d elements", e.Len())
	}
}

// Lengths counts the elements by the decimal width of their lengths.
func TestSnapshotLengths(t *testing.T) {
	l := New(-2)
	var want [20]int
	var total int64
	for _, n := range []int{0, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 1234567} {
		l.PushBack(make([]byte, n))
		want[len(fmt.Sprint(n))-1]++
		total += int64(n)
	}
	gotTotal, got := l.SnapshotRange(0, -1).Lengths()
	if gotTotal != total || got != want {
		t.Fatalf("Lengths = %d %v, want %d %v", gotTotal, got, total, want)
	}
}
