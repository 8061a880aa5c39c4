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
				p := Prepare(prep.End(front), front, &chunkedValues{vals: vals})
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
	p := Prepare(l.End(false), false, &chunkedValues{vals: vals})
	l.PushBack([]byte("x"))
	if l.PushPrepared(p, vals) {
		t.Fatal("pushed though the tail changed")
	}
	if l.Len() != 1 {
		t.Fatalf("len %d after a refused push", l.Len())
	}
	p = Prepare(l.End(true), true, &chunkedValues{vals: vals})
	if !l.PushPrepared(p, vals) || l.Len() != 5001 {
		t.Fatalf("prepared LPUSH not taken (len %d)", l.Len())
	}
}

// chunkedValues is Values over a slice that records the longest range
// asked for.
type chunkedValues struct {
	vals    [][]byte
	longest int
}

func (c *chunkedValues) Len() int { return len(c.vals) }

func (c *chunkedValues) AppendRange(dst [][]byte, from, to int) [][]byte {
	c.longest = max(c.longest, to-from)
	return append(dst, c.vals[from:to]...)
}

// A push of several chunks, read a chunk at a time, makes the list the
// ordinary push makes, including when only the whole push's count
// converts the listpack (fill 10000 and empty values: no chunk alone
// passes it) and when the whole push leaves it packed (nothing prepared).
func TestPrepareValuesInChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 3*prepareChunk + 17
	small := func(int) []byte { return strconv.AppendInt(nil, r.Int64N(100000), 10) }
	empty := func(int) []byte { return []byte{} }
	for _, tc := range []struct {
		fill int
		val  func(int) []byte
		want string // the list after the push: "packed", "converted", "" either
	}{
		{-2, small, "converted"}, {-5, small, ""}, {128, small, "converted"},
		{10000, empty, "converted"}, {100000, empty, "packed"},
	} {
		for _, front := range []bool{false, true} {
			for _, before := range []int{0, 3, 2000} {
				prep, ref := New(tc.fill), New(tc.fill)
				for i := 0; i < before; i++ {
					v := small(i)
					prep.PushBack(v)
					ref.PushBack(v)
				}
				vals := make([][]byte, n)
				for i := range vals {
					vals[i] = tc.val(i)
				}
				cv := &chunkedValues{vals: vals}
				p := Prepare(prep.End(front), front, cv)
				what := "fill " + strconv.Itoa(tc.fill) + " front " + strconv.FormatBool(front) + " before " + strconv.Itoa(before)
				if cv.longest > prepareChunk {
					t.Fatalf("%s: read %d values at once", what, cv.longest)
				}
				if front {
					ref.PushFront(vals...)
				} else {
					ref.PushBack(vals...)
				}
				want := tc.want
				if before == 2000 {
					want = "" // 2000 values are past the listpack's bytes already
				}
				if (p == nil) != ref.Packed() || want == "packed" && !ref.Packed() || want == "converted" && ref.Packed() {
					t.Fatalf("%s: prepared %v, list packed after the push %v, want %q", what, p != nil, ref.Packed(), want)
				}
				if p == nil {
					continue
				}
				if !prep.PushPrepared(p, vals) {
					t.Fatalf("%s: prepared push refused", what)
				}
				sameNodes(t, what, prep, ref)
			}
		}
	}
}
