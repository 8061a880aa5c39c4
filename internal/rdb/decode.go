package rdb

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Options are the settings decoding builds values with: the thresholds
// that choose encodings, and the time hash field TTLs are compared with.
type Options struct {
	Hash     hash.Limits
	Set      set.Limits
	ZSet     zset.Limits
	ListFill int   // list-max-listpack-size
	Now      int64 // unix ms; fields whose TTL is due are dropped
}

// DefaultOptions are Redis's default thresholds.
func DefaultOptions() Options {
	return Options{Hash: hash.DefaultLimits(), Set: set.DefaultLimits(), ZSet: zset.DefaultLimits(), ListFill: list.DefaultFill}
}

// ErrEmpty reports a collection with no elements, which Redis refuses to
// load (RDB_LOAD_ERR_EMPTY_KEY).
var ErrEmpty = errors.New("empty collection")

// UnsupportedError reports a type Abacus does not hold (modules, streams).
type UnsupportedError struct{ Type byte }

func (e *UnsupportedError) Error() string {
	switch e.Type {
	case TypeModulePreGA, TypeModule2:
		return "module values are not supported"
	case TypeStreamListpacks, TypeStreamListpacks2, TypeStreamListpacks3:
		return "stream values are not supported"
	}
	return fmt.Sprintf("unknown value type %d", e.Type)
}

// DecodeValue decodes one value of type typ from the start of b and
// returns it as a keyspace object (Key and Expire unset) with the number
// of bytes consumed. Strings in the object never alias b.
func DecodeValue(typ byte, b []byte, opt Options) (*keyspace.Object, int, error) {
	r := &reader{b: b}
	o, err := r.value(typ, opt)
	if err != nil {
		return nil, r.off, err
	}
	return o, r.off, nil
}

func (r *reader) value(typ byte, opt Options) (*keyspace.Object, error) {
	switch typ {
	case TypeString:
		s, iv, isInt, err := r.str()
		if err != nil {
			return nil, err
		}
		if isInt {
			return keyspace.NewInt(iv), nil
		}
		return keyspace.NewString(s), nil
	case TypeList, TypeListZiplist, TypeListQuicklist, TypeListQuicklist2:
		return r.list(typ, opt)
	case TypeSet, TypeSetIntset, TypeSetListpack:
		return r.set(typ, opt)
	case TypeZSet, TypeZSet2, TypeZSetZiplist, TypeZSetListpack:
		return r.zset(typ, opt)
	case TypeHash, TypeHashZipmap, TypeHashZiplist, TypeHashListpack:
		return r.hash(typ, opt)
	case TypeHashMetadataPre, TypeHashMetadata, TypeHashListpackExPre, TypeHashListpackEx:
		return r.hashTTL(typ, opt)
	}
	r.off--
	return nil, &UnsupportedError{Type: typ}
}

// blob reads a string holding an encoded blob (listpack, ziplist ...).
func (r *reader) blob() ([]byte, error) {
	s, _, isInt, err := r.str()
	if err != nil {
		return nil, err
	}
	if isInt {
		return nil, r.corrupt("integer where an encoded blob was expected")
	}
	return s, nil
}

func (r *reader) list(typ byte, opt Options) (*keyspace.Object, error) {
	l := list.New(opt.ListFill)
	var scratch [20]byte
	push := func(s []byte, v int64) error {
		l.PushBack(elemBytes(s, v, scratch[:]))
		return nil
	}
	switch typ {
	case TypeList:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			s, err := r.bstr()
			if err != nil {
				return nil, err
			}
			l.PushBack(s)
		}
	case TypeListZiplist:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		if err := walkZiplist(p, push); err != nil {
			return nil, r.corrupt("list ziplist integrity check failed")
		}
	default:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			container := uint64(containerPacked)
			if typ == TypeListQuicklist2 {
				if container, err = r.count(); err != nil {
					return nil, err
				}
				if container != containerPlain && container != containerPacked {
					return nil, r.corrupt("quicklist integrity check failed")
				}
			}
			p, err := r.blob()
			if err != nil {
				return nil, err
			}
			if len(p) == 0 {
				return nil, r.corrupt("empty quicklist node")
			}
			switch {
			case container == containerPlain:
				l.PushBack(p)
			case typ == TypeListQuicklist2:
				if err := walkListpack(p, push); err != nil {
					return nil, r.corrupt("listpack integrity check failed")
				}
			default:
				if err := walkZiplist(p, push); err != nil {
					return nil, r.corrupt("ziplist integrity check failed")
				}
			}
		}
	}
	if l.Len() == 0 {
		return nil, ErrEmpty
	}
	return keyspace.NewValue(keyspace.TypeList, l), nil
}

