package list

// A large push is mostly the packing of its values into nodes, which
// depends only on the values and on the state of the end the push goes
// to: whether the list is packed, the node limit, and the size and entry
// count of the end node (the rules of growFor, allowInsert and
// appendFitting read nothing else). Prepare does that packing ahead, on a
// copy of that state, without the list; PushPrepared then checks that
// the list's end is still in that state and only appends the values that
// join the end node and splices the prepared nodes, in time linear in the
// number of nodes. The result is the list, node for node, that PushBack
// or PushFront would have made.

// EndState is what a push to one end of a list depends on, taken from
// the list under the caller's lock (cheap) and handed to Prepare.
type EndState struct {
	fill   int
	packed bool
	bytes  int // the end node's lpBytes (the whole listpack when packed)
	count  int // its entries
}

// End returns the state of the list's head (front) or tail end.
func (l *List) End(front bool) EndState {
	st := EndState{fill: l.fill, packed: l.ql == nil}
	var nd *node
	switch {
	case l.ql == nil:
		nd = &l.lp
	case front:
		nd = l.ql.at(0)
	default:
		nd = l.ql.at(l.ql.len() - 1)
	}
	st.bytes, st.count = nd.lpBytes(), nd.count()
	return st
}

// NewEnd is the state of a list New(fill) makes.
func NewEnd(fill int) EndState { return EndState{fill: fill, packed: true, bytes: lpHeaderBytes} }

// Prepared is a push packed ahead by Prepare.
type Prepared struct {
	st    EndState
	front bool
	n     int    // values in all
	join  int    // the first join values go to the existing end node
	nodes []node // the rest, in list order
}

// Values is a push's values read in order, a range at a time, so that
// they need not all be held as slices at once: a connection's parser
// hands out the arguments of a large command where they lie in its input
// (resp.Args), and a million slice headers would be a million pointers
// for the collector to mark while the packing runs.
type Values interface {
	Len() int
	// AppendRange appends values [from, to) to dst and returns it.
	AppendRange(dst [][]byte, from, to int) [][]byte
}

// prepareChunk is how many values Prepare holds as slices at a time.
const prepareChunk = 4096

// Prepare packs vals as PushFront (front) or PushBack would push them to
// a list whose end is in state st. It returns nil when the push would
// leave the list packed (small pushes gain nothing). It copies the
// values and keeps no reference to vals; it does not need the list, so
// it runs without the list's lock.
//
// It reads vals prepareChunk values at a time. Pushing the chunks one
// after the other makes the nodes pushing them all at once makes: the
// only decision taken over the whole push, growFor's conversion of a
// listpack, is taken first over all of them, and a quicklist push goes
// value by value.
func Prepare(st EndState, front bool, vals Values) *Prepared {
	// A stand-in for the end node: the same size and entry count, which
	// is all the packing rules read; its own bytes are dropped.
	end := node{payload: st.bytes - lpHeaderBytes}
	end.ents.s = make([]ent, st.count)
	scratch := &List{fill: st.fill}
	n := vals.Len()
	chunk := make([][]byte, 0, min(n, prepareChunk))
	if st.packed {
		scratch.lp = end
		lp, maxBytes := end.lpBytes(), scratch.packedMax()
		for from := 0; from < n && lp <= maxBytes; from += prepareChunk {
			chunk = vals.AppendRange(chunk[:0], from, min(from+prepareChunk, n))
			lp = addLens(chunk, lp, maxBytes)
		}
		scratch.growTo(lp, n)
	} else {
		scratch.ql = &deque[node]{}
		scratch.ql.pushBack(end)
	}
	if scratch.ql == nil {
		return nil
	}
	for from := 0; from < n; from += prepareChunk {
		chunk = vals.AppendRange(chunk[:0], from, min(from+prepareChunk, n))
		if front {
			scratch.PushFront(chunk...)
		} else {
			scratch.PushBack(chunk...)
		}
	}
	clear(chunk) // keeps no reference to vals
	p := &Prepared{st: st, front: front, n: n}
	nodes := scratch.ql.items()
	if st.count > 0 {
		// The stand-in is in the list: at the pushed end.
		if front {
			p.join = nodes[len(nodes)-1].count() - st.count
			nodes = nodes[:len(nodes)-1]
		} else {
			p.join = nodes[0].count() - st.count
			nodes = nodes[1:]
		}
	}
	p.nodes = nodes
	return p
}

// PushPrepared pushes vals, the values p was prepared from, as PushFront
// (p's front) or PushBack would, when the list's end is still in the state
// p was prepared for, and reports whether it did; otherwise the list is
// unchanged and the caller pushes the ordinary way.
func (l *List) PushPrepared(p *Prepared, vals [][]byte) bool {
	if p == nil || len(vals) != p.n || l.End(p.front) != p.st {
		return false
	}
	l.growFor(vals...)
	if l.ql == nil {
		return false // not what Prepare found: cannot happen for the same state
	}
	if p.front {
		// PushFront pushes vals[0] first: the first join values go into
		// the head node, the rest make the nodes before it.
		if p.join > 0 {
			l.PushFront(vals[:p.join]...)
		}
		l.ql.reserve(l.ql.len()+len(p.nodes), true)
		for i := len(p.nodes) - 1; i >= 0; i-- {
			l.ql.pushFront(p.nodes[i])
		}
	} else {
		if p.join > 0 {
			l.PushBack(vals[:p.join]...)
		}
		l.ql.reserve(l.ql.len()+len(p.nodes), false)
		for i := range p.nodes {
			l.ql.pushBack(p.nodes[i])
		}
	}
	l.n += len(vals) - p.join
	p.nodes = nil // the list owns them now
	return true
}
