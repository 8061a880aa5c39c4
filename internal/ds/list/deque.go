package list

// deque is a slice-backed double-ended queue of values. Live elements are
// s[head:len(s)]; spare room sits before head and after len(s), so pushes at
// either end are amortized O(1) and insertions or removals in the middle
// move only the shorter side. It holds values, not pointers to them, so a
// deque of nodes costs one allocation for all its nodes.
type deque[T any] struct {
	s    []T
	head int
}

func (d *deque[T]) len() int { return len(d.s) - d.head }

// at returns a pointer to element i. The pointer is valid until the next
// call that adds or removes elements.
func (d *deque[T]) at(i int) *T { return &d.s[d.head+i] }

// items returns the live elements in order, aliasing the deque's storage.
func (d *deque[T]) items() []T { return d.s[d.head:] }

func (d *deque[T]) pushBack(v T) {
	if len(d.s) == cap(d.s) {
		d.grow(false)
	}
	d.s = append(d.s, v)
}

func (d *deque[T]) pushFront(v T) {
	if d.head == 0 {
		d.grow(true)
	}
	d.head--
	d.s[d.head] = v
}

// insert places v so that it becomes element i (0 <= i <= len).
func (d *deque[T]) insert(i int, v T) {
	n := d.len()
	switch {
	case i == n:
		d.pushBack(v)
	case i == 0:
		d.pushFront(v)
	case i < n/2:
		if d.head == 0 {
			d.grow(true)
		}
		d.head--
		copy(d.s[d.head:d.head+i], d.s[d.head+1:d.head+1+i])
		d.s[d.head+i] = v
	default:
		if len(d.s) == cap(d.s) {
			d.grow(false)
		}
		d.s = d.s[:len(d.s)+1]
		copy(d.s[d.head+i+1:], d.s[d.head+i:len(d.s)-1])
		d.s[d.head+i] = v
	}
}

// removeRange deletes elements [i, j).
func (d *deque[T]) removeRange(i, j int) {
	k := j - i
	if k <= 0 {
		return
	}
	n := d.len()
	if i < n-j {
		// Fewer elements before the gap: slide them right.
		copy(d.s[d.head+k:d.head+j], d.s[d.head:d.head+i])
		clear(d.s[d.head : d.head+k])
		d.head += k
	} else {
		copy(d.s[d.head+i:], d.s[d.head+j:])
		clear(d.s[len(d.s)-k:])
		d.s = d.s[:len(d.s)-k]
	}
	if d.len() == 0 {
		d.s, d.head = nil, 0
		return
	}
	d.maybeShrink()
}

// grow reallocates with room for at least one more element at the front
// (atFront) or the back. The side that ran out gets room equal to the
// current length, so repeated pushes cost O(1) amortized; the other side
// keeps at most a quarter of that, so a deque used as a queue (push back,
// pop front) does not keep its popped prefix alive forever.
func (d *deque[T]) grow(atFront bool) {
	n := d.len()
	extra := max(n, 1)
	front, back := d.head, cap(d.s)-len(d.s)
	if atFront {
		front, back = extra, min(back, extra/4)
	} else {
		front, back = min(front, extra/4), extra
	}
	ns := make([]T, front+n, front+n+back)
	copy(ns[front:], d.s[d.head:])
	d.s, d.head = ns, front
}

// reserve makes room for n elements in all, the spare room going to the
// front if atFront and to the back otherwise.
func (d *deque[T]) reserve(n int, atFront bool) {
	cnt := d.len()
	if atFront {
		if d.head+cnt >= n {
			return
		}
		front := n - cnt
		ns := make([]T, front+cnt, front+cnt+cap(d.s)-len(d.s))
		copy(ns[front:], d.s[d.head:])
		d.s, d.head = ns, front
		return
	}
	if cap(d.s)-d.head >= n {
		return
	}
	ns := make([]T, len(d.s), d.head+n)
	copy(ns[d.head:], d.s[d.head:])
	d.s = ns
}

// maybeShrink releases memory when the deque is mostly empty space.
func (d *deque[T]) maybeShrink() {
	n := d.len()
	if cap(d.s) < 32 || n*4 > cap(d.s) {
		return
	}
	front := n / 2
	ns := make([]T, front+n, 2*n)
	copy(ns[front:], d.s[d.head:])
	d.s, d.head = ns, front
}
