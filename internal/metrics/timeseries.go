package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The time-series family, compatible with RedisTimeSeries: TS.CREATE,
// TS.ALTER, TS.ADD, TS.MADD, TS.INCRBY, TS.DECRBY, TS.DEL, TS.GET,
// TS.CREATERULE, TS.DELETERULE, TS.INFO, TS.QUERYINDEX here; the range
// queries (TS.RANGE, TS.REVRANGE, TS.MRANGE, TS.MREVRANGE, TS.MGET) in
// timeseries_range.go. The engine is internal/ds/ts; a series is a value of
// type keyspace.TypeTimeSeries (TYPE says TSDB-TYPE) holding a *ts.Series.
//
// Errors carry RedisTimeSeries's texts ("ERR TSDB: ..."). The module's
// load-time configuration is fixed at its defaults: DUPLICATE_POLICY BLOCK,
// RETENTION_POLICY 0, CHUNK_SIZE_BYTES 4096, ENCODING COMPRESSED.
//
// Labels and compaction links follow the keyspace: every database has a
// label index (ts.Index), held by the engine's metricsState
// (metrics_state.go), kept exact by the keyspace's OnTouched hook (every
// key written, deleted, expired, evicted, renamed, moved, restored or
// loaded) and its followers (flushes, SWAPDB, a rolled-back script): at
// every moment it holds exactly the keys of the database's tables that
// hold a series, with their labels, expired ones not yet reclaimed
// included. Every change to an index bumps the state's generation, so a
// match set computed at one generation holds while it is current.
// A rule is live while its destination still holds a series naming the
// source; links are renamed with the keys (RENAME), and dead ones dropped
// when met.

