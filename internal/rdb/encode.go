package rdb

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// EncodeOptions control how values are written.
type EncodeOptions struct {
	Compress bool  // rdbcompression: LZF for strings over 20 bytes
	Now      int64 // unix ms: hash fields whose TTL is due are left out
	// NoChecksum writes 0 in place of a file's CRC-64 (rdbchecksum no).
	NoChecksum bool
	// ListNodeBytes caps the size of the listpack nodes a list is cut
	// into (0: 8 KiB, Redis's default list-max-listpack-size -2).
	ListNodeBytes int
	// KeyMeta is the eviction metadata a file records before each key,
	// as Redis 7.0 does per maxmemory-policy: IDLE (the LRU idle seconds)
	// under volatile-lru and allkeys-lru, FREQ (the LFU counter, decayed
	// by LFUDecayTime as of Now) under the LFU policies, none otherwise.
	// DUMP payloads never carry it.
	KeyMeta      KeyMeta
	LFUDecayTime int
	// NoFieldTTL writes hashes without their fields' TTLs, in the
	// encodings Redis 7.0 reads (a payload for a redis-server replica).
	NoFieldTTL bool
}

// KeyMeta selects the eviction metadata written before each key of a file.
type KeyMeta uint8

// The kinds of key metadata.
const (
	MetaNone KeyMeta = iota
	MetaIdle
	MetaFreq
)

// AppendValue appends o's value in the RDB encoding chosen for it and
// returns the type code written before it. The encodings are those Redis
// 7.0 reads (see docs/rdb.md), except TypeHashListpackEx and
// TypeHashMetadata for hashes with field TTLs; the caller writes version
// VersionFieldTTL then (see VersionFor).
func AppendValue(dst []byte, o *keyspace.Object, opt EncodeOptions) ([]byte, byte, error) {
	switch o.Type {
	case keyspace.TypeString:
		if o.Enc == keyspace.EncInt {
			return appendInt(dst, o.Int()), TypeString, nil
		}
		return appendString(dst, o.Raw(), opt.Compress), TypeString, nil
	case keyspace.TypeList:
		if l, ok := o.Val().(*list.List); ok {
			return appendList(dst, l, opt), TypeListQuicklist2, nil
		}
	case keyspace.TypeSet:
		if s, ok := o.Val().(*set.Set); ok {
			b, t := appendSet(dst, s, opt)
			return b, t, nil
		}
	case keyspace.TypeZSet:
		if z, ok := o.Val().(*zset.Set); ok {
			b, t := appendZSet(dst, z, opt)
			return b, t, nil
		}
	case keyspace.TypeHash:
		if h, ok := o.Val().(*hash.Hash); ok {
			b, t := appendHash(dst, h, opt)
			return b, t, nil
		}
	case keyspace.TypeStream:
		if s, ok := o.Val().(*stream.Stream); ok {
			return appendStream(dst, s, opt), TypeStreamListpacks2, nil
		}
	case keyspace.TypeTimeSeries:
		if s, ok := o.Val().(*ts.Series); ok {
			return appendSeries(dst, s), TypeModule2, nil
		}
	}
	return dst, 0, fmt.Errorf("values of type %s cannot be serialized", o.Type)
}

// VersionFor is the RDB version a payload holding a value of type code typ
// must carry.
func VersionFor(typ byte) uint16 {
	if typ > TypeStreamListpacks3 {
		return VersionFieldTTL
	}
	return Version
}

// appendList writes a quicklist 2 of listpack nodes. Elements too large to
// share a node go alone in a listpack node, as Redis 7.0 writes them (PLAIN
// nodes only hold elements over 1 GB there).
func appendList(dst []byte, l *list.List, opt EncodeOptions) []byte {
	maxNode := opt.ListNodeBytes
	if maxNode <= 0 {
		maxNode = 8 << 10
	}
	var nodes [][]byte
	var lps []*listpackBuilder
	defer func() {
		for _, lp := range lps {
			lp.free()
		}
	}()
	hint := min(maxNode, l.Len()*16)
	lp := pooledListpack(hint)
	lps = append(lps, lp)
	for _, v := range l.All() {
		if lp.n > 0 && lp.size()+len(v)+11 > maxNode {
			nodes = append(nodes, lp.finish())
			lp = pooledListpack(hint)
			lps = append(lps, lp)
		}
		lp.addString(v)
	}
	if lp.n > 0 {
		nodes = append(nodes, lp.finish())
	}
	dst = appendLen(dst, uint64(len(nodes)))
	for _, n := range nodes {
		dst = appendLen(dst, containerPacked)
		dst = appendString(dst, n, opt.Compress)
	}
	return dst
}

