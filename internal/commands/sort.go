package commands

import (
	"bytes"
	"slices"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// SORT and SORT_RO, as redis-server 7.0 runs them (sort.c): the same
// option parsing (C-string comparisons included), the same LIMIT clamping,
// the same shortcuts for BY with a constant pattern, the same comparison
// rules and tie-breaks, and, where ties are left to the sort algorithm, the
// same algorithms: glibc's qsort is a stable merge sort, and SORT with BY
// and a narrowing LIMIT uses Redis's partial quicksort (sort_qsort.go).
//
// BY and GET patterns name keys that are not arguments: a future sharded
// keyspace must run SORT with those options under every shard's lock.

func init() {
	const (
		acl        = "@set @sortedset @list @dangerous"
		complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N)."
	)
	engine.Register(
		&engine.Command{Name: "sort", Specs: keySpecs["sort"], Arity: -2, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagMovableKeys,
			First: 1, Last: 1, Step: 1, Keys: sortKeys, KeyFlags: "RO access",
			ACL: acl, Group: "generic", Since: "1.0.0", Complexity: complexity,
			Summary: "Sort the elements in a list, set or sorted set", Handler: cmdSort},
		&engine.Command{Name: "sort_ro", Specs: keySpecs["sort_ro"], Arity: -2, Flags: engine.FlagReadonly | engine.FlagMovableKeys,
			First: 1, Last: 1, Step: 1, Keys: sortROKeys, KeyFlags: "RO access",
			ACL: acl, Group: "generic", Since: "7.0.0", Complexity: complexity,
			Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", Handler: cmdSortRO},
	)
}

const errSortScore = "ERR One or more scores can't be converted into double"

// sortKeys finds SORT's declared keys as Redis's sortGetKeys does: the key
// to sort, then the destination of the last STORE. It skips the arguments
// of LIMIT, GET and BY but not STORE's (a destination named "limit" makes
// the scan skip two more arguments, as in Redis).
func sortKeys(args [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(args); i++ {
		switch {
		case cEqualFold(args[i], "limit"):
			i += 2
		case cEqualFold(args[i], "get"), cEqualFold(args[i], "by"):
			i++
		case cEqualFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store != 0 {
		keys = append(keys, store)
	}
	return keys
}

// sortROKeys is SORT_RO's key: only the one to sort.
func sortROKeys(args [][]byte) []int { return []int{1} }

// cEqualFold compares an argument with an option name as strcasecmp does:
// the argument ends at its first NUL byte.
func cEqualFold(b []byte, word string) bool {
	b = ascii.CStr(b)
	if len(b) != len(word) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

func cmdSort(c *engine.Ctx)   { sortGeneric(c, false) }
func cmdSortRO(c *engine.Ctx) { sortGeneric(c, true) }

// sortOptions is a parsed SORT command line.
type sortOptions struct {
	desc, alpha bool
	// dontsort is set by a BY pattern without '*' and stays set even if
	// a later BY has one, as in Redis.
	dontsort bool
	by       []byte // the last BY pattern, nil without BY
	gets     [][]byte
	store    []byte // nil without STORE
	offset   int64
	count    int64
}

// parseSort reads the options after the key, replying and returning false
// on the first bad one.
func parseSort(c *engine.Ctx, readonly bool) (o sortOptions, ok bool) {
	o.count = -1
	args := c.Args
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case cEqualFold(a, "asc"):
			o.desc = false
		case cEqualFold(a, "desc"):
			o.desc = true
		case cEqualFold(a, "alpha"):
			o.alpha = true
		case cEqualFold(a, "limit") && left >= 2:
			if o.offset, ok = c.Int(j + 1); !ok {
				return o, false
			}
			if o.count, ok = c.Int(j + 2); !ok {
				return o, false
			}
			j += 2
		case !readonly && cEqualFold(a, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case cEqualFold(a, "by") && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte(ascii.CStr(o.by), '*') < 0 {
				o.dontsort = true
			} else if c.Env.Cluster() != nil {
				// Its keys would be in any slot.
				c.Error("ERR BY option of SORT denied in Cluster mode.")
				return o, false
			}
			j++
		case cEqualFold(a, "get") && left >= 1:
			if c.Env.Cluster() != nil {
				c.Error("ERR GET option of SORT denied in Cluster mode.")
				return o, false
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			c.Error(engine.ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// sortItem is one element in the sorting vector, with what it sorts by:
// score for a numeric sort, cmp (nil when BY found nothing) for ALPHA BY.
type sortItem struct {
	elem  []byte
	score float64
	cmp   []byte
}

func sortGeneric(c *engine.Ctx, readonly bool) {
	o, ok := parseSort(c, readonly)
	if !ok {
		return
	}
	obj := c.DB.LookupRead(c.Key(1))
	typ := keyspace.TypeList // a missing key sorts as an empty list
	if obj != nil {
		typ = obj.Type
		if typ != keyspace.TypeList && typ != keyspace.TypeSet && typ != keyspace.TypeZSet {
			c.Error(engine.ErrWrongType)
			return
		}
	}
	// The order of a set is its encoding's: a set sorted BY a constant is
	// sorted ALPHA when the result is stored or a script asks, so that
	// replicas and AOF see the same result (lists and sorted sets keep
	// their own deterministic order).
	if o.dontsort && typ == keyspace.TypeSet && (o.store != nil || sortFromScript(c)) {
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	n := 0
	if obj != nil {
		switch typ {
		case keyspace.TypeList:
			n = obj.Val().(*list.List).Len()
		case keyspace.TypeSet:
			n = obj.Val().(*set.Set).Len()
		case keyspace.TypeZSet:
			zs := obj.Val().(*zset.Set)
			// Redis converts a sorted set to a skiplist for SORT, for good.
			if zs.Encoding() != zset.Skiplist {
				zs.Convert(zset.Skiplist)
			}
			n = zs.Len()
		}
	}
	start, end := sortRange(o.offset, o.count, n)
	items, start, end := sortLoad(obj, typ, n, o, start, end)

	if !o.dontsort {
		if !sortWeigh(c, items, o) {
			c.Error(errSortScore)
			return
		}
		cmp := sortComparator(o)
		if o.by != nil && (start != 0 || end != len(items)-1) {
			pqsort(items, cmp, start, end)
		} else {
			slices.SortStableFunc(items, func(a, b sortItem) int { return cmp(&a, &b) })
		}
	}

	rows := end - start + 1
	outLen := rows
	if len(o.gets) > 0 {
		outLen = len(o.gets) * rows
	}
	if o.store == nil {
		c.W.Array(outLen)
		for j := start; j <= end; j++ {
			e := items[j].elem
			if len(o.gets) == 0 {
				c.W.Bulk(e)
			}
			for _, g := range o.gets {
				if v, ok := sortLookup(c, g, e); ok {
					c.W.Bulk(v)
				} else {
					c.W.Null()
				}
			}
		}
		return
	}
	dst := newList(c)
	for j := start; j <= end; j++ {
		e := items[j].elem
		if len(o.gets) == 0 {
			dst.PushBack(e)
		}
		for _, g := range o.gets {
			v, _ := sortLookup(c, g, e) // a missing value is stored as ""
			dst.PushBack(v)
		}
	}
	key := string(o.store)
	if outLen > 0 {
		c.DB.Set(key, keyspace.NewValue(keyspace.TypeList, dst), false)
		c.Dirty(int64(outLen))
		c.Notify(engine.NotifyList, "sortstore", o.store)
	} else if c.DB.Delete(key) {
		c.Dirty(1)
		c.Notify(engine.NotifyGeneric, "del", o.store)
	}
	c.W.Int(int64(outLen))
}

// sortRange clamps LIMIT offset count to a vector of n elements as Redis
// does, giving the inclusive range of the output (end < start when empty).
func sortRange(offset, count int64, n int) (start, end int) {
	nn := int64(n)
	s := min(max(offset, 0), nn)
	cnt := min(max(count, -1), nn)
	e := nn - 1
	if cnt >= 0 {
		e = s + cnt - 1
	}
	if s >= nn {
		s, e = nn-1, nn-2
	}
	if e >= nn {
		e = nn - 1
	}
	return int(s), int(e)
}

// sortLoad builds the vector to sort. A list or sorted set that is not to
// be sorted (BY constant) yields only the LIMIT range, in its own order,
// from the tail for DESC; start and end are then rebased onto the vector.
// Element slices are views of the value (lists) or copies.
func sortLoad(obj *keyspace.Object, typ keyspace.Type, n int, o sortOptions, start, end int) ([]sortItem, int, int) {
	if obj == nil {
		return nil, start, end
	}
	var items []sortItem
	switch {
	case typ == keyspace.TypeList && o.dontsort:
		if end < start {
			return nil, start, end
		}
		l := obj.Val().(*list.List)
		var elems [][]byte
		if o.desc {
			elems = l.Range(n-1-end, n-1-start)
			slices.Reverse(elems)
		} else {
			elems = l.Range(start, end)
		}
		items = make([]sortItem, len(elems))
		for i, e := range elems {
			items[i].elem = e
		}
		return items, 0, end - start
	case typ == keyspace.TypeZSet && o.dontsort:
		zs := obj.Val().(*zset.Set)
		items = make([]sortItem, 0, end-start+1)
		if end >= start {
			for m := range zs.RangeByRank(start, end, o.desc) {
				items = append(items, sortItem{elem: []byte(m)})
			}
		}
		return items, 0, end - start
	case typ == keyspace.TypeList:
		l := obj.Val().(*list.List)
		items = make([]sortItem, 0, n)
		for _, e := range l.All() {
			items = append(items, sortItem{elem: e})
		}
	case typ == keyspace.TypeSet:
		// Intsets come in ascending order, as Redis iterates them; other
		// encodings in the set's own order (Redis's is its hash table's).
		s := obj.Val().(*set.Set)
		items = make([]sortItem, 0, n)
		for m := range s.All() {
			items = append(items, sortItem{elem: bytes.Clone(m)})
		}
	case typ == keyspace.TypeZSet:
		// Redis walks the member dictionary; ascending order is as good a
		// starting order and is deterministic.
		zs := obj.Val().(*zset.Set)
		items = make([]sortItem, 0, n)
		for m := range zs.All() {
			items = append(items, sortItem{elem: []byte(m)})
		}
	}
	return items, start, end
}

// sortWeigh sets each item's score (numeric) or cmp (ALPHA BY), reporting
// false when a weight is not a number strtod takes whole.
func sortWeigh(c *engine.Ctx, items []sortItem, o sortOptions) bool {
	ok := true
	for i := range items {
		it := &items[i]
		w := it.elem
		if o.by != nil {
			v, found := sortLookup(c, o.by, it.elem)
			if !found {
				continue // weight 0, or nil for ALPHA
			}
			w = v
		}
		if o.alpha {
			if o.by != nil {
				it.cmp = bytes.Clone(w)
				if it.cmp == nil {
					it.cmp = []byte{}
				}
			}
			continue
		}
		if v, isInt := num.ParseInt(w); isInt {
			it.score = float64(v) // what strtod makes of it, without the parsing
			continue
		}
		var good bool
		it.score, good = strtodWhole(w)
		ok = ok && good
	}
	return ok
}

// sortComparator is Redis's sortCompare for the options: numeric by score
// with ties broken by the elements' bytes; ALPHA by strcoll (byte order up
// to the first NUL in the C locales Redis runs in) or, when storing, by
// the whole bytes; a missing BY value sorts first.
func sortComparator(o sortOptions) func(a, b *sortItem) int {
	var cmp func(a, b *sortItem) int
	switch {
	case !o.alpha:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare(a.elem, b.elem)
		}
	case o.by != nil:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.cmp == nil && b.cmp == nil:
				return 0
			case a.cmp == nil:
				return -1
			case b.cmp == nil:
				return 1
			case o.store != nil:
				return bytes.Compare(a.cmp, b.cmp)
			}
			return bytes.Compare(ascii.CStr(a.cmp), ascii.CStr(b.cmp))
		}
	case o.store != nil:
		cmp = func(a, b *sortItem) int { return bytes.Compare(a.elem, b.elem) }
	default:
		cmp = func(a, b *sortItem) int { return bytes.Compare(ascii.CStr(a.elem), ascii.CStr(b.elem)) }
	}
	if o.desc {
		asc := cmp
		cmp = func(a, b *sortItem) int { return -asc(a, b) }
	}
	return cmp
}

// sortLookup resolves a BY or GET pattern for an element, as Redis's
// lookupKeyByPattern: "#" is the element itself; otherwise the first '*'
// is replaced by the element and the key's string value is returned, or,
// with "->field" after the '*', that field of the key's hash. Patterns are
// scanned as C strings (up to a NUL byte) but keep their bytes beyond.
func sortLookup(c *engine.Ctx, pat, elem []byte) ([]byte, bool) {
	cp := ascii.CStr(pat)
	if len(cp) == 1 && cp[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(cp, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	keyEnd := len(pat)
	if f := bytes.Index(cp[star+1:], []byte("->")); f >= 0 {
		f += star + 1
		if f+2 < len(cp) {
			field = pat[f+2:]
			keyEnd = f
		}
	}
	key := make([]byte, 0, star+len(elem)+keyEnd-star-1)
	key = append(key, pat[:star]...)
	key = append(key, elem...)
	key = append(key, pat[star+1:keyEnd]...)
	o := c.DB.LookupRead(string(key))
	if o == nil {
		return nil, false
	}
	if field != nil {
		if o.Type != keyspace.TypeHash {
			return nil, false
		}
		return o.Val().(*hash.Hash).Get(c.Now, field)
	}
	if o.Type != keyspace.TypeString {
		return nil, false
	}
	return o.Bytes(nil), true
}

// sortFromScript reports whether the command runs for a script (Redis's
// CLIENT_SCRIPT): only a script's own commands run while one is running.
func sortFromScript(c *engine.Ctx) bool { return c.Env.ScriptRunning() }
