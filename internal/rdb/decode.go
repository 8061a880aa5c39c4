package rdb

import (
	"errors"
	"fmt"
	"math"
	"slices"
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
	// LFU: the maxmemory-policy is an LFU one, so a file's FREQ gives a
	// loaded key its access metadata; otherwise its IDLE does.
	LFU bool
	// KeepExpired loads keys whose TTL has passed, as a replica does: they
	// go by its primary's DEL.
	KeepExpired bool
}

// DefaultOptions are Redis's default thresholds.
func DefaultOptions() Options {
	return Options{Hash: hash.DefaultLimits(), Set: set.DefaultLimits(), ZSet: zset.DefaultLimits(), ListFill: list.DefaultFill}
}

// ErrEmpty reports a collection with no elements, which Redis refuses to
// load (RDB_LOAD_ERR_EMPTY_KEY).
var ErrEmpty = errors.New("empty collection")

// UnsupportedError reports a type Abacus does not hold (modules).
type UnsupportedError struct{ Type byte }

func (e *UnsupportedError) Error() string {
	switch e.Type {
	case TypeModulePreGA, TypeModule2:
		return "module values are not supported"
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
		s, iv, isInt, err := r.strInto(&r.strBuf)
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
	case TypeModulePreGA, TypeModule2:
		return r.moduleValue(typ)
	case TypeStreamListpacks, TypeStreamListpacks2, TypeStreamListpacks3:
		return r.stream(typ)
	}
	r.off--
	return nil, &UnsupportedError{Type: typ}
}

// blob reads a string holding an encoded blob (listpack, ziplist ...).
func (r *reader) blob() ([]byte, error) { return r.blobInto(nil) }

// packed is blob for a blob whose elements are copied out before the next
// one is read: a compressed one is expanded into the reader's scratch.
func (r *reader) packed() ([]byte, error) { return r.blobInto(&r.blobBuf) }

func (r *reader) blobInto(scratch *[]byte) ([]byte, error) {
	s, _, isInt, err := r.strInto(scratch)
	if err != nil {
		return nil, err
	}
	if isInt {
		return nil, r.corrupt("integer where an encoded blob was expected")
	}
	return s, nil
}

// plain reads a count and calls fn that many times, each call reading one
// element of a plain-encoded collection.
func (r *reader) plain(fn func() error) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// plainStrings reads a count and that many strings, calling fn with each:
// the elements of a plain-encoded list or set.
func (r *reader) plainStrings(fn func(s []byte) error) error {
	return r.plain(func() error {
		s, err := r.bstr()
		if err != nil {
			return err
		}
		return fn(s)
	})
}

// fieldValue reads a hash field and its value, two strings in a row.
func (r *reader) fieldValue() (f, v []byte, err error) {
	if f, err = r.bstr(); err != nil {
		return nil, nil, err
	}
	if v, err = r.bstr(); err != nil {
		return nil, nil, err
	}
	return f, v, nil
}

// elem is one element of a packed blob: the string s, or the integer v when
// s is nil.
type elem struct {
	s []byte
	v int64
}

func (e elem) bytes() []byte { return elemBytes(e.s, e.v, nil) }

// groups reads a blob (a listpack, or a ziplist when zl) and calls fn for
// each run of k elements (a field and its value ...). An error from fn is
// returned as is; a malformed blob or an incomplete last run is reported
// as what's integrity check failing.
func (r *reader) groups(zl bool, k int, what string, fn func(g []elem) error) error {
	p, err := r.packed()
	if err != nil {
		return err
	}
	g := r.group[:0:k]
	var bad error
	each := func(s []byte, v int64) error {
		g = append(g, elem{s, v})
		if len(g) < k {
			return nil
		}
		bad = fn(g)
		g = g[:0]
		return bad
	}
	// Direct calls, not through a variable: the closure and what it
	// captures then stay on the stack (one allocation fewer per value).
	if zl {
		err = walkZiplist(p, each)
	} else {
		err = walkListpack(p, each)
	}
	if bad != nil {
		return bad
	}
	if err != nil || len(g) != 0 {
		return r.corrupt("%s integrity check failed", what)
	}
	return nil
}