func init() {
	const (
		grp = "timeseries"
		acl = "@timeseries"
	)
	w := engine.FlagWrite | engine.FlagDenyOOM
	engine.Register(
		&engine.Command{Name: "ts.create", Arity: -2, Flags: w, First: 1, Last: 1, Step: 1, KeyFlags: "RW insert", ACL: acl, Group: grp,
			Summary: "Create a new time series", Since: "1.0.0", Complexity: "O(1)", Handler: cmdTSCreate},
		&engine.Command{Name: "ts.alter", Arity: -2, Flags: w, First: 1, Last: 1, Step: 1, KeyFlags: "RW update", ACL: acl, Group: grp,
			Summary: "Update the retention, chunk size, duplicate policy, and labels of an existing time series", Since: "1.0.0",
			Complexity: "O(N) where N is the number of labels requested to update", Handler: cmdTSAlter},
		&engine.Command{Name: "ts.add", Arity: -4, Flags: w, First: 1, Last: 1, Step: 1, KeyFlags: "RW insert", ACL: acl, Group: grp,
			Summary: "Append a sample to a time series", Since: "1.0.0", Complexity: "O(M) when M is the amount of compaction rules or O(1) with no compaction",
			Handler: cmdTSAdd},
		&engine.Command{Name: "ts.madd", Arity: -4, Flags: w, First: 1, Last: -3, Step: 3, KeyFlags: "RW insert", ACL: acl, Group: grp,
			Summary: "Append new samples to one or more time series", Since: "1.0.0",
			Complexity: "O(N*M) when N is the amount of series updated and M is the amount of compaction rules or O(N) with no compaction",
			Handler:    cmdTSMadd},
		&engine.Command{Name: "ts.incrby", Arity: -3, Flags: w, First: 1, Last: 1, Step: 1, KeyFlags: "RW update", ACL: acl, Group: grp,
			Summary: "Increase the value of the sample with the maximum existing timestamp, or create a new sample with a value equal to the value of the sample with the maximum existing timestamp with a given increment",
			Since:   "1.0.0", Complexity: "O(M) when M is the amount of compaction rules or O(1) with no compaction", Handler: cmdTSIncrby},
		&engine.Command{Name: "ts.decrby", Arity: -3, Flags: w, First: 1, Last: 1, Step: 1, KeyFlags: "RW update", ACL: acl, Group: grp,
			Summary: "Decrease the value of the sample with the maximum existing timestamp, or create a new sample with a value equal to the value of the sample with the maximum existing timestamp with a given decrement",
			Since:   "1.0.0", Complexity: "O(M) when M is the amount of compaction rules or O(1) with no compaction", Handler: cmdTSIncrby},
		&engine.Command{Name: "ts.del", Arity: 4, Flags: engine.FlagWrite, First: 1, Last: 1, Step: 1, KeyFlags: "RW delete", ACL: acl, Group: grp,
			Summary: "Delete all samples between two timestamps for a given time series", Since: "1.6.0",
			Complexity: "O(N) where N is the number of data points that will be removed", Handler: cmdTSDel},
		&engine.Command{Name: "ts.get", Arity: -2, Flags: engine.FlagReadonly, First: 1, Last: 1, Step: 1, KeyFlags: "RO access", ACL: acl, Group: grp,
			Summary: "Get the sample with the highest timestamp from a given time series", Since: "1.0.0", Complexity: "O(1)", Handler: cmdTSGet},
		&engine.Command{Name: "ts.createrule", Arity: -6, Flags: engine.FlagWrite, First: 1, Last: 2, Step: 1, KeyFlags: "RW update", ACL: acl, Group: grp,
			Summary: "Create a compaction rule", Since: "1.0.0", Complexity: "O(1)", Handler: cmdTSCreaterule},
		&engine.Command{Name: "ts.deleterule", Arity: 3, Flags: engine.FlagWrite, First: 1, Last: 2, Step: 1, KeyFlags: "RW update", ACL: acl, Group: grp,
			Summary: "Delete a compaction rule", Since: "1.0.0", Complexity: "O(1)", Handler: cmdTSDeleterule},
		&engine.Command{Name: "ts.info", Arity: -2, Flags: engine.FlagReadonly, First: 1, Last: 1, Step: 1, KeyFlags: "RO access", ACL: acl, Group: grp,
			Summary: "Returns information and statistics for a time series", Since: "1.0.0", Complexity: "O(1)", Handler: cmdTSInfo},
		&engine.Command{Name: "ts.queryindex", Arity: -2, Flags: engine.FlagReadonly, ACL: acl, Group: grp,
			Summary: "Get all time series keys matching a filter list", Since: "1.0.0",
			Complexity: "O(n) where n is the number of time-series that match the filters", Handler: cmdTSQueryindex},
	)
	// A full copy: the undo journal of scripts restores with it. A COPY to
	// another key is told apart in touched, which unlinks it.
}

// The module's defaults.
const (
	tsDefaultPolicy = ts.PolicyBlock
	tsMaxChunkSize  = 1048576
	tsMinChunkSize  = 48
)

// Error texts.
const (
	errTSNoKey      = "ERR TSDB: the key does not exist"
	errTSExists     = "ERR TSDB: key already exists"
	errTSBadTS      = "ERR TSDB: invalid timestamp"
	errTSNegTS      = "ERR TSDB: invalid timestamp, must be a nonnegative integer"
	errTSBadValue   = "ERR TSDB: invalid value"
	errTSBlocked    = "ERR TSDB: Error at upsert, update is not supported when DUPLICATE_POLICY is set to BLOCK mode"
	errTSOld        = "ERR TSDB: Timestamp is older than retention"
	errTSChunkSize  = "ERR TSDB: CHUNK_SIZE value must be a multiple of 8 in the range [48 .. 1048576]"
	errTSLabels     = "ERR TSDB: Couldn't parse LABELS"
	errTSMatcher    = "ERR TSDB: please provide at least one matcher"
	errTSFilter     = "ERR TSDB: failed parsing labels"
	errTSIncrOld    = "ERR TSDB: timestamp must be equal to or higher than the maximum existing timestamp"
	errTSNoRule     = "ERR TSDB: compaction rule does not exist"
	errTSUnknownAgg = "ERR TSDB: Unknown aggregation type"
)

// tsDB is the time-series state of one database.
type tsDB struct {
	idx   *ts.Index
	cache matchCache // the keys recent filters matched (ts_match.go)
}

