package resp

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

type elems [][]byte

func (e elems) Len() int        { return len(e) }
func (e elems) At(i int) []byte { return e[i] }
func (e elems) Lengths() (total int64, width [20]int) {
	for _, v := range e {
		total += int64(len(v))
		width[len(strconv.Itoa(len(v)))-1]++
	}
	return total, width
}

// A segment produces, in pieces of any size, exactly the bytes Array and
// Bulk write for the same elements, and Size counts down to 0 with them.
func TestSegmentMatchesWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var els elems
		for range r.IntN(50) {
			n := r.IntN(40)
			switch r.IntN(10) {
			case 0:
				n = 1000 + r.IntN(100) // around the shared headers' end
			case 1:
				n = 5000 + r.IntN(20000)
			}
			v := make([]byte, n)
			for i := range v {
				v[i] = byte('a' + r.IntN(26))
			}
			els = append(els, v)
		}
		var w Writer
		w.Array(len(els))
		for _, v := range els {
			w.Bulk(v)
		}
		seg := NewArraySegment(els)
		if seg.Size() != int64(len(w.Buf)) {
			t.Fatalf("round %d: Size %d, want %d", round, seg.Size(), len(w.Buf))
		}
		var got []byte
		for seg.Size() > 0 {
			room := 1 + r.IntN(3)
			if r.IntN(4) == 0 {
				room = 1 + r.IntN(30000)
			}
			before := len(got)
			got = seg.Next(got, room)
			if k := len(got) - before; k == 0 || k > room {
				t.Fatalf("round %d: Next gave %d bytes for room %d", round, k, room)
			}
		}
		if !bytes.Equal(got, w.Buf) {
			t.Fatalf("round %d: segment bytes differ from the writer's", round)
		}
		// Without a Deferrer, Defer encodes into Buf.
		var w2 Writer
		w2.Simple("OK")
		w2.Defer(NewArraySegment(els))
		if !bytes.Equal(w2.Buf, append([]byte("+OK\r\n"), w.Buf...)) {
			t.Fatalf("round %d: Defer without a Deferrer wrote other bytes", round)
		}
	}
}

// A Deferrer that takes the segment leaves Buf alone; one that declines
// has it encoded.
func TestDeferrer(t *testing.T) {
	els := elems{[]byte("a"), []byte("bc")}
	var took *Segment
	w := Writer{Deferrer: func(s *Segment) bool { took = s; return true }}
	w.Defer(NewArraySegment(els))
	if took == nil || len(w.Buf) != 0 || !w.CanDefer(2) {
		t.Fatalf("taken %v, Buf %q", took != nil, w.Buf)
	}
	// DeferFrom: fewer elements are not offered.
	if w.DeferFrom = 3; w.CanDefer(2) || !w.CanDefer(3) {
		t.Fatalf("DeferFrom 3: CanDefer(2) %v, CanDefer(3) %v", w.CanDefer(2), w.CanDefer(3))
	}
	w.DeferFrom = 0
	w.Deferrer = func(*Segment) bool { return false }
	w.Defer(NewArraySegment(els))
	if string(w.Buf) != "*2\r\n$1\r\na\r\n$2\r\nbc\r\n" {
		t.Fatalf("declined: Buf %q", w.Buf)
	}
}
