package stream

import (
	"encoding/binary"
	"sort"
	"strconv"
)

// Entry flags, Redis's STREAM_ITEM_FLAG_*.
const (
	FlagDeleted    = 1
	FlagSameFields = 2
)

// MaxNodeBytes is STREAM_LISTPACK_MAX_SIZE: a node never grows past it
// whatever stream-node-max-bytes says.
const MaxNodeBytes = 1 << 30

// InvalidEntriesRead is SCG_INVALID_ENTRIES_READ: a group whose logical
// read counter is unknown.
const InvalidEntriesRead = -1

// Limits are the node limits: stream-node-max-bytes and
// stream-node-max-entries (0 means no limit, as in Redis).
type Limits struct {
	NodeMaxBytes   int64
	NodeMaxEntries int64
}

// DefaultLimits are Redis's defaults.
func DefaultLimits() Limits { return Limits{NodeMaxBytes: 4096, NodeMaxEntries: 100} }

// node is a run of entries sharing a master id and master fields.
//
// buf: uvarint count of master fields, each as uvarint length and bytes
// (the header, hdr bytes); then the entries, each: flags byte, uvarint
// ms delta from master, zig-zag varint seq delta from master (Redis
// keeps seq-master.seq as a signed integer too), then either the values
// only (FlagSameFields) or a uvarint field count and the field and value
// strings, each string as uvarint length and bytes.
type node struct {
	master ID
	last   ID // the last entry's id, tombstones included
	buf    []byte
	hdr    int32
	nmf    int32 // master fields
	live   int32
	dead   int32
	// lastOff is the offset of the last entry's flags byte (the last
	// entry is read without walking the node).
	lastOff int32
	// gen tells this node from an earlier one with the same master id
	// (a stream emptied, its id set back by XSETID, refilled), for
	// Cursors.
	gen uint32
	// lpBase is the byte size Redis's listpack for this node has, less
	// the two counters (live, dead) whose encoded size changes with them.
	lpBase int32
}

func (n *node) lpBytes() int64 {
	return int64(n.lpBase) + int64(lpIntSize(int64(n.live))) + int64(lpIntSize(int64(n.dead)))
}

// Stream is a stream value.
type Stream struct {
	nodes        []node
	length       int64
	LastID       ID // last-generated-id
	FirstID      ID // first live entry, 0-0 when empty (recorded-first-entry-id)
	MaxDeletedID ID // max-deleted-entry-id
	EntriesAdded int64
	groups       []*Group // by name
	gens         uint32   // nodes created, for node.gen
}

// New returns an empty stream.
func New() *Stream { return &Stream{} }

// Len is the number of live entries.
func (s *Stream) Len() int64 { return s.length }

// Nodes is the number of nodes (XINFO's radix-tree-keys).
func (s *Stream) Nodes() int { return len(s.nodes) }