// tsState is the time-series state of one engine: the label index of each
// database that has held a series. The keyspace is hooked on first use, so
// a server without time series pays nothing on its writes.
type tsState struct {
	dbs    map[*keyspace.DB]*tsDB
	hooked bool
	// gen counts the changes to any database's index (a key indexed,
	// forgotten or given other labels; an index dropped, swapped or
	// rebuilt): while it stays the same, so do the keys that any filter
	// matches, and their labels.
	gen uint64
	// sampled is the series whose sample writes are being signalled
	// (sampleWritten), nil otherwise: touched leaves the index as it is
	// for it while it is known by its key.
	sampled *ts.Series
}

// tsFor returns the state of c's database, hooking the keyspace on first
// use. Called with the server lock held.
func tsFor(c *engine.Ctx) *tsDB {
	st := &metricsOf(c.Env).ts
	if !st.hooked {
		st.hook(c.Env.KS)
	}
	return st.db(c.DB)
}

// hook makes st follow ks's writes, and indexes the series that arrived
// before it (loaded from a file) once, now.
func (st *tsState) hook(ks *keyspace.Keyspace) {
	st.hooked = true
	ks.OnTouched(st.touched)
	ks.OnTables(keyspace.Follower{Emptied: st.emptied, Swapped: st.swapped, Replaced: st.rebuild,
		Restored: func(db *keyspace.DB, key string) { st.reindex(db, key) }})
	for _, db := range ks.DBs {
		st.rebuild(db)
	}
}

// rebuild indexes db's series from its tables.
func (st *tsState) rebuild(db *keyspace.DB) {
	st.gen++
	delete(st.dbs, db)
	db.ForEach(func(o *keyspace.Object) {
		if o.Type == keyspace.TypeTimeSeries {
			st.db(db).idx.Set(o.Key, o.Val().(*ts.Series).Labels)
		}
	})
}

// emptied drops the index of a database whose tables are now empty.
func (st *tsState) emptied(db *keyspace.DB) {
	if _, ok := st.dbs[db]; ok {
		delete(st.dbs, db)
		st.gen++
	}
}

// swapped exchanges the indexes of two databases whose contents were.
func (st *tsState) swapped(a, b *keyspace.DB) {
	da, oka := st.dbs[a]
	db, okb := st.dbs[b]
	if !oka && !okb {
		return
	}
	delete(st.dbs, a)
	delete(st.dbs, b)
	if oka {
		st.dbs[b] = da
	}
	if okb {
		st.dbs[a] = db
	}
	st.gen++
}

// reindex makes db's index say what key holds now: its series's labels,
// or nothing.
func (st *tsState) reindex(db *keyspace.DB, key string) *ts.Series {
	o := db.Peek(key)
	if o == nil || o.Type != keyspace.TypeTimeSeries {
		if d := st.dbs[db]; d != nil && d.idx.Has(key) {
			d.idx.Remove(key)
			st.gen++
		}
		return nil
	}
	s := o.Val().(*ts.Series)
	d := st.db(db)
	if cur, ok := d.idx.Labels(key); !ok || !ts.SameLabels(cur, s.Labels) {
		d.idx.Set(key, s.Labels)
		st.gen++
	}
	return s
}

func (st *tsState) db(db *keyspace.DB) *tsDB {
	d := st.dbs[db]
	if d == nil {
		if st.dbs == nil {
			st.dbs = map[*keyspace.DB]*tsDB{}
		}
		d = &tsDB{idx: ts.NewIndex()}
		st.dbs[db] = d
	}
	return d
}

// touched follows a written or deleted key: the label index learns the
// series now there (renamed, copied, moved or restored ones included) and
// forgets keys that no longer hold one.
func (st *tsState) touched(db *keyspace.DB, key string) {
	if st.sampled != nil && st.sampled.Name == key {
		// New samples in a series already known by key: the index,
		// exact before the write, still is.
		return
	}
	s := st.reindex(db, key)
	if s == nil || s.Name == key {
		return
	}
	if orig := seriesAt(db, s.Name); orig != nil && orig != s {
		// a COPY: the copy takes part in no compaction
		s.Rules, s.Source = nil, ""
	} else {
		renameLinks(db, s, s.Name, key)
	}
	s.Name = key
}