func (r *reader) set(typ byte, opt Options) (*keyspace.Object, error) {
	s := set.New()
	var dup bool
	switch typ {
	case TypeSet:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			m, err := r.bstr()
			if err != nil {
				return nil, err
			}
			if !s.Add(opt.Set, m) {
				return nil, r.corrupt("duplicate set members")
			}
		}
	case TypeSetIntset:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		if err := walkIntset(p, func(v int64) error { s.AddInt(opt.Set, v); return nil }); err != nil {
			return nil, r.corrupt("intset integrity check failed")
		}
	case TypeSetListpack:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		var scratch [20]byte
		err = walkListpack(p, func(b []byte, v int64) error {
			if !s.Add(opt.Set, elemBytes(b, v, scratch[:])) {
				dup = true
			}
			return nil
		})
		if err != nil || dup {
			return nil, r.corrupt("set listpack integrity check failed")
		}
	}
	if s.Len() == 0 {
		return nil, ErrEmpty
	}
	return keyspace.NewValue(keyspace.TypeSet, s), nil
}

func (r *reader) zset(typ byte, opt Options) (*keyspace.Object, error) {
	var es []zset.Entry
	seen := map[string]struct{}{}
	add := func(m string, f float64) error {
		if math.IsNaN(f) {
			return r.corrupt("zset score is NaN")
		}
		if _, ok := seen[m]; ok {
			return r.corrupt("duplicate zset members")
		}
		seen[m] = struct{}{}
		es = append(es, zset.Entry{Member: m, Score: f})
		return nil
	}
	switch typ {
	case TypeZSet, TypeZSet2:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			m, err := r.bstr()
			if err != nil {
				return nil, err
			}
			var f float64
			if typ == TypeZSet2 {
				f, err = r.binaryDouble()
			} else {
				f, err = r.textDouble()
			}
			if err != nil {
				return nil, err
			}
			if err := add(string(m), f); err != nil {
				return nil, err
			}
		}
	default:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		walk := walkListpack
		if typ == TypeZSetZiplist {
			walk = walkZiplist
		}
		var member []byte
		var haveMember bool
		var bad error
		err = walk(p, func(s []byte, v int64) error {
			if !haveMember {
				member = elemBytes(s, v, nil)
				haveMember = true
				return nil
			}
			haveMember = false
			f := float64(v)
			if s != nil {
				var perr error
				if f, perr = strconv.ParseFloat(string(s), 64); perr != nil {
					bad = r.corrupt("bad zset score %q", s)
					return bad
				}
			}
			if err := add(string(member), f); err != nil {
				bad = err
				return err
			}
			return nil
		})
		if bad != nil {
			return nil, bad
		}
		if err != nil || haveMember {
			return nil, r.corrupt("zset listpack integrity check failed")
		}
	}
	if len(es) == 0 {
		return nil, ErrEmpty
	}
	return keyspace.NewValue(keyspace.TypeZSet, zset.FromEntries(es, opt.ZSet)), nil
}

