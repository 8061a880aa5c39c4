package list

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// model is the obvious implementation the List must agree with.
type model []string

func (m model) bounds(start, stop int) (int, int, bool) {
	n := len(m)
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	start = max(start, 0)
	stop = min(stop, n-1)
	if start > stop {
		return 0, 0, false
	}
	return start, stop, true
}

func (m model) pos(v string, rank, count, maxlen int) []int {
	var idx []int
	if rank >= 0 {
		for i := range m {
			idx = append(idx, i)
		}
	} else {
		for i := len(m) - 1; i >= 0; i-- {
			idx = append(idx, i)
		}
	}
	if maxlen > 0 && len(idx) > maxlen {
		idx = idx[:maxlen]
	}
	skip := max(rank-1, 0)
	if rank < 0 {
		skip = -rank - 1
	}
	var out []int
	for _, i := range idx {
		if m[i] != v {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, i)
		if count > 0 && len(out) == count {
			break
		}
	}
	return out
}

// valueGen draws values that exercise duplicates, integer encodings,
// empty strings and elements larger than a node.
func valueGen(r *rand.Rand) []byte {
	switch k := r.IntN(100); {
	case k < 40:
		return []byte(string(rune('a' + r.IntN(5))))
	case k < 60:
		return []byte(fmt.Sprint(r.IntN(20000) - 10000))
	case k < 65:
		return nil
	case k < 97:
		return []byte(strings.Repeat(string(rune('a'+r.IntN(3))), r.IntN(300)))
	default:
		return []byte(strings.Repeat("L", 3000+r.IntN(10000)))
	}
}

func TestRandomOpsAgainstModel(t *testing.T) {
	fills := []int{-1, -2, -5, 0, 1, 2, 3, 5, 16, 128}
	for _, fill := range fills {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("fill=%d/seed=%d", fill, seed), func(t *testing.T) {
				runRandomOps(t, fill, seed, 3000)
			})
		}
	}
}