func appendStr(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Entry strings are elements: a canonical integer below 2^61 in absolute
// value as uvarint(zigzag(v)<<1 | 1), anything else as uvarint(len<<1)
// and its bytes. Integers take a few bytes where their text took up to
// twenty, as listpack stores them; reading one formats it into the
// reader's scratch buffer.
func appendElem(b, s []byte) []byte {
	if len(s) <= 20 {
		if v, ok := ParseCanonicalInt(s); ok && v > -(1<<61) && v < 1<<61 {
			return binary.AppendUvarint(b, zigzag(v)<<1|1)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<1)
	return append(b, s...)
}

// readElem reads the element at off; an integer's text is appended to
// *scratch, which the result then aliases.
func readElem(b []byte, off int, scratch *[]byte) ([]byte, int) {
	h, n := binary.Uvarint(b[off:])
	off += n
	if h&1 != 0 {
		sc := *scratch
		start := len(sc)
		sc = strconv.AppendInt(sc, unzigzag(h>>1), 10)
		*scratch = sc
		return sc[start:len(sc):len(sc)], off
	}
	l := int(h >> 1)
	return b[off : off+l : off+l], off + l
}

func skipElem(b []byte, off int) int {
	h, n := binary.Uvarint(b[off:])
	off += n
	if h&1 == 0 {
		off += int(h >> 1)
	}
	return off
}

func readStr(b []byte, off int) ([]byte, int) {
	l, n := binary.Uvarint(b[off:])
	off += n
	return b[off : off+int(l) : off+int(l)], off + int(l)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// masterFields decodes n's master fields into dst.
func (n *node) masterFields(dst [][]byte) [][]byte {
	dst = dst[:0]
	cnt, off := binary.Uvarint(n.buf)
	for i := uint64(0); i < cnt; i++ {
		var f []byte
		f, off = readStr(n.buf, off)
		dst = append(dst, f)
	}
	return dst
}

// sameFields reports whether fv's fields are n's master fields, in order.
func (n *node) sameFields(fv [][]byte) bool {
	if int(n.nmf) != len(fv)/2 {
		return false
	}
	off := uvarintLen(uint64(n.nmf))
	for i := 0; i < len(fv); i += 2 {
		var f []byte
		f, off = readStr(n.buf, off)
		if string(f) != string(fv[i]) {
			return false
		}
	}
	return true
}

// CanAppend reports whether id may be appended: it must be above LastID.
func (s *Stream) CanAppend(id ID) bool { return s.LastID.Less(id) }

// Append adds an entry with id (greater than LastID; the caller checks)
// and the field-value pairs fv (copied), as Redis's streamAppendItem.
func (s *Stream) Append(id ID, fv [][]byte, lim Limits) {
	tot := int64(0)
	for _, b := range fv {
		tot += int64(len(b))
	}
	var tail *node
	if k := len(s.nodes); k > 0 {
		tail = &s.nodes[k-1]
		maxBytes := lim.NodeMaxBytes
		if maxBytes <= 0 || maxBytes > MaxNodeBytes {
			maxBytes = MaxNodeBytes
		}
		if tail.lpBytes()+tot >= maxBytes {
			tail = nil
		} else if lim.NodeMaxEntries > 0 && int64(tail.live)+int64(tail.dead) >= lim.NodeMaxEntries {
			tail = nil
		}
		if tail == nil {
			nd := &s.nodes[k-1]
			nd.buf = shrink(nd.buf)
		}
	}
	if tail == nil {
		s.gens++
		s.nodes = append(s.nodes, node{master: id, gen: s.gens})
		tail = &s.nodes[len(s.nodes)-1]
		nf := len(fv) / 2
		hdr, entry := 2, 4
		for i := 0; i < len(fv); i += 2 {
			hdr += len(fv[i]) + 1
			entry += len(fv[i+1]) + 1
		}
		b := make([]byte, 0, hdr+nodeCap(entry, lim))
		b = binary.AppendUvarint(b, uint64(nf))
		base := lpHeaderSize + lpIntSize(int64(nf)) + lpIntSize(0) // count of fields, terminator
		for i := 0; i < len(fv); i += 2 {
			b = appendStr(b, fv[i])
			base += lpStrSize(fv[i])
		}
		tail.buf = b
		tail.hdr = int32(len(b))
		tail.nmf = int32(nf)
		tail.lpBase = int32(base)
	}
	tail.appendEntry(id, 0, fv)
	tail.live++
	s.length++
	s.EntriesAdded++
	s.LastID = id
	if s.length == 1 {
		s.FirstID = id
	}
}

// nodeCap is the room a new node's buffer gets for its entries: as many
// entries like its first one as the node will take, within the node
// byte limit, so that a node is allocated once rather than grown by
// doubling (which left as much garbage as data, and RSS with it).
func nodeCap(entry int, lim Limits) int {
	n := entry * 16
	if lim.NodeMaxEntries > 0 {
		n = entry * int(min(lim.NodeMaxEntries, 1000))
	}
	if lim.NodeMaxBytes > 0 && int64(n) > lim.NodeMaxBytes {
		n = int(lim.NodeMaxBytes)
	}
	return n + n/16
}

// appendEntry encodes an entry at the end of n (the caller sets the
// counters): its flags (deleted kept, same-fields decided here), its id
// as deltas from the master id, then its values (same fields) or its
// field count, fields and values; and adds the entry's size in Redis's
// listpack to lpBase.
func (n *node) appendEntry(id ID, flags byte, fv [][]byte) {
	flags &^= FlagSameFields
	if n.sameFields(fv) {
		flags |= FlagSameFields
	}
	msd := id.Ms - n.master.Ms
	seqd := int64(id.Seq - n.master.Seq)
	b := n.buf
	n.lastOff = int32(len(b))
	b = append(b, flags)
	b = binary.AppendUvarint(b, msd)
	b = binary.AppendUvarint(b, zigzag(seqd))
	lp := lpIntSize(int64(flags)) + lpIntSize(int64(msd)) + lpIntSize(seqd)
	if flags&FlagSameFields != 0 {
		for i := 1; i < len(fv); i += 2 {
			b = appendElem(b, fv[i])
			lp += lpStrSize(fv[i])
		}
		lp += lpIntSize(int64(len(fv)/2 + 3))
	} else {
		b = binary.AppendUvarint(b, uint64(len(fv)/2))
		lp += lpIntSize(int64(len(fv) / 2))
		for _, x := range fv {
			b = appendElem(b, x)
			lp += lpStrSize(x)
		}
		lp += lpIntSize(int64(len(fv) + 4))
	}
	n.buf = b
	n.lpBase += int32(lp)
	n.last = id
}

// shrink drops the spare capacity of a node that will not grow again,
// when it is more than an eighth of what the node holds.
func shrink(b []byte) []byte {
	if cap(b)-len(b) > 16+len(b)/8 {
		return append([]byte(nil), b...)
	}
	return b
}

// entry is a decoded entry position.
type entry struct {
	off   int // offset of its flags byte
	end   int // offset after it
	id    ID
	flags byte
}

// decode reads the entry at off; fv receives its fields and values
// (aliasing the node), master the node's master fields.
func (n *node) decode(off int, master [][]byte, fv [][]byte, scratch *[]byte) (entry, [][]byte) {
	*scratch = (*scratch)[:0]
	e := entry{off: off, flags: n.buf[off]}
	p := off + 1
	msd, k := binary.Uvarint(n.buf[p:])
	p += k
	zs, k := binary.Uvarint(n.buf[p:])
	p += k
	e.id = ID{n.master.Ms + msd, n.master.Seq + uint64(unzigzag(zs))}
	fv = fv[:0]
	if e.flags&FlagSameFields != 0 {
		for _, f := range master {
			var v []byte
			v, p = readElem(n.buf, p, scratch)
			fv = append(fv, f, v)
		}
	} else {
		cnt, k := binary.Uvarint(n.buf[p:])
		p += k
		for i := uint64(0); i < cnt*2; i++ {
			var x []byte
			x, p = readElem(n.buf, p, scratch)
			fv = append(fv, x)
		}
	}
	e.end = p
	return e, fv
}

// skip returns the offset after the entry at off, and its id and flags.
func (n *node) skip(off int) (entry, int) {
	e, p := n.head(off)
	return e, n.skipFields(e, p)
}

// head reads the flags and the id of the entry at off and returns them
// with the offset of its fields (e.end is not set).
func (n *node) head(off int) (entry, int) {
	e := entry{off: off, flags: n.buf[off]}
	p := off + 1
	msd, k := binary.Uvarint(n.buf[p:])
	p += k
	zs, k := binary.Uvarint(n.buf[p:])
	p += k
	e.id = ID{n.master.Ms + msd, n.master.Seq + uint64(unzigzag(zs))}
	return e, p
}

// skipFields returns the offset after the fields of e, which start at p.
func (n *node) skipFields(e entry, p int) int {
	cnt := uint64(n.nmf)
	if e.flags&FlagSameFields == 0 {
		c, k := binary.Uvarint(n.buf[p:])
		p += k
		cnt = c * 2
	}
	for i := uint64(0); i < cnt; i++ {
		p = skipElem(n.buf, p)
	}
	return p
}

// offsets lists the entry offsets of n in order.
func (n *node) offsets(dst []int) []int {
	dst = dst[:0]
	for off := int(n.hdr); off < len(n.buf); {
		dst = append(dst, off)
		_, off = n.skip(off)
	}
	return dst
}

// nodeFor returns the index of the last node whose master is <= id, or
// -1.
func (s *Stream) nodeFor(id ID) int {
	i := sort.Search(len(s.nodes), func(i int) bool { return id.Less(s.nodes[i].master) })
	return i - 1
}

// Iter walks entries in id order (or reverse); fields and values alias
// the stream or the iterator and stay valid until the next call to Next
// or a change of the stream.
type Iter struct {
	s          *Stream
	start, end ID
	rev        bool
	tombstones bool
	ni         int
	off        int   // forward: next entry offset
	offs       []int // reverse: entry offsets of the current node
	oi         int
	master     [][]byte
	fv         [][]byte
	scratch    []byte // integers' text
	begun      bool
	// Current entry.
	ID      ID
	Flags   byte
	FV      [][]byte
	curNode int
	curOff  int
	curEnd  int // the offset after the current entry
}

// Range returns an iterator over the live entries with start <= id <= end,
// in reverse order if rev.
func (s *Stream) Range(start, end ID, rev bool) *Iter {
	return &Iter{s: s, start: start, end: end, rev: rev}
}

// RangeAll is Range including tombstones (Redis's iterator with
// skip_tombstones off).
func (s *Stream) RangeAll(start, end ID, rev bool) *Iter {
	return &Iter{s: s, start: start, end: end, rev: rev, tombstones: true}
}

func (it *Iter) enterNode(i int) {
	it.ni = i
	n := &it.s.nodes[i]
	if nf := int(n.nmf); cap(it.master) < nf || cap(it.fv) < 2*nf {
		// One block for the master fields and an entry's fields and
		// values, sized for the node, rather than slices grown by
		// appending on every new iterator.
		b := make([][]byte, 3*nf+4)
		it.master, it.fv = b[:0:nf+1], b[nf+1:nf+1]
	}
	if it.scratch == nil {
		it.scratch = make([]byte, 0, 64)
	}
	it.master = n.masterFields(it.master)
	if it.rev {
		it.offs = n.offsets(it.offs)
		it.oi = len(it.offs) - 1
	} else {
		it.off = int(n.hdr)
	}
}

// Next moves to the next entry, reporting false at the end.
func (it *Iter) Next() bool {
	s := it.s
	if !it.begun {
		it.begun = true
		if it.end.Less(it.start) || len(s.nodes) == 0 {
			it.ni = len(s.nodes)
			return false
		}
		if it.rev {
			i := s.nodeFor(it.end)
			if i < 0 {
				it.ni = -1
				return false
			}
			it.enterNode(i)
		} else {
			i := s.nodeFor(it.start)
			if i < 0 {
				i = 0
			}
			it.enterNode(i)
		}
	}
	for {
		if it.rev {
			if it.ni < 0 {
				return false
			}
			n := &s.nodes[it.ni]
			if it.oi < 0 {
				if it.ni == 0 {
					it.ni = -1
					return false
				}
				it.enterNode(it.ni - 1)
				continue
			}
			off := it.offs[it.oi]
			it.oi--
			e, _ := n.skip(off)
			if it.end.Less(e.id) {
				continue
			}
			if e.id.Less(it.start) {
				it.ni = -1
				return false
			}
			if e.flags&FlagDeleted != 0 && !it.tombstones {
				continue
			}
			it.set(n, off)
			return true
		}
		if it.ni >= len(s.nodes) {
			return false
		}
		n := &s.nodes[it.ni]
		if it.off >= len(n.buf) {
			if it.ni+1 >= len(s.nodes) {
				it.ni = len(s.nodes)
				return false
			}
			it.enterNode(it.ni + 1)
			continue
		}
		// The entry's head decides; a returned entry's fields are read
		// once, by set, which also finds where the next entry starts.
		off := it.off
		e, p := n.head(off)
		if e.id.Less(it.start) || e.flags&FlagDeleted != 0 && !it.tombstones && !it.end.Less(e.id) {
			it.off = n.skipFields(e, p)
			continue
		}
		if it.end.Less(e.id) {
			it.ni = len(s.nodes)
			return false
		}
		it.off = it.set(n, off)
		return true
	}
}

// set makes the entry at off of node it.ni the current one and returns
// the offset after it.
func (it *Iter) set(n *node, off int) int {
	var e entry
	e, it.fv = n.decode(off, it.master, it.fv, &it.scratch)
	it.ID, it.Flags, it.FV = e.id, e.flags, it.fv
	it.curNode, it.curOff, it.curEnd = it.ni, off, e.end
	return e.end
}

// Get returns the fields and values of the live entry id (aliasing the
// stream), or ok false.
func (s *Stream) Get(id ID) (fv [][]byte, ok bool) {
	it := s.Range(id, id, false)
	if it.Next() {
		return it.FV, true
	}
	return nil, false
}

// Has reports whether a live entry id exists.
func (s *Stream) Has(id ID) bool {
	i := s.nodeFor(id)
	if i < 0 {
		return false
	}
	n := &s.nodes[i]
	if n.last.Less(id) {
		return false
	}
	for off := int(n.hdr); off < len(n.buf); {
		e, next := n.skip(off)
		if e.id == id {
			return e.flags&FlagDeleted == 0
		}
		if id.Less(e.id) {
			return false
		}
		off = next
	}
	return false
}

// Delete removes the live entry id (Redis's streamDeleteItem), reporting
// whether it existed. It updates neither FirstID nor MaxDeletedID: XDEL
// does that, as Redis's command does.
func (s *Stream) Delete(id ID) bool {
	i := s.nodeFor(id)
	if i < 0 {
		return false
	}
	n := &s.nodes[i]
	if n.last.Less(id) {
		return false
	}
	for off := int(n.hdr); off < len(n.buf); {
		e, next := n.skip(off)
		if e.id == id {
			if e.flags&FlagDeleted != 0 {
				return false
			}
			s.deleteAt(i, off)
			return true
		}
		if id.Less(e.id) {
			return false
		}
		off = next
	}
	return false
}

// deleteAt flags the live entry at off of node i deleted, removing the
// node when it was its last live entry.
func (s *Stream) deleteAt(i, off int) {
	n := &s.nodes[i]
	s.length--
	if n.live == 1 {
		s.removeNode(i)
		return
	}
	n.buf[off] |= FlagDeleted
	n.live--
	n.dead++
}

func (s *Stream) removeNode(i int) {
	copy(s.nodes[i:], s.nodes[i+1:])
	s.nodes[len(s.nodes)-1] = node{}
	s.nodes = s.nodes[:len(s.nodes)-1]
}

// FirstEntry returns the first entry's id, tombstones included when
// tombstones is set (Redis's streamGetEdgeID); ok false when there is
// none.
func (s *Stream) FirstEntry(tombstones bool) (ID, bool) {
	if len(s.nodes) > 0 {
		// A node's first entry, unless it is a tombstone, is the answer
		// without an iterator.
		n := &s.nodes[0]
		if int(n.hdr) < len(n.buf) && (tombstones || n.buf[n.hdr]&FlagDeleted == 0) {
			e, _ := n.head(int(n.hdr))
			return e.id, true
		}
	}
	var it *Iter
	if tombstones {
		it = s.RangeAll(ID{}, MaxID, false)
	} else {
		it = s.Range(ID{}, MaxID, false)
	}
	if it.Next() {
		return it.ID, true
	}
	return ID{}, false
}

// LastEntry returns the last live entry's id: the last node's last
// entry unless it is a tombstone (a node with no live entry is removed,
// so only then is the node walked).
func (s *Stream) LastEntry() (ID, bool) {
	if k := len(s.nodes); k > 0 {
		if n := &s.nodes[k-1]; n.lastOff >= n.hdr && n.buf[n.lastOff]&FlagDeleted == 0 {
			return n.last, true
		}
	}
	it := s.Range(ID{}, MaxID, true)
	if it.Next() {
		return it.ID, true
	}
	return ID{}, false
}

// updateFirst sets FirstID to the first live entry (0-0 when empty).
func (s *Stream) updateFirst() {
	if s.length == 0 {
		s.FirstID = ID{}
		return
	}
	s.FirstID, _ = s.FirstEntry(false)
}

// XDel deletes the given ids as XDEL does, maintaining FirstID and
// MaxDeletedID, and returns how many existed.
func (s *Stream) XDel(ids []ID) int {
	deleted := 0
	firstGone := false
	for _, id := range ids {
		if s.Delete(id) {
			if id == s.FirstID {
				firstGone = true
			}
			if s.MaxDeletedID.Less(id) {
				s.MaxDeletedID = id
			}
			deleted++
		}
	}
	if deleted > 0 {
		if s.length == 0 {
			s.FirstID = ID{}
		} else if firstGone {
			s.FirstID, _ = s.FirstEntry(false)
		}
	}
	return deleted
}

// Trim strategies.
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs are a trim's strategy and bounds (Redis's streamAddTrimArgs).
type TrimArgs struct {
	Strategy int
	MaxLen   int64
	MinID    ID
	Approx   bool
	Limit    int64 // 0: no limit
}

// Trim removes entries as Redis's streamTrim does: whole nodes while it
// can, then (unless approximate) entries of the next node are flagged
// deleted; at most Limit entries when Limit is set. It returns how many
// entries it removed.
func (s *Stream) Trim(a TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	var deleted int64
	for len(s.nodes) > 0 {
		if a.Strategy == TrimMaxLen && s.length <= a.MaxLen {
			break
		}
		n := &s.nodes[0]
		entries := int64(n.live)
		if a.Limit != 0 && deleted+entries > a.Limit {
			break
		}
		var remove bool
		if a.Strategy == TrimMaxLen {
			remove = s.length-entries >= a.MaxLen
		} else {
			remove = n.last.Less(a.MinID)
		}
		if remove {
			s.length -= entries
			deleted += entries
			s.removeNode(0)
			continue
		}
		if a.Approx {
			break
		}
		var fromNode int32
		for off := int(n.hdr); off < len(n.buf); {
			e, next := n.skip(off)
			var stop bool
			if a.Strategy == TrimMaxLen {
				stop = s.length <= a.MaxLen
			} else {
				stop = !e.id.Less(a.MinID)
			}
			if stop {
				break
			}
			if e.flags&FlagDeleted == 0 {
				n.buf[off] |= FlagDeleted
				fromNode++
				s.length--
			}
			off = next
		}
		deleted += int64(fromNode)
		n.live -= fromNode
		n.dead += fromNode
		break
	}
	if deleted > 0 {
		// Nothing removed leaves the first entry where it was.
		s.updateFirst()
	}
	return deleted
}

// EstimateDistance is streamEstimateDistanceFromFirstEverEntry: the
// logical counter of id (how many entries were added up to it), or
// InvalidEntriesRead when it cannot be known.
func (s *Stream) EstimateDistance(id ID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Compare(s.LastID) < 1 {
		return s.EntriesAdded
	}
	cmpLast := id.Compare(s.LastID)
	if cmpLast == 0 {
		return s.EntriesAdded
	} else if cmpLast > 0 {
		return InvalidEntriesRead
	}
	cmpFirst := id.Compare(s.FirstID)
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Less(s.FirstID) {
		if cmpFirst < 0 {
			return s.EntriesAdded - s.length
		} else if cmpFirst == 0 {
			return s.EntriesAdded - s.length + 1
		}
	}
	return InvalidEntriesRead
}

// RangeHasTombstones is streamRangeHasTombstones; nil bounds are open.
func (s *Stream) RangeHasTombstones(start, end *ID) bool {
	if s.length == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	if s.MaxDeletedID.Less(s.FirstID) {
		return false
	}
	st, en := ID{}, MaxID
	if start != nil {
		st = *start
	}
	if end != nil {
		en = *end
	}
	return st.Compare(s.MaxDeletedID) <= 0 && s.MaxDeletedID.Compare(en) <= 0
}

// Lag is the group's lag as XINFO reports it (streamReplyWithCGLag); ok
// false means unknown (a null reply).
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != InvalidEntriesRead && !s.RangeHasTombstones(&g.LastID, nil) {
		return s.EntriesAdded - g.EntriesRead, true
	}
	er := s.EstimateDistance(g.LastID)
	if er != InvalidEntriesRead {
		return s.EntriesAdded - er, true
	}
	return 0, false
}

// Encoding is OBJECT ENCODING's answer.
func (s *Stream) Encoding() string { return "stream" }

// MemoryUsage estimates the bytes s holds.
func (s *Stream) MemoryUsage() int {
	n := 96 + cap(s.nodes)*72
	for i := range s.nodes {
		n += cap(s.nodes[i].buf)
	}
	for _, g := range s.groups {
		n += 96 + len(g.Name) + len(g.pel)*64
		for _, c := range g.consumers {
			n += 64 + len(c.Name) + cap(c.pel)*8
		}
	}
	return n
}

// CloneValue is Clone for keyspace.Value.
func (s *Stream) CloneValue() any { return s.Clone() }

// Clone returns a deep copy.
func (s *Stream) Clone() *Stream {
	c := *s
	c.nodes = make([]node, len(s.nodes))
	for i, n := range s.nodes {
		n.buf = append([]byte(nil), n.buf...)
		c.nodes[i] = n
	}
	c.groups = make([]*Group, len(s.groups))
	for i, g := range s.groups {
		c.groups[i] = g.clone()
	}
	return &c
}

// RaxNodes is the number of nodes Redis's radix tree would have for the
// nodes' master ids as 128-bit big-endian keys (XINFO's radix-tree-nodes),
// counted for the compressed tree those keys make.
func (s *Stream) RaxNodes() int {
	if len(s.nodes) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.nodes))
	for i := range s.nodes {
		binary.BigEndian.PutUint64(keys[i][:8], s.nodes[i].master.Ms)
		binary.BigEndian.PutUint64(keys[i][8:], s.nodes[i].master.Seq)
	}
	return raxCount(keys, 0)
}

// raxCount counts the nodes of the subtree for keys (sorted, sharing
// their first d bytes) rooted at depth d.
func raxCount(keys [][16]byte, d int) int {
	if len(keys) == 1 {
		if d == 16 {
			return 1
		}
		return 2 // a compressed node and the key's leaf
	}
	first, last := keys[0], keys[len(keys)-1]
	l := d
	for l < 16 && first[l] == last[l] {
		l++
	}
	n := 1 // the branching node at l
	if l > d {
		n++ // a compressed node from d to l
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][l] == keys[i][l] {
			j++
		}
		n += raxCount(keys[i:j], l+1)
		i = j
	}
	return n
}