// appendSet writes an intset when the set is one, else a plain set: Redis
// 7.0 has no set listpack, and loads a small plain set as it would build
// it.
func appendSet(dst []byte, s *set.Set, opt EncodeOptions) ([]byte, byte) {
	if s.Kind() == set.KindIntset {
		vs := make([]int64, 0, s.Len())
		ok := true
		for m := range s.All() {
			v, isInt := canonicalInt(m)
			if !isInt {
				ok = false
				break
			}
			vs = append(vs, v)
		}
		if ok {
			slices.Sort(vs)
			blob := appendIntset(nil, vs)
			return appendString(dst, blob, opt.Compress), TypeSetIntset
		}
	}
	dst = appendLen(dst, uint64(s.Len()))
	for m := range s.All() {
		dst = appendString(dst, m, opt.Compress)
	}
	return dst, TypeSet
}

// appendScore adds a zset score to a listpack as Redis's zzlInsertAt does
// (d2string): integral values within 2^52 as integers, -0 as "-0", others
// in %.17g text.
func appendScore(lp *listpackBuilder, f float64) {
	if f == 0 && math.Signbit(f) {
		lp.addString([]byte("-0"))
		return
	}
	if f == math.Trunc(f) && f > -(1<<52-1) && f < 1<<52 {
		lp.addInt(int64(f))
		return
	}
	var tmp [32]byte
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = append(tmp[:0], "inf"...)
	case math.IsInf(f, -1):
		s = append(tmp[:0], "-inf"...)
	default:
		s = strconv.AppendFloat(tmp[:0], f, 'g', 17, 64)
	}
	lp.addString(s)
}

func appendZSet(dst []byte, z *zset.Set, opt EncodeOptions) ([]byte, byte) {
	if z.Encoding() == zset.Listpack {
		lp := pooledListpack(0)
		defer lp.free()
		for m, f := range z.All() {
			lp.addString([]byte(m))
			appendScore(lp, f)
		}
		return appendString(dst, lp.finish(), opt.Compress), TypeZSetListpack
	}
	// Highest score first, as Redis writes ZSET_2, so that loading
	// inserts at the head of its skiplist.
	dst = appendLen(dst, uint64(z.Len()))
	for m, f := range z.RangeByRank(0, z.Len()-1, true) {
		dst = appendString(dst, []byte(m), opt.Compress)
		dst = appendBinaryDouble(dst, f)
	}
	return dst, TypeZSet2
}

type hashField struct {
	f, v []byte
	at   int64
}

func appendHash(dst []byte, h *hash.Hash, opt EncodeOptions) ([]byte, byte) {
	fp := fieldsPool.Get().(*[]hashField)
	fs := (*fp)[:0]
	defer func() {
		if cap(fs) <= 1024 {
			clear(fs) // the fields' bytes are the hash's: not kept alive
			*fp = fs[:0]
			fieldsPool.Put(fp)
		}
	}()
	minExp := int64(0)
	h.RangeWithExpiry(opt.Now, func(f, v []byte, at int64) bool {
		if opt.NoFieldTTL {
			at = 0
		}
		if at != 0 && (minExp == 0 || at < minExp) {
			minExp = at
		}
		fs = append(fs, hashField{f, v, at})
		return true
	})
	small := h.Encoding() != "hashtable"
	size := 0
	for _, e := range fs {
		size += len(e.f) + len(e.v) + 4
	}
	switch {
	case minExp == 0 && small:
		lp := pooledListpack(size)
		defer lp.free()
		for _, e := range fs {
			lp.addString(e.f)
			lp.addString(e.v)
		}
		return appendString(dst, lp.finish(), opt.Compress), TypeHashListpack
	case minExp == 0:
		dst = appendLen(dst, uint64(len(fs)))
		for _, e := range fs {
			dst = appendString(dst, e.f, opt.Compress)
			dst = appendString(dst, e.v, opt.Compress)
		}
		return dst, TypeHash
	case small:
		// Redis 7.4 keeps fields with TTLs first, by expiry, then the
		// others; RangeWithExpiry gives the small form in that order, but
		// sort anyway so the invariant never depends on it.
		slices.SortStableFunc(fs, func(a, b hashField) int {
			switch {
			case a.at == b.at:
				return 0
			case a.at == 0:
				return 1
			case b.at == 0:
				return -1
			case a.at < b.at:
				return -1
			}
			return 1
		})
		lp := pooledListpack(size + 10*len(fs))
		defer lp.free()
		for _, e := range fs {
			lp.addString(e.f)
			lp.addString(e.v)
			lp.addInt(e.at)
		}
		dst = appendMillis(dst, minExp)
		return appendString(dst, lp.finish(), opt.Compress), TypeHashListpackEx
	}
	dst = appendMillis(dst, minExp)
	dst = appendLen(dst, uint64(len(fs)))
	for _, e := range fs {
		ttl := uint64(0)
		if e.at != 0 {
			ttl = uint64(e.at-minExp) + 1
		}
		dst = appendLen(dst, ttl)
		dst = appendString(dst, e.f, opt.Compress)
		dst = appendString(dst, e.v, opt.Compress)
	}
	return dst, TypeHashMetadata
}
