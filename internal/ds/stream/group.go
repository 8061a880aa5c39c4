package stream

import (
	"encoding/binary"
	"sort"
)

// Group is a consumer group: its last delivered id, its logical read
// counter, its pending entries list (PEL) and its consumers.
type Group struct {
	Name        string
	LastID      ID
	EntriesRead int64
	pel         pelList // every pending entry of the group, by id
	consumers   []*Consumer
	// Delivered is where the last read of new entries stopped: the next
	// one starts there (a hint, checked by the stream).
	Delivered Cursor
}

// Pending is one entry delivered and not acknowledged (Redis's
// streamNACK): shared by the group's PEL and its consumer's.
type Pending struct {
	ID            ID
	DeliveryTime  int64 // unix ms of the last delivery
	DeliveryCount uint64
	Consumer      *Consumer
}

// Consumer is a group's consumer: its name, when it was last seen, and
// its own PEL.
type Consumer struct {
	Name     string
	SeenTime int64
	pel      pelList
}

// pelList is a PEL: pending entries sorted by id. Deliveries of new
// entries append; acknowledgements and claims of old entries cost a
// move of the pointers after them.
type pelList []*Pending

func (l pelList) search(id ID) int {
	return sort.Search(len(l), func(i int) bool { return !l[i].ID.Less(id) })
}

func (l pelList) find(id ID) *Pending {
	i := l.search(id)
	if i < len(l) && l[i].ID == id {
		return l[i]
	}
	return nil
}

func (l *pelList) insert(p *Pending) bool {
	s := *l
	if n := len(s); n == 0 || s[n-1].ID.Less(p.ID) {
		*l = append(s, p)
		return true
	}
	i := s.search(p.ID)
	if i < len(s) && s[i].ID == p.ID {
		return false
	}
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = p
	*l = s
	return true
}

func (l *pelList) remove(id ID) *Pending {
	s := *l
	i := s.search(id)
	if i >= len(s) || s[i].ID != id {
		return nil
	}
	p := s[i]
	copy(s[i:], s[i+1:])
	s[len(s)-1] = nil
	*l = s[:len(s)-1]
	return p
}

// Groups returns the groups in name order (the caller must not modify
// the slice).
func (s *Stream) Groups() []*Group { return s.groups }

// Group finds a group by name.
func (s *Stream) Group(name []byte) *Group {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		return s.groups[i]
	}
	return nil
}

// CreateGroup adds a group, or returns nil when one by that name exists.
func (s *Stream) CreateGroup(name []byte, last ID, entriesRead int64) *Group {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		return nil
	}
	g := &Group{Name: string(name), LastID: last, EntriesRead: entriesRead}
	s.groups = append(s.groups, nil)
	copy(s.groups[i+1:], s.groups[i:])
	s.groups[i] = g
	return g
}

// DestroyGroup removes a group, reporting whether it existed.
func (s *Stream) DestroyGroup(name []byte) bool {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	if i < len(s.groups) && s.groups[i].Name == string(name) {
		copy(s.groups[i:], s.groups[i+1:])
		s.groups[len(s.groups)-1] = nil
		s.groups = s.groups[:len(s.groups)-1]
		return true
	}
	return false
}

// Consumers returns the consumers in name order.
func (g *Group) Consumers() []*Consumer { return g.consumers }

// Consumer finds a consumer by name.
func (g *Group) Consumer(name []byte) *Consumer {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].Name >= string(name) })
	if i < len(g.consumers) && g.consumers[i].Name == string(name) {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer seen at now, or returns nil when it
// exists.
func (g *Group) CreateConsumer(name []byte, now int64) *Consumer {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].Name >= string(name) })
	if i < len(g.consumers) && g.consumers[i].Name == string(name) {
		return nil
	}
	c := &Consumer{Name: string(name), SeenTime: now}
	g.consumers = append(g.consumers, nil)
	copy(g.consumers[i+1:], g.consumers[i:])
	g.consumers[i] = c
	return c
}

// DeleteConsumer removes a consumer and its pending entries from the
// group; it returns how many entries it had pending, or -1 when there is
// no such consumer.
func (g *Group) DeleteConsumer(name []byte) int {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].Name >= string(name) })
	if i >= len(g.consumers) || g.consumers[i].Name != string(name) {
		return -1
	}
	c := g.consumers[i]
	for _, p := range c.pel {
		g.pel.remove(p.ID)
	}
	n := len(c.pel)
	copy(g.consumers[i:], g.consumers[i+1:])
	g.consumers[len(g.consumers)-1] = nil
	g.consumers = g.consumers[:len(g.consumers)-1]
	return n
}

// PendingLen is the number of entries pending in the group.
func (g *Group) PendingLen() int { return len(g.pel) }

// Pending returns the group's pending entry id, or nil.
func (g *Group) Pending(id ID) *Pending { return g.pel.find(id) }

// PendingFrom returns the group's pending entries from the first with an
// id >= start on (the caller must not modify the slice).
func (g *Group) PendingFrom(start ID) []*Pending { return g.pel[g.pel.search(start):] }

// PendingAll returns the group's pending entries in id order.
func (g *Group) PendingAll() []*Pending { return g.pel }

// AddPending records a new pending entry for consumer c. It returns false,
// changing nothing, when id is pending already.
func (g *Group) AddPending(id ID, c *Consumer, now int64, count uint64) (*Pending, bool) {
	if p := g.pel.find(id); p != nil {
		return p, false
	}
	p := &Pending{ID: id, DeliveryTime: now, DeliveryCount: count, Consumer: c}
	g.pel.insert(p)
	c.pel.insert(p)
	return p, true
}