// renameLinks points the compaction links of s, which moved from old to
// key, at its new name.
func renameLinks(db *keyspace.DB, s *ts.Series, old, key string) {
	for _, r := range s.Rules {
		if d := seriesAt(db, r.Dest); d != nil && d.Source == old {
			d.Source = key
		}
	}
	if s.Source != "" {
		if src := seriesAt(db, s.Source); src != nil {
			if r := src.Rule(old); r != nil {
				r.Dest = key
			}
		}
	}
}

// seriesAt is the series at key, without expiring or journaling anything,
// or nil.
func seriesAt(db *keyspace.DB, key string) *ts.Series {
	o := db.Peek(key)
	if o == nil || o.Type != keyspace.TypeTimeSeries {
		return nil
	}
	return o.Val().(*ts.Series)
}

// liveSource is the series s (at key) is a compaction of, or nil.
func liveSource(db *keyspace.DB, key string, s *ts.Series) *ts.Series {
	if s.Source == "" {
		return nil
	}
	src := seriesAt(db, s.Source)
	if src == nil || src.Rule(key) == nil {
		return nil
	}
	return src
}

// liveRules drops the rules of s (at key) whose destination is gone and
// returns the rest.
func liveRules(db *keyspace.DB, key string, s *ts.Series) []*ts.Rule {
	for i := 0; i < len(s.Rules); i++ {
		r := s.Rules[i]
		if d := seriesAt(db, r.Dest); d == nil || d.Source != key {
			s.DeleteRule(r.Dest)
			i--
		}
	}
	return s.Rules
}

// tsLookup returns the series at key for reading; it replies with the
// error (missing key, wrong type) and returns nil when there is none.
func tsLookup(c *engine.Ctx, key string, write bool) *ts.Series {
	var o *keyspace.Object
	var ok bool
	if write {
		o, ok = c.LookupWrite(key, keyspace.TypeTimeSeries)
	} else {
		o, ok = c.Lookup(key, keyspace.TypeTimeSeries)
	}
	if !ok {
		return nil
	}
	if o == nil {
		c.Error(errTSNoKey)
		return nil
	}
	return o.Val().(*ts.Series)
}

// tsOpts are the options of TS.CREATE, TS.ALTER, TS.ADD and TS.INCRBY.
type tsOpts struct {
	retention    int64
	hasRetention bool
	chunk        int
	hasChunk     bool
	uncompressed bool
	policy       ts.Policy // DUPLICATE_POLICY
	onDup        ts.Policy // ON_DUPLICATE (TS.ADD)
	ignoreT      int64
	ignoreV      float64
	hasIgnore    bool
	labels       []ts.Label
	hasLabels    bool
	timestamp    []byte // TIMESTAMP (TS.INCRBY)
}

// Which options a command takes.
const (
	optEncoding = 1 << iota
	optPolicy
	optOnDup
	optTimestamp
)