func runRandomOps(t *testing.T, fill int, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, uint64(fill+1000)))
	l := New(fill)
	var m model
	sawQuick := false
	// Views handed out earlier, with the contents they had.
	type held struct {
		v    []byte
		want string
	}
	var views []held
	hold := func(v []byte) {
		if r.IntN(10) == 0 {
			views = append(views, held{v, string(v)})
		}
	}
	idx := func() int { return r.IntN(2*len(m)+6) - len(m) - 3 }
	// Favour growth at first so lists get big enough to convert.
	growBias := 60
	for step := range steps {
		if step == steps/2 {
			growBias = 35
		}
		op := r.IntN(100)
		shrinks := false
		switch {
		case op < growBias:
			k := 1 + r.IntN(4)
			vals := make([][]byte, k)
			for i := range vals {
				vals[i] = valueGen(r)
			}
			if r.IntN(2) == 0 {
				l.PushBack(vals...)
				for _, v := range vals {
					m = append(m, string(v))
				}
			} else {
				l.PushFront(vals...)
				for _, v := range vals {
					m = slices.Insert(m, 0, string(v))
				}
			}
		case op < growBias+8:
			c := r.IntN(6) - 1
			var got [][]byte
			var want []string
			if r.IntN(2) == 0 {
				got = l.PopFront(c)
				k := min(max(c, 0), len(m))
				want = slices.Clone(m[:k])
				m = m[k:]
			} else {
				got = l.PopBack(c)
				k := min(max(c, 0), len(m))
				for i := len(m) - 1; i >= len(m)-k; i-- {
					want = append(want, m[i])
				}
				m = m[:len(m)-k]
			}
			shrinks = len(got) > 0
			if !slices.Equal(strs(got), want) {
				t.Fatalf("step %d: pop(%d) = %q, want %q", step, c, strs(got), want)
			}
			for _, v := range got {
				hold(v)
			}
		case op < growBias+14:
			i := idx()
			v, ok := l.Index(i)
			j := i
			if j < 0 {
				j += len(m)
			}
			wantOK := j >= 0 && j < len(m)
			if ok != wantOK || ok && string(v) != m[j] {
				t.Fatalf("step %d: Index(%d) = %q, %v", step, i, v, ok)
			}
			if ok {
				hold(v)
			}
		case op < growBias+20:
			i, v := idx(), valueGen(r)
			ok := l.Set(i, v)
			j := i
			if j < 0 {
				j += len(m)
			}
			if wantOK := j >= 0 && j < len(m); ok != wantOK {
				t.Fatalf("step %d: Set(%d) = %v", step, i, ok)
			}
			if ok {
				m[j] = string(v)
			}
			shrinks = ok
		case op < growBias+26:
			start, stop := idx(), idx()
			got := l.Range(start, stop)
			var want []string
			if lo, hi, ok := m.bounds(start, stop); ok {
				want = m[lo : hi+1]
			}
			if !slices.Equal(strs(got), want) {
				t.Fatalf("step %d: Range(%d, %d) = %q, want %q", step, start, stop, strs(got), want)
			}
			var each []string
			l.EachInRange(start, stop, func(v []byte) { each = append(each, string(v)) })
			if !slices.Equal(each, want) || l.RangeLen(start, stop) != len(want) {
				t.Fatalf("step %d: EachInRange(%d, %d) = %q (RangeLen %d), want %q", step, start, stop, each, l.RangeLen(start, stop), want)
			}
			if len(got) > 0 {
				hold(got[0])
			}
		case op < growBias+32:
			pivot, v := valueGen(r), valueGen(r)
			if len(m) > 0 && r.IntN(2) == 0 {
				pivot = []byte(m[r.IntN(len(m))])
			}
			after := r.IntN(2) == 0
			ok := l.Insert(pivot, v, after)
			at := slices.Index(m, string(pivot))
			if ok != (at >= 0) {
				t.Fatalf("step %d: Insert found=%v, model %d", step, ok, at)
			}
			if ok {
				if after {
					at++
				}
				m = slices.Insert(m, at, string(v))
			}
		case op < growBias+37:
			count := r.IntN(7) - 3
			v := valueGen(r)
			if len(m) > 0 && r.IntN(2) == 0 {
				v = []byte(m[r.IntN(len(m))])
			}
			n := l.Remove(count, v)
			want := modelRemove(&m, count, string(v))
			if n != want {
				t.Fatalf("step %d: Remove(%d) = %d, want %d", step, count, n, want)
			}
			shrinks = n > 0
		case op < growBias+39:
			start, stop := idx(), idx()
			if r.IntN(2) == 0 { // mostly keep something
				start, stop = r.IntN(3), -1-r.IntN(3)
			}
			l.Trim(start, stop)
			if lo, hi, ok := m.bounds(start, stop); ok {
				m = m[lo : hi+1]
			} else {
				m = nil
			}
			shrinks = true
		default:
			v := valueGen(r)
			if len(m) > 0 && r.IntN(3) > 0 {
				v = []byte(m[r.IntN(len(m))])
			}
			rank := r.IntN(7) - 3
			if rank == 0 {
				rank = 1
			}
			count, maxlen := r.IntN(4), r.IntN(2)*r.IntN(len(m)+2)
			got := l.Pos(v, rank, count, maxlen)
			want := m.pos(string(v), rank, count, maxlen)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: Pos(rank %d, count %d, maxlen %d) = %v, want %v", step, rank, count, maxlen, got, want)
			}
		}
		if l.Len() != len(m) {
			t.Fatalf("step %d: Len %d, model %d", step, l.Len(), len(m))
		}
		if !l.Packed() {
			sawQuick = true
		}
		checkInvariants(t, l)
		if shrinks {
			checkShrunk(t, l)
		}
		if step%50 == 0 || step == steps-1 {
			if got := contents(l); !slices.Equal(got, []string(m)) && len(m)+len(got) > 0 {
				t.Fatalf("step %d: contents differ\n got %q\nwant %q", step, got, m)
			}
			var back []string
			for _, v := range l.Backward() {
				back = append(back, string(v))
			}
			slices.Reverse(back)
			if !slices.Equal(back, []string(m)) && len(m)+len(back) > 0 {
				t.Fatalf("step %d: Backward differs", step)
			}
			for _, h := range views {
				if string(h.v) != h.want {
					t.Fatalf("step %d: a view changed from %.20q to %.20q", step, h.want, h.v)
				}
			}
		}
	}
	if !sawQuick {
		t.Errorf("never left listpack form")
	}
}

func modelRemove(m *model, count int, v string) int {
	s := *m
	removed := 0
	if count >= 0 {
		limit := count
		out := s[:0:0]
		for _, e := range s {
			if e == v && (limit == 0 || removed < limit) {
				removed++
				continue
			}
			out = append(out, e)
		}
		*m = out
		return removed
	}
	limit := -count
	var out []string
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v && removed < limit {
			removed++
			continue
		}
		out = append(out, s[i])
	}
	slices.Reverse(out)
	*m = out
	return removed
}

func TestDequeAgainstSlice(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 7))
		var d deque[int]
		var m []int
		next := 0
		for step := range 20000 {
			switch op := r.IntN(11); {
			case op < 3:
				d.pushBack(next)
				m = append(m, next)
			case op < 5:
				d.pushFront(next)
				m = slices.Insert(m, 0, next)
			case op < 7:
				i := r.IntN(len(m) + 1)
				d.insert(i, next)
				m = slices.Insert(m, i, next)
			case op < 8:
				k := r.IntN(40)
				d.reserve(d.len()+k, r.IntN(2) == 0)
			default:
				if len(m) == 0 {
					continue
				}
				i := r.IntN(len(m))
				j := i + r.IntN(min(len(m)-i, 4)+1)
				d.removeRange(i, j)
				m = slices.Delete(m, i, j)
			}
			next++
			if !slices.Equal(d.items(), m) && len(m)+d.len() > 0 {
				t.Fatalf("seed %d step %d: deque %v, want %v", seed, step, d.items(), m)
			}
			if cap(d.s) > 8*len(m)+64 {
				t.Fatalf("seed %d step %d: capacity %d for %d elements", seed, step, cap(d.s), len(m))
			}
		}
	}
}
