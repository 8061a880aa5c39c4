package commands

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis's dataset digest
// (computeDatasetDigest and xorObjectDigest in Redis's debug.c), bit for
// bit, so that the same data gives the same hex string on Abacus and on
// redis-server.
//
// A digest is 20 bytes. xor adds SHA1(data) into it (order-insensitive:
// keys, set members, hash fields, zset members); mix replaces it with
// SHA1(digest xor SHA1(data)) (order-sensitive: list elements, stream
// entries). A key's digest is mix(key name), mix(the type's 32-bit code,
// big-endian), the value, and xor("!!expire!!") when it has a TTL; the
// dataset's is, per non-empty database in order, mix(its index, 32-bit
// big-endian) then xor of its keys' digests. Keys whose TTL passed but
// were not reclaimed count, as in Redis (the digest reads the dictionary).
//
// Per type:
//   - string: mix(value), an integer as its decimal text;
//   - list: mix(element) from head to tail;
//   - set: xor(member);
//   - zset: xor of, per member, a digest of mix(member), mix(score as
//     %.17g);
//   - hash: xor of, per field, a digest of mix(field), mix(value); fields
//     whose TTL (Redis 7.4's field expiry) has passed are left out;
//   - stream: Redis's: each entry's id, fields and values, in order;
//   - time series (Abacus's ABACUS-TS, a module type to Redis: code 5):
//     computed like a module's digest callback, one sequence per sample
//     (its timestamp as decimal text, then its value as %.17g) ended by
//     EndSequence (the sequence's digest xored into the value's); then,
//     as Redis does with a module's digest, xored into the key's digest.
//     Settings (retention, labels, rules) are not part of it.

// Redis's object type codes (server.h), which the digest hashes.
const (
	objString = 0
	objList   = 1
	objSet    = 2
	objZSet   = 3
	objHash   = 4
	objModule = 5
	objStream = 6
)

type digest [20]byte

// xor adds SHA1(p) to d (xorDigest).
func (d *digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix makes d SHA1(d xor SHA1(p)) (mixDigest).
func (d *digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

func be32(n uint32) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n)
	return b[:]
}

// objectDigest mixes o's type and value, and its TTL mark, into d
// (xorObjectDigest).
func objectDigest(d *digest, o *keyspace.Object, now int64) {
	var tmp [32]byte
	switch o.Type {
	case keyspace.TypeString:
		d.mix(be32(objString))
		d.mix(o.Bytes(tmp[:0]))
	case keyspace.TypeList:
		d.mix(be32(objList))
		if l, ok := o.Val().(*list.List); ok {
			for _, v := range l.All() {
				d.mix(v)
			}
		}
	case keyspace.TypeSet:
		d.mix(be32(objSet))
		if s, ok := o.Val().(*set.Set); ok {
			for m := range s.All() {
				d.xor(m)
			}
		}
	case keyspace.TypeZSet:
		d.mix(be32(objZSet))
		if z, ok := o.Val().(*zset.Set); ok {
			for m, score := range z.All() {
				var e digest
				e.mix([]byte(m))
				e.mix(num.AppendDouble(tmp[:0], score))
				d.xor(e[:])
			}
		}
	case keyspace.TypeHash:
		d.mix(be32(objHash))
		if h, ok := o.Val().(*hash.Hash); ok {
			h.Range(now, func(f, v []byte) bool {
				var e digest
				e.mix(f)
				e.mix(v)
				d.xor(e[:])
				return true
			})
		}
	case keyspace.TypeStream:
		d.mix(be32(objStream))
		if st, ok := o.Val().(*stream.Stream); ok {
			// Each entry's id as "<ms>.<seq>", then its fields and values,
			// in order; groups are not part of it (Redis 7.0).
			for it := st.Range(stream.ID{}, stream.MaxID, false); it.Next(); {
				id := strconv.AppendUint(tmp[:0], it.ID.Ms, 10)
				id = append(id, '.')
				id = strconv.AppendUint(id, it.ID.Seq, 10)
				d.mix(id)
				for _, f := range it.FV {
					d.mix(f)
				}
			}
		}
	case keyspace.TypeTimeSeries:
		d.mix(be32(objModule))
		if s, ok := o.Val().(*ts.Series); ok {
			var x digest // the module digest's x: the xor of its sequences
			s.Scan(math.MinInt64, math.MaxInt64, func(t int64, v float64) bool {
				var seq digest // its o: one sequence
				seq.mix(strconv.AppendInt(tmp[:0], t, 10))
				seq.mix(num.AppendDouble(tmp[:0], v))
				x.xor(seq[:])
				return true
			})
			d.xor(x[:])
		}
	}
	if o.Expire != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// datasetDigest is computeDatasetDigest over every database.
func datasetDigest(e *engine.Env, now int64) digest {
	var final digest
	for j, db := range e.KS.DBs {
		if db.Len() == 0 {
			continue
		}
		final.mix(be32(uint32(j)))
		db.ForEach(func(o *keyspace.Object) {
			var d digest
			d.mix([]byte(o.Key))
			objectDigest(&d, o, now)
			final.xor(d[:])
		})
	}
	return final
}

// cmdDebugDigest is DEBUG DIGEST: the dataset's digest as a status reply
// (forty zeros for an empty dataset).
func cmdDebugDigest(c *engine.Ctx) {
	d := datasetDigest(c.Env, c.Now)
	c.W.Simple(d.hex())
}

// cmdDebugDigestValue is DEBUG DIGEST-VALUE key ...: each value's digest
// (without its key name), forty zeros for a missing key. Like Redis it
// reads keys whose TTL passed but were not reclaimed.
func cmdDebugDigestValue(c *engine.Ctx) {
	c.W.Array(len(c.Args) - 2)
	for i := 2; i < len(c.Args); i++ {
		var d digest
		if o := c.DB.Peek(c.Key(i)); o != nil {
			objectDigest(&d, o, c.Now)
		}
		c.W.Simple(d.hex())
	}
}