// parseTSOpts reads options from args. LABELS takes the rest of the
// arguments, in pairs.
func parseTSOpts(c *engine.Ctx, args [][]byte, allow int) (tsOpts, bool) {
	o := tsOpts{chunk: ts.DefaultChunkSize}
	for i := 0; i < len(args); i++ {
		word := strings.ToUpper(string(args[i]))
		more := i+1 < len(args)
		switch {
		case word == "RETENTION":
			v, ok := num.ParseInt(argAt(args, i+1))
			if !more || !ok || v < 0 {
				c.Error("ERR TSDB: Couldn't parse RETENTION")
				return o, false
			}
			o.retention, o.hasRetention = v, true
			i++
		case word == "CHUNK_SIZE":
			v, ok := num.ParseInt(argAt(args, i+1))
			if !more || !ok {
				c.Error("ERR TSDB: Couldn't parse CHUNK_SIZE")
				return o, false
			}
			if v < tsMinChunkSize || v > tsMaxChunkSize || v%8 != 0 {
				c.Error(errTSChunkSize)
				return o, false
			}
			o.chunk, o.hasChunk = int(v), true
			i++
		case word == "ENCODING" && allow&optEncoding != 0:
			if !more {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return o, false
			}
			switch strings.ToUpper(string(args[i+1])) {
			case "COMPRESSED":
				o.uncompressed = false
			case "UNCOMPRESSED":
				o.uncompressed = true
			default:
				c.Error("ERR TSDB: unknown ENCODING parameter")
				return o, false
			}
			i++
		case word == "UNCOMPRESSED" && allow&optEncoding != 0:
			o.uncompressed = true
		case (word == "DUPLICATE_POLICY" && allow&optPolicy != 0) || (word == "ON_DUPLICATE" && allow&optOnDup != 0):
			if !more {
				c.Error("ERR TSDB: Couldn't parse " + word)
				return o, false
			}
			p, ok := ts.ParsePolicy(string(args[i+1]))
			if !ok {
				c.Error("ERR TSDB: Unknown " + word)
				return o, false
			}
			if word == "ON_DUPLICATE" {
				o.onDup = p
			} else {
				o.policy = p
			}
			i++
		case word == "IGNORE":
			if i+2 >= len(args) {
				c.Error("ERR TSDB: Couldn't parse IGNORE")
				return o, false
			}
			t, ok1 := num.ParseInt(args[i+1])
			v, ok2 := num.ParseFloat(args[i+2])
			if !ok1 || t < 0 {
				c.Error("ERR TSDB: Couldn't parse IGNORE")
				return o, false
			}
			if !ok2 || v < 0 || math.IsNaN(v) {
				c.Error("ERR TSDB: Couldn't parse IGNORE")
				return o, false
			}
			o.ignoreT, o.ignoreV, o.hasIgnore = t, v, true
			i += 2
		case word == "TIMESTAMP" && allow&optTimestamp != 0:
			if !more {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return o, false
			}
			o.timestamp = args[i+1]
			i++
		case word == "LABELS":
			rest := args[i+1:]
			if len(rest)%2 != 0 {
				c.Error(errTSLabels)
				return o, false
			}
			o.labels, o.hasLabels = make([]ts.Label, 0, len(rest)/2), true
			for j := 0; j < len(rest); j += 2 {
				name, val := string(rest[j]), string(rest[j+1])
				if name == "" || val == "" || strings.ContainsAny(val, "(),") {
					c.Error(errTSLabels)
					return o, false
				}
				o.labels = setLabel(o.labels, name, val)
			}
			i = len(args)
		default:
			c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
			return o, false
		}
	}
	return o, true
}

