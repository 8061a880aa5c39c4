package rdb

import (
	"encoding/binary"

	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Streams: RDB_TYPE_STREAM_LISTPACKS_2 (19) is written, as redis-server
// 7.0 writes it; 15 (Redis 5-6.2) and 21 (7.2+, consumers with an active
// time) are read too.
//
//	nodes: count, then per node its master id (16 bytes, big endian) and
//	  its listpack: count, deleted, master field count, master fields, 0,
//	  then per entry flags, ms and seq deltas, [field count,] fields and/or
//	  values, element count
//	length, last id (ms, seq)
//	(19+) first id, max deleted id, entries added
//	groups: count, then per group its name, last id, (19+) entries read,
//	  PEL (count; per entry the raw 16-byte id, delivery time as 8-byte
//	  ms, delivery count), consumers (count; per consumer name, seen
//	  time, (21) active time, PEL of raw ids)

func appendStreamID(dst []byte, id stream.ID) []byte {
	dst = appendLen(dst, id.Ms)
	return appendLen(dst, id.Seq)
}

func rawID(dst []byte, id stream.ID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

// appendStream writes s as type 19.
func appendStream(dst []byte, s *stream.Stream, opt EncodeOptions) []byte {
	dst = appendLen(dst, uint64(s.Nodes()))
	var key [16]byte
	s.EachNode(func(nv stream.NodeView, entries func(yield func(id stream.ID, flags byte, fv [][]byte))) {
		lp := pooledListpack(256)
		defer lp.free()
		lp.addInt(int64(nv.Live))
		lp.addInt(int64(nv.Dead))
		lp.addInt(int64(len(nv.MasterFields)))
		for _, f := range nv.MasterFields {
			lp.addString(f)
		}
		lp.addInt(0)
		entries(func(id stream.ID, flags byte, fv [][]byte) {
			lp.addInt(int64(flags))
			lp.addInt(int64(id.Ms - nv.Master.Ms))
			lp.addInt(int64(id.Seq - nv.Master.Seq))
			if flags&stream.FlagSameFields != 0 {
				for i := 1; i < len(fv); i += 2 {
					lp.addString(fv[i])
				}
				lp.addInt(int64(len(fv)/2 + 3))
			} else {
				lp.addInt(int64(len(fv) / 2))
				for _, x := range fv {
					lp.addString(x)
				}
				lp.addInt(int64(len(fv) + 4))
			}
		})
		dst = appendString(dst, rawID(key[:0], nv.Master), false)
		dst = appendString(dst, lp.finish(), opt.Compress)
	})
	dst = appendLen(dst, uint64(s.Len()))
	dst = appendStreamID(dst, s.LastID)
	dst = appendStreamID(dst, s.FirstID)
	dst = appendStreamID(dst, s.MaxDeletedID)
	dst = appendLen(dst, uint64(s.EntriesAdded))
	groups := s.Groups()
	dst = appendLen(dst, uint64(len(groups)))
	for _, g := range groups {
		dst = appendString(dst, []byte(g.Name), false)
		dst = appendStreamID(dst, g.LastID)
		dst = appendLen(dst, uint64(g.EntriesRead))
		pel := g.PendingAll()
		dst = appendLen(dst, uint64(len(pel)))
		for _, p := range pel {
			dst = rawID(dst, p.ID)
			dst = appendMillis(dst, p.DeliveryTime)
			dst = appendLen(dst, p.DeliveryCount)
		}
		cons := g.Consumers()
		dst = appendLen(dst, uint64(len(cons)))
		for _, c := range cons {
			dst = appendString(dst, []byte(c.Name), false)
			dst = appendMillis(dst, c.SeenTime)
			cp := c.PendingAll()
			dst = appendLen(dst, uint64(len(cp)))
			for _, p := range cp {
				dst = rawID(dst, p.ID)
			}
		}
	}
	return dst
}

func (r *reader) streamID() (stream.ID, error) {
	ms, err := r.count()
	if err != nil {
		return stream.ID{}, err
	}
	seq, err := r.count()
	return stream.ID{Ms: ms, Seq: seq}, err
}

func (r *reader) rawStreamID() (stream.ID, error) {
	p, err := r.bytes(16)
	if err != nil {
		return stream.ID{}, err
	}
	return stream.ID{Ms: binary.BigEndian.Uint64(p), Seq: binary.BigEndian.Uint64(p[8:])}, nil
}

// streamNode parses one node's listpack.
func (r *reader) streamNode(s *stream.Stream, master stream.ID, lp []byte) error {
	var els []elem
	if err := walkListpack(lp, func(b []byte, v int64) error {
		if b != nil {
			b = append([]byte(nil), b...)
		}
		els = append(els, elem{b, v})
		return nil
	}); err != nil {
		return r.corrupt("stream listpack integrity check failed")
	}
	bad := func() error { return r.corrupt("stream listpack integrity check failed") }
	i := 0
	next := func() (elem, bool) {
		if i >= len(els) {
			return elem{}, false
		}
		i++
		return els[i-1], true
	}
	nextInt := func() (int64, bool) {
		e, ok := next()
		if !ok || e.s != nil {
			return 0, false
		}
		return e.v, true
	}
	live, ok1 := nextInt()
	dead, ok2 := nextInt()
	nmf, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || nmf < 0 || nmf > int64(len(els)) {
		return bad()
	}
	master2 := make([][]byte, nmf)
	for k := range master2 {
		e, ok := next()
		if !ok {
			return bad()
		}
		master2[k] = e.bytes()
	}
	if z, ok := nextInt(); !ok || z != 0 {
		return bad()
	}
	var ids []stream.ID
	var flags []byte
	var fvs [][][]byte
	var nlive, ndead int64
	prev := stream.ID{}
	for i < len(els) {
		fl, ok1 := nextInt()
		msd, ok2 := nextInt()
		seqd, ok3 := nextInt()
		if !ok1 || !ok2 || !ok3 || fl < 0 || fl > 3 {
			return bad()
		}
		id := stream.ID{Ms: master.Ms + uint64(msd), Seq: master.Seq + uint64(seqd)}
		var fv [][]byte
		if fl&stream.FlagSameFields != 0 {
			for _, f := range master2 {
				e, ok := next()
				if !ok {
					return bad()
				}
				fv = append(fv, f, e.bytes())
			}
		} else {
			nf, ok := nextInt()
			if !ok || nf < 0 || nf*2 > int64(len(els)-i) {
				return bad()
			}
			for k := int64(0); k < nf*2; k++ {
				e, _ := next()
				fv = append(fv, e.bytes())
			}
		}
		if _, ok := nextInt(); !ok {
			return bad()
		}
		if len(ids) > 0 && !prev.Less(id) || len(ids) == 0 && id.Less(master) {
			return r.corrupt("stream entries out of order")
		}
		prev = id
		if fl&stream.FlagDeleted != 0 {
			ndead++
		} else {
			nlive++
		}
		ids = append(ids, id)
		flags = append(flags, byte(fl))
		fvs = append(fvs, fv)
	}
	if nlive != live || ndead != dead || len(ids) == 0 {
		return r.corrupt("stream listpack counters do not match its entries")
	}
	if last, ok := s.LastLoaded(); ok && !last.Less(ids[0]) {
		return r.corrupt("stream nodes out of order")
	}
	s.LoadNode(master, master2, ids, flags, fvs)
	return nil
}

func (r *reader) stream(typ byte) (*keyspace.Object, error) {
	s := stream.New()
	nodes, err := r.count()
	if err != nil {
		return nil, err
	}
	for ; nodes > 0; nodes-- {
		key, err := r.bstr()
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, r.corrupt("stream node key is not 128 bits")
		}
		lp, err := r.blob()
		if err != nil {
			return nil, err
		}
		master := stream.ID{Ms: binary.BigEndian.Uint64(key), Seq: binary.BigEndian.Uint64(key[8:])}
		if err := r.streamNode(s, master, lp); err != nil {
			return nil, err
		}
	}
	length, err := r.count()
	if err != nil {
		return nil, err
	}
	if int64(length) != s.CountLive() {
		return nil, r.corrupt("stream length does not match its entries")
	}
	s.SetLength(int64(length))
	if s.LastID, err = r.streamID(); err != nil {
		return nil, err
	}
	if typ >= TypeStreamListpacks2 {
		if s.FirstID, err = r.streamID(); err != nil {
			return nil, err
		}
		if s.MaxDeletedID, err = r.streamID(); err != nil {
			return nil, err
		}
		added, err := r.count()
		if err != nil {
			return nil, err
		}
		s.EntriesAdded = int64(added)
	} else {
		s.EntriesAdded = s.Len()
		s.FirstID, _ = s.FirstEntry(false)
	}
	ngroups, err := r.count()
	if err != nil {
		return nil, err
	}
	for ; ngroups > 0; ngroups-- {
		name, err := r.bstr()
		if err != nil {
			return nil, err
		}
		last, err := r.streamID()
		if err != nil {
			return nil, err
		}
		var read int64
		if typ >= TypeStreamListpacks2 {
			v, err := r.count()
			if err != nil {
				return nil, err
			}
			read = int64(v)
		} else {
			read = s.EstimateDistance(last)
		}
		g := s.CreateGroup(name, last, read)
		if g == nil {
			return nil, r.corrupt("duplicated consumer group name")
		}
		npel, err := r.count()
		if err != nil {
			return nil, err
		}
		// The group's PEL first, owned by nobody until its consumer
		// claims it below.
		orphan := g.LoadPending()
		for ; npel > 0; npel-- {
			id, err := r.rawStreamID()
			if err != nil {
				return nil, err
			}
			t, err := r.millis()
			if err != nil {
				return nil, err
			}
			cnt, err := r.count()
			if err != nil {
				return nil, err
			}
			if !orphan.Add(id, t, cnt) {
				return nil, r.corrupt("duplicated global PEL entry")
			}
		}
		ncons, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; ncons > 0; ncons-- {
			cname, err := r.bstr()
			if err != nil {
				return nil, err
			}
			seen, err := r.millis()
			if err != nil {
				return nil, err
			}
			if typ >= TypeStreamListpacks3 {
				if _, err := r.millis(); err != nil { // active time (7.2)
					return nil, err
				}
			}
			c := g.CreateConsumer(cname, seen)
			if c == nil {
				return nil, r.corrupt("duplicated consumer name")
			}
			n, err := r.count()
			if err != nil {
				return nil, err
			}
			for ; n > 0; n-- {
				id, err := r.rawStreamID()
				if err != nil {
					return nil, err
				}
				if !orphan.Own(id, c) {
					return nil, r.corrupt("consumer PEL entry not in the group's PEL")
				}
			}
		}
		if !orphan.Done() {
			return nil, r.corrupt("group PEL entry without a consumer")
		}
	}
	return keyspace.NewValue(keyspace.TypeStream, s), nil
}
