package list

// Snapshot is a range of a list's elements as they were when it was
// taken, which later changes to the list do not affect: it refers to the
// nodes' bytes, which are never overwritten (node), and copies only the
// elements' positions, 8 bytes each. A reply of many elements can so be
// queued as it stands and encoded only as its client reads it
// (resp.Segment). It may be read from any goroutine once handed over,
// one at a time.
type Snapshot struct {
	ents  []ent
	parts []snapPart
	p     int // part of the last At
}

// snapPart is one node's share: ents[start:end] are in buf.
type snapPart struct {
	buf        []byte
	start, end int
}

// SnapshotRange returns Range(start, stop) as a Snapshot.
func (l *List) SnapshotRange(start, stop int) *Snapshot {
	lo, hi, ok := l.bounds(start, stop)
	if !ok {
		return &Snapshot{}
	}
	s := &Snapshot{ents: make([]ent, 0, hi-lo+1)}
	ni, off := l.locate(lo)
	for left := hi - lo + 1; left > 0; ni++ {
		nd := l.node(ni)
		items := nd.ents.items()[off:]
		items = items[:min(len(items), left)]
		s.parts = append(s.parts, snapPart{buf: nd.buf, start: len(s.ents), end: len(s.ents) + len(items)})
		s.ents = append(s.ents, items...)
		left -= len(items)
		off = 0
	}
	return s
}

// Len is the number of elements.
func (s *Snapshot) Len() int { return len(s.ents) }

// At returns element i, quickest when i moves forward one at a time.
// The bytes must not be modified.
func (s *Snapshot) At(i int) []byte {
	if s.p >= len(s.parts) || i < s.parts[s.p].start {
		s.p = 0
	}
	for i >= s.parts[s.p].end {
		s.p++
	}
	e := s.ents[i]
	lo, hi := int(e.off), int(e.off)+int(e.n)
	return s.parts[s.p].buf[lo:hi:hi]
}

// Lengths returns the elements' total length in bytes and how many of
// them have a length of each number of decimal digits (width[d] for
// d+1 digits): what a protocol that writes each length in decimal needs
// to size its encoding without a pass over the elements.
func (s *Snapshot) Lengths() (total int64, width [20]int) {
	for _, e := range s.ents {
		n := e.n
		total += int64(n)
		switch {
		case n < 10:
			width[0]++
		case n < 100:
			width[1]++
		case n < 1000:
			width[2]++
		case n < 10000:
			width[3]++
		default:
			d := 4
			for m := n / 10000; m >= 10; m /= 10 {
				d++
			}
			width[d]++
		}
	}
	return total, width
}

// Memory is the heap bytes the snapshot holds of its own (the node bytes
// it refers to excepted).
func (s *Snapshot) Memory() int { return cap(s.ents)*entSize + cap(s.parts)*40 }
