package list

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// sameNodes fails unless a and b hold the same elements in the same nodes.
func sameNodes(t *testing.T, what string, a, b *List) {
	t.Helper()
	if a.Len() != b.Len() || a.Packed() != b.Packed() || a.nodeCount() != b.nodeCount() {
		t.Fatalf("%s: len %d/%d packed %v/%v nodes %d/%d", what, a.Len(), b.Len(), a.Packed(), b.Packed(), a.nodeCount(), b.nodeCount())
	}
	for i := 0; i < a.nodeCount(); i++ {
		x, y := a.node(i), b.node(i)
		if x.count() != y.count() || x.payload != y.payload {
			t.Fatalf("%s node %d: count %d/%d payload %d/%d", what, i, x.count(), y.count(), x.payload, y.payload)
		}
		for j := 0; j < x.count(); j++ {
			if !bytes.Equal(x.get(j), y.get(j)) {
				t.Fatalf("%s node %d element %d differs", what, i, j)
			}
		}
	}
}

func randomVals(r *rand.Rand, n int) [][]byte {
	vals := make([][]byte, n)
	for i := range vals {
		switch r.IntN(5) {
		case 0:
			vals[i] = strconv.AppendInt(nil, r.Int64N(1<<40)-1<<39, 10)
		case 1:
			vals[i] = bytes.Repeat([]byte{'x'}, r.IntN(5000))
		case 2:
			vals[i] = strconv.AppendInt(nil, r.Int64N(200), 10)
		default:
			vals[i] = bytes.Repeat([]byte{'y'}, r.IntN(40))
		}
	}
	return vals
}

// A prepared push makes, node for node, the list the ordinary push makes,
// from every state of the pushed end: new, packed, quicklist.
func TestPushPreparedAsPush(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, fill := range []int{-5, -2, -1, 0, 1, 5, 128} {
		for trial := 0; trial < 30; trial++ {
			prep, ref := New(fill), New(fill)
			for step := 0; step < 6; step++ {
				front := r.IntN(2) == 0
				vals := randomVals(r, r.IntN(3000)+1)
				p := Prepare(prep.End(front), front, vals)
				if step == 0 && p != nil && prep.End(front) != NewEnd(fill) {
					t.Fatalf("fill %d: a new list's end is not NewEnd", fill)
				}
				if !prep.PushPrepared(p, vals) {
					if p != nil {
						t.Fatalf("fill %d step %d: prepared push refused in the state it was prepared for", fill, step)
					}
					if front {
						prep.PushFront(vals...)
					} else {
						prep.PushBack(vals...)
					}
				}
				if front {
					ref.PushFront(vals...)
				} else {
					ref.PushBack(vals...)
				}
				sameNodes(t, "fill "+strconv.Itoa(fill), prep, ref)
				if r.IntN(2) == 0 {
					k := r.IntN(200)
					prep.PopFront(k)
					ref.PopFront(k)
				}
			}
		}
	}
}

// A push prepared for one state is refused once the end has changed.
func TestPushPreparedRefusedAfterChange(t *testing.T) {
	l := New(DefaultFill)
	vals := randomVals(rand.New(rand.NewPCG(5, 6)), 5000)
	p := Prepare(l.End(false), false, vals)
	l.PushBack([]byte("x"))
	if l.PushPrepared(p, vals) {
		t.Fatal("pushed though the tail changed")
	}
	if l.Len() != 1 {
		t.Fatalf("len %d after a refused push", l.Len())
	}
	p = Prepare(l.End(true), true, vals)
	if !l.PushPrepared(p, vals) || l.Len() != 5001 {
		t.Fatalf("prepared LPUSH not taken (len %d)", l.Len())
	}
}
