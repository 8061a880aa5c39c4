package metrics

import (
	"errors"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// SeriesExport is what the HTTP exporter reads of the series a filter
// matches: the latest sample of each, as TS.MGET WITHLABELS FILTER would
// answer, without a RESP reply in between and without the labels while
// the exporter holds those of the current generation.
type SeriesExport struct {
	// Gen is the index generation that Keys and Labels belong to: while it
	// stays the same, so do the matching keys and their labels.
	Gen uint64
	// Keys are the keys the filter matched at Gen, sorted. Shared with the
	// engine's match cache: read only, never changed once made.
	Keys []string
	// Labels are each key's labels, when the caller's generation was not
	// Gen; nil otherwise. Shared with the index and the series: a series's
	// label slice is replaced (TS.ALTER), never changed in place.
	Labels [][]ts.Label
	// State says for each key: SeriesGone (its TTL passed: TS.MGET leaves
	// it out), SeriesEmpty (no sample) or SeriesSampled (Vals holds its
	// latest sample).
	State []uint8
	Vals  []float64
}

// The states of an exported key.
const (
	SeriesGone uint8 = iota
	SeriesEmpty
	SeriesSampled
)

// ExportLatest fills x with the series of database db that filter (TS.MGET's
// FILTER expressions) matches and the latest sample of each; their labels
// only when known is not the current generation. A filter TS.MGET would
// refuse is an error with TS.MGET's text. It reads the keys as TS.MGET
// does (a key whose TTL passed is expired by the lookup), so call it with
// the server lock held, right after a command of the same session has set
// the keyspace's clock and expiry mode (the exporter runs INFO first).
func ExportLatest(e *engine.Env, db int, filter []string, known uint64, x *SeriesExport) error {
	ms := make([]ts.Matcher, 0, len(filter))
	positive := false
	for _, f := range filter {
		m, err := ts.ParseMatcher(f)
		if err != nil {
			return errors.New(errTSFilter)
		}
		positive = positive || m.Positive()
		ms = append(ms, m)
	}
	if !positive {
		return errors.New(errTSMatcher)
	}
	st := &metricsOf(e).ts
	if !st.hooked {
		st.hook(e.KS)
	}
	d := e.KS.DBs[db]
	idx := st.db(d)
	keys := st.match(idx, ms)
	x.Gen, x.Keys, x.Labels = st.gen, keys, nil
	x.State = resize(x.State, len(keys))
	x.Vals = resize(x.Vals, len(keys))
	if known != x.Gen {
		// From the index, which is exact: every key has them, hidden
		// ones too (a replica hides a key whose TTL passed until its
		// primary deletes it, and shows it again if the TTL is lifted).
		x.Labels = make([][]ts.Label, len(keys))
		for i, k := range keys {
			x.Labels[i], _ = idx.idx.Labels(k)
		}
	}
	// A lookup may expire a key and move the generation on; what Keys and
	// Labels say stays true of Gen (the keys still there kept their labels).
	for i, k := range keys {
		x.State[i], x.Vals[i] = SeriesGone, 0
		o := d.Lookup(k)
		if o == nil || o.Type != keyspace.TypeTimeSeries {
			continue
		}
		s := o.Val().(*ts.Series)
		x.State[i] = SeriesEmpty
		if sm, ok := s.Last(); ok {
			x.State[i], x.Vals[i] = SeriesSampled, sm.V
		}
	}
	return nil
}

// resize returns s with length n, reusing its array when it is big enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
