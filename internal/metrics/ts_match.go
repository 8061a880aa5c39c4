package metrics

import (
	"errors"
	"fmt"
	"strings"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// matchCacheMax bounds how many filters' match sets a database keeps: the
// exporter's one filter and a few of the dashboard's.
const matchCacheMax = 16

// matchCache keeps the keys that recent filters matched in one database's
// index, all computed at generation gen of the state: the label index is
// exact (timeseries.go), so while the generation holds, a filter matches
// the same keys. Keys whose TTL passed since are still among them, as
// they are in the index until reclaimed: callers look each key up.
type matchCache struct {
	gen  uint64
	sets map[string][]string
}

// match returns the sorted keys of d's index that satisfy ms, from the
// cache while st's generation is the one the set was made at. The slice
// is shared: callers do not change it.
func (st *tsState) match(d *tsDB, ms []ts.Matcher) []string {
	c := &d.cache
	if c.gen != st.gen || c.sets == nil {
		c.gen = st.gen
		c.sets = map[string][]string{}
	}
	fk := matcherKey(ms)
	if keys, ok := c.sets[fk]; ok {
		return keys
	}
	keys := d.idx.Query(ms, nil, false)
	if len(c.sets) >= matchCacheMax {
		clear(c.sets)
	}
	c.sets[fk] = keys
	return keys
}

// matcherKey is a filter's identity in the cache: each matcher's label,
// sign and values, separated by bytes that a label cannot hold unescaped
// ambiguity over (lengths precede the parts).
func matcherKey(ms []ts.Matcher) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%d:%s", len(m.Label), m.Label)
		if m.Neg {
			b.WriteByte('!')
		} else {
			b.WriteByte('=')
		}
		fmt.Fprintf(&b, "%d", len(m.Values))
		for _, v := range m.Values {
			fmt.Fprintf(&b, ",%d:%s", len(v), v)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// CheckTSIndex compares every database's label index with the series its
// tables hold (expired ones not yet reclaimed included) and returns the
// first difference, or nil when the indexes are exact. It indexes the
// keyspace first if no time-series command has yet. Call it with the
// server lock held; it is for tests.
func CheckTSIndex(e *engine.Env) error {
	st := &metricsOf(e).ts
	if !st.hooked {
		st.hook(e.KS)
	}
	for _, db := range e.KS.DBs {
		want := map[string][]ts.Label{}
		db.ForEach(func(o *keyspace.Object) {
			if o.Type == keyspace.TypeTimeSeries {
				want[o.Key] = o.Val().(*ts.Series).Labels
			}
		})
		d := st.dbs[db]
		n := 0
		if d != nil {
			n = d.idx.Len()
		}
		if n != len(want) {
			return fmt.Errorf("db %d: %d keys indexed, %d series stored", db.ID, n, len(want))
		}
		for k, l := range want {
			got, ok := d.idx.Labels(k)
			if !ok {
				return fmt.Errorf("db %d: series %q not indexed", db.ID, k)
			}
			if !ts.SameLabels(got, l) {
				return fmt.Errorf("db %d: %q indexed with %v, holds %v", db.ID, k, got, l)
			}
		}
		if d != nil && d.cache.gen == st.gen {
			for fk, keys := range d.cache.sets {
				if len(keys) > 0 && !d.idx.Has(keys[0]) {
					return errors.New("db " + fmt.Sprint(db.ID) + ": a cached match set of the current generation names a key not indexed: " + fk)
				}
			}
		}
	}
	return nil
}