func (r *reader) list(typ byte, opt Options) (*keyspace.Object, error) {
	l := list.New(opt.ListFill)
	var err error
	switch typ {
	case TypeList:
		err = r.plainStrings(func(s []byte) error {
			l.PushBack(s)
			return nil
		})
	case TypeListZiplist:
		err = r.pushPacked(l, true, "list ziplist")
	default:
		err = r.plain(func() error {
			container := uint64(containerPacked)
			if typ == TypeListQuicklist2 {
				var err error
				if container, err = r.count(); err != nil {
					return err
				}
				if container != containerPlain && container != containerPacked {
					return r.corrupt("quicklist integrity check failed")
				}
			}
			if container == containerPlain {
				p, err := r.packed()
				if err == nil && len(p) == 0 {
					err = r.corrupt("empty quicklist node")
				}
				l.PushBack(p)
				return err
			}
			return r.pushPacked(l, typ == TypeListQuicklist, "quicklist node")
		})
	}
	if err != nil {
		return nil, err
	}
	if l.Len() == 0 {
		return nil, ErrEmpty
	}
	return keyspace.NewValue(keyspace.TypeList, l), nil
}

// pushPacked reads a packed blob (a listpack, or a ziplist when zl) and
// pushes its elements onto l in one PushBack, which sizes the list's
// buffers once for all of them.
func (r *reader) pushPacked(l *list.List, zl bool, what string) error {
	es, ints := r.elems[:0], 0
	err := r.groups(zl, 1, what, func(g []elem) error {
		es = append(es, g[0])
		if g[0].s == nil {
			ints++
		}
		return nil
	})
	if err == nil {
		num := r.numBuf[:0]
		if cap(num) < ints*20 {
			num = make([]byte, 0, ints*20)
		}
		vals := r.vals[:0]
		for _, e := range es {
			if e.s != nil {
				vals = append(vals, e.s)
				continue
			}
			at := len(num)
			num = strconv.AppendInt(num, e.v, 10)
			vals = append(vals, num[at:len(num):len(num)])
		}
		l.PushBack(vals...)
		clear(vals) // they alias the input
		if cap(num) <= scratchMax && cap(vals) <= scratchMax/16 {
			r.numBuf, r.vals = num, vals[:0]
		}
	}
	clear(es)
	if cap(es) <= scratchMax/16 {
		r.elems = es[:0]
	}
	return err
}

func (r *reader) set(typ byte, opt Options) (*keyspace.Object, error) {
	s := set.New()
	add := func(m []byte) error {
		if !s.Add(opt.Set, m) {
			return r.corrupt("duplicate set members")
		}
		return nil
	}
	var err error
	switch typ {
	case TypeSet:
		err = r.plainStrings(add)
	case TypeSetIntset:
		var p []byte
		if p, err = r.packed(); err != nil {
			return nil, err
		}
		ints, sorted := r.ints[:0], true
		if walkIntset(p, func(v int64) error {
			sorted = sorted && (len(ints) == 0 || v > ints[len(ints)-1])
			ints = append(ints, v)
			return nil
		}) != nil {
			return nil, r.corrupt("intset integrity check failed")
		}
		if sorted && len(ints) > 0 {
			// A well-formed intset, ascending: the set takes a copy at
			// its size.
			s = set.FromSortedInts(opt.Set, slices.Clone(ints))
		} else {
			for _, v := range ints {
				s.AddInt(opt.Set, v)
			}
		}
		if cap(ints) <= scratchMax/8 {
			r.ints = ints[:0]
		}
	case TypeSetListpack:
		var scratch [20]byte
		err = r.groups(false, 1, "set listpack", func(g []elem) error {
			return add(elemBytes(g[0].s, g[0].v, scratch[:]))
		})
	}
	if err != nil {
		return nil, err
	}
	if s.Len() == 0 {
		return nil, ErrEmpty
	}
	return keyspace.NewValue(keyspace.TypeSet, s), nil
}