func (r *reader) hash(typ byte, opt Options) (*keyspace.Object, error) {
	o, h := keyspace.NewHash()
	put := func(f, v []byte) error {
		if !h.Set(opt.Now, f, v, opt.Hash) {
			return r.corrupt("duplicate hash fields")
		}
		return nil
	}
	switch typ {
	case TypeHash:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			f, err := r.bstr()
			if err != nil {
				return nil, err
			}
			v, err := r.bstr()
			if err != nil {
				return nil, err
			}
			if err := put(f, v); err != nil {
				return nil, err
			}
		}
	case TypeHashZipmap:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		var bad error
		if err := walkZipmap(p, func(f, v []byte) error { bad = put(f, v); return bad }); err != nil {
			if bad != nil {
				return nil, bad
			}
			return nil, r.corrupt("zipmap integrity check failed")
		}
	default:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		walk := walkListpack
		if typ == TypeHashZiplist {
			walk = walkZiplist
		}
		var field []byte
		var haveField bool
		var bad error
		var scratch [20]byte
		err = walk(p, func(s []byte, v int64) error {
			if !haveField {
				field = elemBytes(s, v, nil)
				haveField = true
				return nil
			}
			haveField = false
			bad = put(field, elemBytes(s, v, scratch[:]))
			return bad
		})
		if bad != nil {
			return nil, bad
		}
		if err != nil || haveField {
			return nil, r.corrupt("hash listpack integrity check failed")
		}
	}
	if h.Len(opt.Now) == 0 {
		return nil, ErrEmpty
	}
	return o, nil
}

// maxFieldTTL is EB_EXPIRE_TIME_MAX, the largest field expiry time Redis
// accepts (2^48 - 1 ms).
const maxFieldTTL = 1<<48 - 1

// hashTTL decodes Redis 7.4's hashes with field TTLs. Fields whose TTL
// is already due are dropped; a hash left with none is ErrEmpty.
func (r *reader) hashTTL(typ byte, opt Options) (*keyspace.Object, error) {
	o, h := keyspace.NewHash()
	seen := map[string]struct{}{}
	put := func(f, v []byte, at int64) error {
		if at < 0 || at > maxFieldTTL {
			return r.corrupt("invalid field expiry time %d", at)
		}
		if _, ok := seen[string(f)]; ok {
			return r.corrupt("duplicate hash fields")
		}
		seen[string(f)] = struct{}{}
		if at == 0 {
			h.Set(opt.Now, f, v, opt.Hash)
		} else {
			h.SetWithExpiry(opt.Now, f, v, at, opt.Hash)
		}
		return nil
	}
	var minExpire int64
	if typ == TypeHashMetadata || typ == TypeHashListpackEx {
		var err error
		if minExpire, err = r.millis(); err != nil {
			return nil, err
		}
	}
	switch typ {
	case TypeHashMetadataPre, TypeHashMetadata:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			ttl, err := r.count()
			if err != nil {
				return nil, err
			}
			at := int64(ttl)
			if ttl > maxFieldTTL+1 {
				return nil, r.corrupt("invalid field TTL %d", ttl)
			}
			if typ == TypeHashMetadata && ttl != 0 {
				at = int64(ttl) + minExpire - 1
			}
			f, err := r.bstr()
			if err != nil {
				return nil, err
			}
			v, err := r.bstr()
			if err != nil {
				return nil, err
			}
			if err := put(f, v, at); err != nil {
				return nil, err
			}
		}
	default:
		p, err := r.blob()
		if err != nil {
			return nil, err
		}
		var f, v []byte
		k := 0
		var bad error
		err = walkListpack(p, func(s []byte, iv int64) error {
			switch k {
			case 0:
				f = elemBytes(s, iv, nil)
			case 1:
				v = elemBytes(s, iv, nil)
			case 2:
				if s != nil {
					bad = r.corrupt("field TTL is not an integer")
					return bad
				}
				if bad = put(f, v, iv); bad != nil {
					return bad
				}
			}
			k = (k + 1) % 3
			return nil
		})
		if bad != nil {
			return nil, bad
		}
		if err != nil || k != 0 {
			return nil, r.corrupt("hash listpackex integrity check failed")
		}
	}
	if len(seen) == 0 {
		return nil, ErrEmpty
	}
	if h.Len(opt.Now) == 0 {
		return nil, ErrAllExpired
	}
	return o, nil
}

// ErrAllExpired reports a hash every field of which had a TTL already due:
// there is nothing to store, but the input was well formed.
var ErrAllExpired = errors.New("every hash field has expired")