func argAt(args [][]byte, i int) []byte {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// setLabel adds or replaces a label, keeping first-seen order.
func setLabel(ls []ts.Label, name, val string) []ts.Label {
	for i := range ls {
		if ls[i].Name == name {
			ls[i].Value = val
			return ls
		}
	}
	return append(ls, ts.Label{Name: name, Value: val})
}

// newSeries makes a series from creation options.
func newSeries(key string, o *tsOpts) *ts.Series {
	s := ts.New()
	s.Name = key
	s.Retention = o.retention
	s.ChunkSize = o.chunk
	s.Uncompressed = o.uncompressed
	s.Policy = o.policy
	s.IgnoreMaxTime, s.IgnoreMaxVal = o.ignoreT, o.ignoreV
	s.Labels = o.labels
	return s
}

// storeSeries adds a new series at key.
func storeSeries(c *engine.Ctx, key string, s *ts.Series) {
	tsFor(c)
	c.DB.Set(key, keyspace.NewValue(keyspace.TypeTimeSeries, s), false)
}

func cmdTSCreate(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := parseTSOpts(c, c.Args[2:], optEncoding|optPolicy)
	if !ok {
		return
	}
	if c.DB.Lookup(key) != nil {
		c.Error(errTSExists)
		return
	}
	storeSeries(c, key, newSeries(key, &o))
	c.Dirty(1)
	c.Notify(engine.NotifyModule, "ts.create", c.Args[1])
	c.W.OK()
}

func cmdTSAlter(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := parseTSOpts(c, c.Args[2:], optPolicy)
	if !ok {
		return
	}
	s := tsLookup(c, key, true)
	if s == nil {
		return
	}
	if o.hasRetention {
		s.Retention = o.retention
	}
	if o.hasChunk {
		s.ChunkSize = o.chunk
	}
	if o.policy != ts.PolicyNone {
		s.Policy = o.policy
	}
	if o.hasIgnore {
		s.IgnoreMaxTime, s.IgnoreMaxVal = o.ignoreT, o.ignoreV
	}
	if o.hasLabels {
		s.Labels = o.labels
	}
	tsFor(c)
	c.DB.Modified(key)
	c.Dirty(1)
	c.Notify(engine.NotifyModule, "ts.alter", c.Args[1])
	c.W.OK()
}

func cmdTSGet(c *engine.Ctx) {
	key := c.Key(1)
	latest := false
	for i := 2; i < len(c.Args); i++ {
		if !c.ArgIs(i, "LATEST") {
			c.Error(engine.ErrSyntax)
			return
		}
		latest = true
	}
	s := tsLookup(c, key, false)
	if s == nil {
		return
	}
	sm, ok := s.Last()
	if latest {
		if p, pok := latestBucket(c.DB, key, s); pok && (!ok || p.T > sm.T) {
			sm, ok = p, true
		}
	}
	if !ok {
		c.W.Array(0)
		return
	}
	writeSample(c, sm)
}

// latestBucket is the open bucket of the rule that compacts into s (at
// key), for LATEST.
func latestBucket(db *keyspace.DB, key string, s *ts.Series) (ts.Sample, bool) {
	src := liveSource(db, key, s)
	if src == nil {
		return ts.Sample{}, false
	}
	return src.Rule(key).Latest()
}

// writeSample writes [timestamp, value]: RESP3 a double, RESP2 a simple
// string with the shortest form of the value.
func writeSample(c *engine.Ctx, sm ts.Sample) {
	c.W.Array(2)
	c.W.Int(sm.T)
	writeTSValue(c, sm.V)
}

func writeTSValue(c *engine.Ctx, v float64) {
	var tmp [32]byte
	b := appendTSValue(tmp[:0], v)
	if c.W.Proto == 3 {
		c.W.Buf = append(c.W.Buf, ',')
	} else {
		c.W.Buf = append(c.W.Buf, '+')
	}
	c.W.Buf = append(c.W.Buf, b...)
	c.W.Buf = append(c.W.Buf, '\r', '\n')
}

// appendTSValue formats a value the way RedisTimeSeries does: the
// shortest digits that read back the same double, integers without a
// fraction, exponent form for very large and small magnitudes.
func appendTSValue(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e17 {
		if v == 0 && math.Signbit(v) {
			return append(dst, "-0"...)
		}
		return strconv.AppendInt(dst, int64(v), 10)
	}
	a := math.Abs(v)
	if a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

func cmdTSInfo(c *engine.Ctx) {
	key := c.Key(1)
	debug := false
	for i := 2; i < len(c.Args); i++ {
		if !c.ArgIs(i, "DEBUG") {
			c.Error(engine.ErrSyntax)
			return
		}
		debug = true
	}
	s := tsLookup(c, key, false)
	if s == nil {
		return
	}
	w := c.W
	n := 14
	if debug {
		n += 2
	}
	w.Map(n)
	mem := int64(s.MemoryUsage())
	last, _ := s.Last()
	pairs := []struct {
		name string
		v    int64
	}{
		{"totalSamples", int64(s.Len())}, {"memoryUsage", mem}, {"firstTimestamp", s.First()},
		{"lastTimestamp", last.T}, {"retentionTime", s.Retention}, {"chunkCount", int64(s.Chunks())},
		{"chunkSize", int64(s.ChunkSize)},
	}
	for _, p := range pairs {
		w.BulkString(p.name)
		w.Int(p.v)
	}
	w.BulkString("chunkType")
	if s.Uncompressed {
		w.BulkString("uncompressed")
	} else {
		w.BulkString("compressed")
	}
	w.BulkString("duplicatePolicy")
	if s.Policy == ts.PolicyNone {
		w.Null()
	} else {
		w.BulkString(s.Policy.String())
	}
	w.BulkString("labels")
	writeLabels(c, s.Labels)
	w.BulkString("sourceKey")
	if liveSource(c.DB, key, s) != nil {
		w.BulkString(s.Source)
	} else {
		w.Null()
	}
	w.BulkString("rules")
	rules := liveRules(c.DB, key, s)
	if w.Proto == 3 {
		w.Map(len(rules))
	} else {
		w.Array(len(rules))
	}
	for _, r := range rules {
		if w.Proto == 3 {
			w.BulkString(r.Dest)
			w.Array(3)
		} else {
			w.Array(4)
			w.BulkString(r.Dest)
		}
		w.Int(r.Bucket)
		w.BulkString(strings.ToUpper(r.Agg.String()))
		w.Int(r.Align)
	}
	w.BulkString("ignoreMaxTimeDiff")
	w.Int(s.IgnoreMaxTime)
	w.BulkString("ignoreMaxValDiff")
	w.Double(s.IgnoreMaxVal)
	if debug {
		w.BulkString("keySelfName")
		w.BulkString(key)
		w.BulkString("Chunks")
		infos := s.ChunkInfos()
		w.Array(len(infos))
		for _, ci := range infos {
			w.Map(5)
			w.BulkString("startTimestamp")
			w.Int(ci.First)
			w.BulkString("endTimestamp")
			w.Int(ci.Last)
			w.BulkString("samples")
			w.Int(int64(ci.Samples))
			w.BulkString("size")
			w.Int(int64(ci.Bytes))
			w.BulkString("bytesPerSample")
			bps := 0.0
			if ci.Samples > 0 {
				bps = float64(ci.Bytes) / float64(ci.Samples)
			}
			w.BulkString(fmt.Sprintf("%g", bps))
		}
	}
}

// writeLabels writes a label list: RESP2 pairs, RESP3 a map.
func writeLabels(c *engine.Ctx, ls []ts.Label) {
	w := c.W
	if w.Proto == 3 {
		w.Map(len(ls))
		for _, l := range ls {
			w.BulkString(l.Name)
			w.BulkString(l.Value)
		}
		return
	}
	w.Array(len(ls))
	for _, l := range ls {
		w.Array(2)
		w.BulkString(l.Name)
		w.BulkString(l.Value)
	}
}

// parseFilters reads FILTER expressions.
func parseFilters(c *engine.Ctx, args [][]byte) ([]ts.Matcher, bool) {
	ms := make([]ts.Matcher, 0, len(args))
	positive := false
	for _, a := range args {
		m, err := ts.ParseMatcher(string(a))
		if err != nil {
			c.Error(errTSFilter)
			return nil, false
		}
		positive = positive || m.Positive()
		ms = append(ms, m)
	}
	if !positive {
		c.Error(errTSMatcher)
		return nil, false
	}
	return ms, true
}

// queryIndex returns the keys of the series matching ms, sorted. The
// index is exact, so only liveness is checked: a key whose TTL passed is
// expired by its lookup and left out.
func queryIndex(c *engine.Ctx, ms []ts.Matcher) []string {
	d := tsFor(c)
	keys := metricsOf(c.Env).ts.match(d, ms)
	var out []string
	for _, k := range keys {
		if o := c.DB.Lookup(k); o != nil && o.Type == keyspace.TypeTimeSeries {
			out = append(out, k)
		}
	}
	return out
}

func cmdTSQueryindex(c *engine.Ctx) {
	ms, ok := parseFilters(c, c.Args[1:])
	if !ok {
		return
	}
	keys := queryIndex(c, ms)
	c.W.Set(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}