func (r *reader) zset(typ byte, opt Options) (*keyspace.Object, error) {
	// Members are gathered in one buffer, their scores and where each ends
	// beside it; then the entries are made at their final length.
	buf, ends, scores := r.zbuf[:0], r.zends[:0], r.zscores[:0]
	add := func(m []byte, f float64) error {
		if math.IsNaN(f) {
			return r.corrupt("zset score is NaN")
		}
		buf = append(buf, m...)
		ends = append(ends, len(buf))
		scores = append(scores, f)
		return nil
	}
	var err error
	switch typ {
	case TypeZSet, TypeZSet2:
		err = r.plain(func() error {
			m, err := r.bstr()
			if err != nil {
				return err
			}
			var f float64
			if typ == TypeZSet2 {
				f, err = r.binaryDouble()
			} else {
				f, err = r.textDouble()
			}
			if err != nil {
				return err
			}
			return add(m, f)
		})
	default:
		var ms [20]byte
		err = r.groups(typ == TypeZSetZiplist, 2, "zset listpack", func(g []elem) error {
			f := float64(g[1].v)
			if g[1].s != nil {
				var perr error
				if f, perr = strconv.ParseFloat(string(g[1].s), 64); perr != nil {
					return r.corrupt("bad zset score %q", g[1].s)
				}
			}
			return add(elemBytes(g[0].s, g[0].v, ms[:]), f)
		})
	}
	if cap(buf) <= scratchMax && cap(ends) <= scratchMax {
		r.zbuf, r.zends, r.zscores = buf, ends, scores
	}
	if err != nil {
		return nil, err
	}
	if len(ends) == 0 {
		return nil, ErrEmpty
	}
	es := make([]zset.Entry, len(ends))
	maxLen, start := 0, 0
	for _, end := range ends {
		maxLen = max(maxLen, end-start)
		start = end
	}
	// A set that will be compact keeps its members in one block, as the
	// listpack they came from; a larger one copies each (its members go
	// one by one, and a shared block would stay while any of them did).
	shared := len(ends) <= opt.ZSet.MaxEntries && maxLen <= opt.ZSet.MaxValue
	var all string
	if shared {
		all = string(buf)
	}
	start = 0
	for i, end := range ends {
		if shared {
			es[i].Member = all[start:end]
		} else {
			es[i].Member = string(buf[start:end])
		}
		es[i].Score = scores[i]
		start = end
	}
	z, ok := zset.FromDistinct(es, opt.ZSet)
	if !ok {
		return nil, r.corrupt("duplicate zset members")
	}
	return keyspace.NewValue(keyspace.TypeZSet, z), nil
}

func (r *reader) hash(typ byte, opt Options) (*keyspace.Object, error) {
	o, h := keyspace.NewHash()
	// The fields go to a builder while they fit the small form, so that
	// the block is allocated once at its size; the first that does not
	// fit makes the hash of those before it and converts it.
	b := &r.hb
	b.Reset()
	built := false
	put := func(f, v []byte) error {
		if !built {
			if b.Fits(len(f), len(v), opt.Hash) {
				if !b.Add(f, v) {
					return r.corrupt("duplicate hash fields")
				}
				return nil
			}
			b.Build(h)
			built = true
		}
		if !h.Set(opt.Now, f, v, opt.Hash) {
			return r.corrupt("duplicate hash fields")
		}
		return nil
	}
	var err error
	switch typ {
	case TypeHash:
		err = r.plain(func() error {
			f, v, err := r.fieldValue()
			if err != nil {
				return err
			}
			return put(f, v)
		})
	case TypeHashZipmap:
		var p []byte
		if p, err = r.packed(); err != nil {
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
		var fs, vs [20]byte
		err = r.groups(typ == TypeHashZiplist, 2, "hash listpack", func(g []elem) error {
			return put(elemBytes(g[0].s, g[0].v, fs[:]), elemBytes(g[1].s, g[1].v, vs[:]))
		})
	}
	if err != nil {
		return nil, err
	}
	if !built {
		b.Build(h)
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
		if minExpire < 0 || minExpire > maxFieldTTL+1 {
			return nil, r.corrupt("invalid minimum field expiry %d", minExpire)
		}
	}
	var err error
	switch typ {
	case TypeHashMetadataPre, TypeHashMetadata:
		err = r.plain(func() error {
			ttl, err := r.count()
			if err != nil {
				return err
			}
			if ttl > maxFieldTTL+1 {
				return r.corrupt("invalid field TTL %d", ttl)
			}
			at := int64(ttl)
			if typ == TypeHashMetadata && ttl != 0 {
				at = int64(ttl) + minExpire - 1
			}
			f, v, err := r.fieldValue()
			if err != nil {
				return err
			}
			return put(f, v, at)
		})
	default:
		err = r.groups(false, 3, "hash listpackex", func(g []elem) error {
			if g[2].s != nil {
				return r.corrupt("field TTL is not an integer")
			}
			return put(g[0].bytes(), g[1].bytes(), g[2].v)
		})
	}
	if err != nil {
		return nil, err
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
