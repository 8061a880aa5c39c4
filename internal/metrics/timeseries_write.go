package metrics

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The time-series writes: TS.ADD, TS.MADD, TS.INCRBY, TS.DECRBY, TS.DEL,
// TS.CREATERULE, TS.DELETERULE (see timeseries.go for the family).

// parseTimestamp reads a sample timestamp: a non-negative integer, or "*"
// for the command's time.
func parseTimestamp(c *engine.Ctx, b []byte) (int64, bool) {
	if len(b) == 1 && b[0] == '*' {
		return c.Now, true
	}
	v, ok := num.ParseInt(b)
	if !ok {
		c.Error(errTSBadTS)
		return 0, false
	}
	if v < 0 {
		c.Error(errTSNegTS)
		return 0, false
	}
	return v, true
}

// parseSampleValue reads a sample value: a finite double (RedisTimeSeries
// refuses NaN and infinities).
func parseSampleValue(b []byte) (float64, bool) {
	// Most samples are integers: one in (-2^53, 2^53) converts exactly, as
	// strtod reads it. num.ParseInt takes only canonical integers (no
	// "-0", whose sign a float keeps, no leading zeros or plus sign); the
	// rest go through the float parser.
	if i, ok := num.ParseInt(b); ok && i > -1<<53 && i < 1<<53 {
		return float64(i), true
	}
	v, ok := num.ParseFloat(b)
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// addSample adds (t, v) to s at key under policy p and applies the
// compaction writes; it returns the error text on failure.
func addSample(c *engine.Ctx, key string, s *ts.Series, t int64, v float64, p ts.Policy) (ts.AddResult, string) {
	if p == ts.PolicyNone {
		p = s.Policy
	}
	if p == ts.PolicyNone {
		p = tsDefaultPolicy
	}
	if len(s.Rules) > 0 {
		liveRules(c.DB, key, s)
	}
	res, ws, err := s.Add(t, v, p)
	switch err {
	case ts.ErrBlocked:
		return 0, errTSBlocked
	case ts.ErrOld:
		return 0, errTSOld
	}
	applyWrites(c, ws)
	if res != ts.Ignored {
		sampleWritten(c, key, s)
		c.Dirty(1)
	}
	// RedisTimeSeries's events: ts.add for TS.ADD and each key of
	// TS.MADD, ts.incrby and ts.decrby, after the compactions'.
	ev := "ts.add"
	switch c.Cmd.Name {
	case "ts.incrby", "ts.decrby":
		ev = c.Cmd.Name
	}
	c.NotifyKey(engine.NotifyModule, ev, key)
	return res, ""
}

// sampleWritten signals the write of samples to s, the series at key, to
// the keyspace's followers (WATCH, tracking, blocked clients). Samples
// change neither a series' labels nor its key, so the label index, whose
// hook would look key up again to find the same labels, is told to skip
// it (tsState.touched).
func sampleWritten(c *engine.Ctx, key string, s *ts.Series) {
	st := &metricsOf(c.Env).ts
	st.sampled = s
	c.DB.Modified(key)
	st.sampled = nil
}

// applyWrites carries compaction results to their destinations.
func applyWrites(c *engine.Ctx, ws []ts.Write) {
	for _, w := range ws {
		o := c.DB.Lookup(w.Dest) // journals the destination for scripts
		if o == nil || o.Type != keyspace.TypeTimeSeries {
			continue
		}
		d := o.Val().(*ts.Series)
		if w.Delete {
			d.DeleteRange(w.T, w.To)
		} else {
			d.Add(w.T, w.V, ts.PolicyLast)
			// RedisTimeSeries's event for a compaction's bucket.
			c.NotifyKey(engine.NotifyModule, "ts.add:dest", w.Dest)
			sampleWritten(c, w.Dest, d)
			continue
		}
		c.DB.Modified(w.Dest)
	}
}

func cmdTSAdd(c *engine.Ctx) {
	key := c.Key(1)
	t, ok := parseTimestamp(c, c.Args[2])
	if !ok {
		return
	}
	v, ok := parseSampleValue(c.Args[3])
	if !ok {
		c.Error(errTSBadValue)
		return
	}
	o, ok := parseTSOpts(c, c.Args[4:], optEncoding|optPolicy|optOnDup)
	if !ok {
		return
	}
	if s := seriesForWrite(c, key, &o); s != nil {
		replyAdd(c, key, s, t, v, o.onDup)
	}
	rewriteClockTimes(c, 2, 3)
}

// rewriteClockTimes replaces the "*" timestamps (the server's clock) at
// argument from and every step after it with the command's time, so that
// a replay adds the samples at the times they were added.
func rewriteClockTimes(c *engine.Ctx, from, step int) {
	var rw [][]byte
	for i := from; i < len(c.Args); i += step {
		if a := c.Args[i]; len(a) == 1 && a[0] == '*' {
			if rw == nil {
				rw = append([][]byte{}, c.Args...)
			}
			rw[i] = engine.MsArg(c.Now)
		}
	}
	if rw != nil {
		c.Rewrite(rw...)
	}
}

// seriesForWrite returns the series at key, made from o when the key is
// missing; nil after replying WRONGTYPE.
func seriesForWrite(c *engine.Ctx, key string, o *tsOpts) *ts.Series {
	obj, ok := c.LookupWrite(key, keyspace.TypeTimeSeries)
	if !ok {
		return nil
	}
	if obj != nil {
		return obj.Val().(*ts.Series)
	}
	s := newSeries(key, o)
	storeSeries(c, key, s)
	return s
}

// replyAdd adds (t, v) and replies with the sample's timestamp (the
// latest one when IGNORE dropped the sample) or the error.
func replyAdd(c *engine.Ctx, key string, s *ts.Series, t int64, v float64, p ts.Policy) {
	res, msg := addSample(c, key, s, t, v, p)
	if msg != "" {
		c.Error(msg)
		return
	}
	if res == ts.Ignored {
		last, _ := s.Last()
		t = last.T
	}
	c.W.Int(t)
}

func cmdTSMadd(c *engine.Ctx) {
	if (len(c.Args)-1)%3 != 0 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	n := (len(c.Args) - 1) / 3
	c.W.Array(n)
	for i := 0; i < n; i++ {
		a := c.Args[1+3*i:]
		t, ok := parseTimestampQuiet(c, a[1])
		if !ok {
			c.W.Error(errTSBadTS)
			continue
		}
		v, ok := parseSampleValue(a[2])
		if !ok {
			c.W.Error(errTSBadValue)
			continue
		}
		// Lookup keeps nothing of its argument, so the conversion does
		// not allocate; the stored object's key serves from here on.
		obj := c.DB.Lookup(string(a[0]))
		if obj == nil {
			c.W.Error(errTSNoKey)
			continue
		}
		key := obj.Key
		if obj.Type != keyspace.TypeTimeSeries {
			c.W.Error(engine.ErrWrongType)
			continue
		}
		s := obj.Val().(*ts.Series)
		res, msg := addSample(c, key, s, t, v, ts.PolicyNone)
		if msg != "" {
			c.W.Error(msg)
			continue
		}
		if res == ts.Ignored {
			last, _ := s.Last()
			t = last.T
		}
		c.W.Int(t)
	}
	rewriteClockTimes(c, 2, 3)
}

// parseTimestampQuiet is parseTimestamp without replying.
func parseTimestampQuiet(c *engine.Ctx, b []byte) (int64, bool) {
	if len(b) == 1 && b[0] == '*' {
		return c.Now, true
	}
	v, ok := num.ParseInt(b)
	return v, ok && v >= 0
}

// cmdTSIncrby is TS.INCRBY and TS.DECRBY: the latest sample's value plus
// (minus) the addend, at the latest timestamp or a later one.
func cmdTSIncrby(c *engine.Ctx) {
	key := c.Key(1)
	addend, ok := parseSampleValue(c.Args[2])
	if !ok {
		c.Error("ERR TSDB: invalid increase/decrease value")
		return
	}
	if c.Cmd.Name == "ts.decrby" {
		addend = -addend
	}
	o, ok := parseTSOpts(c, c.Args[3:], optEncoding|optPolicy|optTimestamp)
	if !ok {
		return
	}
	t := c.Now
	if o.timestamp != nil {
		if t, ok = parseTimestamp(c, o.timestamp); !ok {
			return
		}
	}
	if o.timestamp == nil || string(o.timestamp) == "*" {
		rewriteIncrTime(c, t)
	}
	s := seriesForWrite(c, key, &o)
	if s == nil {
		return
	}
	v := addend
	if last, ok := s.Last(); ok {
		if t < last.T {
			c.Error(errTSIncrOld)
			return
		}
		v += last.V
	}
	replyAdd(c, key, s, t, v, ts.PolicyLast)
}

// keyRange reads "key fromTimestamp toTimestamp" (TS.DEL, TS.SUM) and
// looks the series up, for a write if write; s is nil after an error
// reply.
func keyRange(c *engine.Ctx, write bool) (key string, s *ts.Series, from, to int64) {
	key = c.Key(1)
	from, ok := parseRangeBound(c, c.Args[2], true)
	if !ok {
		return key, nil, 0, 0
	}
	if to, ok = parseRangeBound(c, c.Args[3], false); !ok {
		return key, nil, 0, 0
	}
	return key, tsLookup(c, key, write), from, to
}

func cmdTSDel(c *engine.Ctx) {
	key, s, from, to := keyRange(c, true)
	if s == nil {
		return
	}
	if s.Retention > 0 && len(liveRules(c.DB, key, s)) > 0 {
		if last, ok := s.Last(); ok && from < last.T-s.Retention {
			c.Error("ERR TSDB: When a series has compactions, deleting samples or compaction buckets beyond the series retention period is not possible")
			return
		}
	}
	if len(s.Rules) > 0 {
		liveRules(c.DB, key, s)
	}
	n, ws := s.DeleteRange(from, to)
	applyWrites(c, ws)
	if n > 0 {
		c.DB.Modified(key)
		c.Dirty(int64(n))
	}
	c.Notify(engine.NotifyModule, "ts.del", c.Args[1])
	c.W.Int(int64(n))
}

// parseRangeBound reads fromTimestamp ("-") or toTimestamp ("+").
func parseRangeBound(c *engine.Ctx, b []byte, from bool) (int64, bool) {
	if from && len(b) == 1 && b[0] == '-' {
		return 0, true
	}
	if !from && len(b) == 1 && b[0] == '+' {
		return math.MaxInt64, true
	}
	v, ok := num.ParseInt(b)
	if !ok || v < 0 {
		if from {
			c.Error("ERR TSDB: wrong fromTimestamp")
		} else {
			c.Error("ERR TSDB: wrong toTimestamp")
		}
		return 0, false
	}
	return v, true
}

func cmdTSCreaterule(c *engine.Ctx) {
	srcKey, dstKey := c.Key(1), c.Key(2)
	if !c.ArgIs(3, "AGGREGATION") || len(c.Args) > 7 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	agg, ok := ts.ParseAgg(c.Arg(4))
	if !ok {
		c.Error(errTSUnknownAgg)
		return
	}
	bucket, ok := num.ParseInt(c.Args[5])
	if !ok {
		c.Error("ERR TSDB: Couldn't parse AGGREGATION")
		return
	}
	if bucket <= 0 {
		c.Error("ERR TSDB: bucketDuration must be greater than zero")
		return
	}
	var align int64
	if len(c.Args) == 7 {
		if align, ok = num.ParseInt(c.Args[6]); !ok || align < 0 {
			c.Error("ERR TSDB: Couldn't parse alignTimestamp")
			return
		}
	}
	if srcKey == dstKey {
		c.Error("ERR TSDB: the source key and destination key should be different")
		return
	}
	src := tsLookup(c, srcKey, true)
	if src == nil {
		return
	}
	dst := tsLookup(c, dstKey, true)
	if dst == nil {
		return
	}
	if liveSource(c.DB, srcKey, src) != nil {
		c.Error("ERR TSDB: the source key already has a source rule")
		return
	}
	if liveSource(c.DB, dstKey, dst) != nil {
		c.Error("ERR TSDB: the destination key already has a src rule")
		return
	}
	if len(liveRules(c.DB, dstKey, dst)) > 0 {
		c.Error("ERR TSDB: the destination key already has a dst rule")
		return
	}
	liveRules(c.DB, srcKey, src)
	src.AddRule(dstKey, agg, bucket, align)
	dst.Source = srcKey
	tsFor(c)
	c.DB.Modified(srcKey)
	c.DB.Modified(dstKey)
	c.Dirty(1)
	c.Notify(engine.NotifyModule, "ts.createrule", c.Args[1])
	c.Notify(engine.NotifyModule, "ts.createrule", c.Args[2])
	c.W.OK()
}

func cmdTSDeleterule(c *engine.Ctx) {
	srcKey, dstKey := c.Key(1), c.Key(2)
	src := tsLookup(c, srcKey, true)
	if src == nil {
		return
	}
	liveRules(c.DB, srcKey, src)
	if !src.DeleteRule(dstKey) {
		c.Error(errTSNoRule)
		return
	}
	if dst := seriesAt(c.DB, dstKey); dst != nil && dst.Source == srcKey {
		dst.Source = ""
		c.DB.Modified(dstKey)
	}
	c.DB.Modified(srcKey)
	c.Dirty(1)
	c.Notify(engine.NotifyModule, "ts.deleterule", c.Args[1])
	c.Notify(engine.NotifyModule, "ts.deleterule", c.Args[2])
	c.W.OK()
}

// rewriteIncrTime makes TS.INCRBY/TS.DECRBY's clock time explicit: the
// TIMESTAMP * option gets the time, or TIMESTAMP t goes right after the
// value when the option is absent.
func rewriteIncrTime(c *engine.Ctx, t int64) {
	for i := 3; i+1 < len(c.Args); i++ {
		if ascii.OptIs(c.Args[i], "labels") {
			break
		}
		if ascii.OptIs(c.Args[i], "timestamp") {
			rw := append([][]byte{}, c.Args...)
			rw[i+1] = engine.MsArg(t)
			c.Rewrite(rw...)
			return
		}
	}
	rw := append(append([][]byte{}, c.Args[:3]...), []byte("TIMESTAMP"), engine.MsArg(t))
	c.Rewrite(append(rw, c.Args[3:]...)...)
}