// Assign moves the pending entry p to consumer c.
func (g *Group) Assign(p *Pending, c *Consumer) {
	if p.Consumer == c {
		return
	}
	p.Consumer.pel.remove(p.ID)
	p.Consumer = c
	c.pel.insert(p)
}

// Ack removes id from the PELs, reporting whether it was pending.
func (g *Group) Ack(id ID) bool {
	p := g.pel.remove(id)
	if p == nil {
		return false
	}
	p.Consumer.pel.remove(id)
	return true
}

// PendingLen is the number of entries pending for the consumer.
func (c *Consumer) PendingLen() int { return len(c.pel) }

// PendingFrom returns the consumer's pending entries from the first with
// an id >= start on.
func (c *Consumer) PendingFrom(start ID) []*Pending { return c.pel[c.pel.search(start):] }

// PendingAll returns the consumer's pending entries in id order.
func (c *Consumer) PendingAll() []*Pending { return c.pel }

func (g *Group) clone() *Group {
	n := &Group{Name: g.Name, LastID: g.LastID, EntriesRead: g.EntriesRead}
	byName := make(map[*Consumer]*Consumer, len(g.consumers))
	n.consumers = make([]*Consumer, len(g.consumers))
	for i, c := range g.consumers {
		nc := &Consumer{Name: c.Name, SeenTime: c.SeenTime}
		n.consumers[i] = nc
		byName[c] = nc
	}
	n.pel = make(pelList, len(g.pel))
	for i, p := range g.pel {
		np := *p
		np.Consumer = byName[p.Consumer]
		n.pel[i] = &np
		np.Consumer.pel = append(np.Consumer.pel, &np)
	}
	return n
}

// NodeView is one node as RDB writes it: its master id, master fields,
// counters and its entries in order (tombstones included).
type NodeView struct {
	Master       ID
	MasterFields [][]byte
	Live, Dead   int
}

// EachNode calls fn for each node, then each entry of it (tombstones
// included, with their flags) through entry.
func (s *Stream) EachNode(fn func(nv NodeView, entries func(yield func(id ID, flags byte, fv [][]byte)))) {
	var master, fv [][]byte
	var scratch []byte
	for i := range s.nodes {
		n := &s.nodes[i]
		master = n.masterFields(master)
		nv := NodeView{Master: n.master, MasterFields: master, Live: int(n.live), Dead: int(n.dead)}
		fn(nv, func(yield func(id ID, flags byte, fv [][]byte)) {
			for off := int(n.hdr); off < len(n.buf); {
				var e entry
				e, fv = n.decode(off, master, fv, &scratch)
				yield(e.id, e.flags, fv)
				off = e.end
			}
		})
	}
}

// LoadNode appends a node as read from an RDB: its master id and fields
// and its entries (tombstones flagged), without touching the counters
// (the caller sets Length, LastID and the rest from the file). Entries
// must come in id order, after every entry already loaded.
func (s *Stream) LoadNode(master ID, masterFields [][]byte, ids []ID, flags []byte, fvs [][][]byte) {
	nf := len(masterFields)
	var b []byte
	b = binary.AppendUvarint(b, uint64(nf))
	base := lpHeaderSize + lpIntSize(int64(nf)) + lpIntSize(0)
	for _, f := range masterFields {
		b = appendStr(b, f)
		base += lpStrSize(f)
	}
	s.gens++
	n := node{master: master, hdr: int32(len(b)), nmf: int32(nf), gen: s.gens}
	n.buf = b
	n.lpBase = int32(base)
	for i, id := range ids {
		n.appendEntry(id, flags[i], fvs[i])
		if flags[i]&FlagDeleted != 0 {
			n.dead++
		} else {
			n.live++
		}
	}
	n.buf = shrink(n.buf)
	s.nodes = append(s.nodes, n)
}

// SetLength sets the live entry count (RDB loading).
func (s *Stream) SetLength(n int64) { s.length = n }

// LastLoaded is the id of the last entry in the nodes (tombstones
// included), for loaders checking order.
func (s *Stream) LastLoaded() (ID, bool) {
	if len(s.nodes) == 0 {
		return ID{}, false
	}
	return s.nodes[len(s.nodes)-1].last, true
}

// CountLive counts the live entries in the nodes.
func (s *Stream) CountLive() int64 {
	var n int64
	for i := range s.nodes {
		n += int64(s.nodes[i].live)
	}
	return n
}

// PendingLoader fills a group's PEL as an RDB holds it: the group's
// entries first, then each consumer's ids, which must name them.
type PendingLoader struct {
	g     *Group
	owned int
}

// LoadPending starts loading g's PEL.
func (g *Group) LoadPending() *PendingLoader { return &PendingLoader{g: g} }

// Add records a pending entry with no consumer yet; false if id is
// already there.
func (l *PendingLoader) Add(id ID, deliveryTime int64, count uint64) bool {
	return l.g.pel.insert(&Pending{ID: id, DeliveryTime: deliveryTime, DeliveryCount: count})
}

// Own gives the pending entry id to c; false if there is no such entry or
// it has an owner.
func (l *PendingLoader) Own(id ID, c *Consumer) bool {
	p := l.g.pel.find(id)
	if p == nil || p.Consumer != nil {
		return false
	}
	p.Consumer = c
	c.pel.insert(p)
	l.owned++
	return true
}

// Done reports whether every pending entry has its consumer.
func (l *PendingLoader) Done() bool { return l.owned == len(l.g.pel) }
