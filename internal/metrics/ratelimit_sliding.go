package metrics

import (
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/commands"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// RATELIMIT.SLIDING numkeys key [key ...] LIMITS n duration limit precision
// [duration limit precision ...] [WEIGHT w] [NOW unix-seconds]
//
// The multi-limit sliding window of the classic Lua limiter, as one
// command. Durations and precisions are seconds (fractions allowed) and
// are kept as whole milliseconds D and P (rounded; NOW is truncated to
// its millisecond); a window of D is ceil(D/P) sub-buckets of P
// (precision = duration is a fixed window). Per key and limit the key's
// hash holds:
//
//	"D:P:"    the window's count
//	"D:P:o"   the oldest sub-bucket still in the window (the trim point)
//	"D:P:<b>" the count of sub-bucket b = floor(ms / P)
//
// Sub-buckets that left the window are deleted and subtracted first (and
// the trim point moved) for every key and limit; then every limit of every
// key is checked; only when all admit the weight is it counted, in every
// key and limit, and each key's TTL set to when its newest sub-bucket
// leaves its longest window. A request older than a key's newest
// sub-bucket counts in that sub-bucket: time never runs backwards within a
// window. A key named twice counts once. The reply is [0 (allowed and counted) or 1 (denied, nothing
// counted)], then per limit the remaining capacity (the least over the
// keys, after this request) and the milliseconds until a request of the
// same weight would pass that limit for every key (0: it would now; -1:
// never, the weight exceeds the limit).
//
// recipes/lua/sliding.lua is the same limiter as a Lua script,
// and the tests hold the two to the same replies and hashes.

func init() {
	engine.Register(&engine.Command{Name: "ratelimit.sliding", Arity: -8, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagMovableKeys,
		Keys: engine.NumkeysKeys(1), KeyFlags: "RW access update", ACL: "@rate_limit @hash", Group: "rate_limit",
		Summary:    "Check and count a request against several sliding-window limits on several keys",
		Since:      "Abacus 0.1.0",
		Complexity: "O(K*L) for K keys and L limits, plus the sub-buckets that left the window",
		Handler:    cmdRatelimitSliding})
}

// Error texts of RATELIMIT.SLIDING.
const (
	errSlideNumkeys  = "ERR numkeys must be greater than 0"
	errSlideTooMany  = "ERR Number of keys can't be greater than number of args"
	errSlideNLimits  = "ERR the number of limits must be greater than 0"
	errSlideDuration = "ERR duration and precision must be between 0.001 and 1000000000 seconds"
	errSlidePrec     = "ERR precision must not exceed duration"
	errSlideBuckets  = "ERR a window may have at most 10000 sub-buckets (duration/precision)"
	errSlideLimit    = "ERR limit must be a non-negative integer"
	errSlideDup      = "ERR duplicate limit: each duration and precision pair may appear once"
	errSlideWeight   = "ERR weight must be a non-negative integer"
	errSlideNow      = "ERR NOW must be a unix time in seconds between 0 and 1000000000000"
)

// slideMaxMs bounds durations (about 31 years) and slideMaxBuckets the
// sub-buckets of one window, so that every product stays far inside the
// integers a double holds exactly (the Lua script computes in doubles).
const (
	slideMaxMs      = 1e12
	slideMaxBuckets = 10000
)

// slideLimit is one parsed limit.
type slideLimit struct {
	dur, prec, limit, blocks int64
	pre                      []byte // "D:P:"
}

// slideState is one key's state for one limit during a call.
type slideState struct {
	cur, trim, count int64
	fresh            bool // the key had no trim point for this limit
}

// secondsToMs converts seconds with fractions to whole milliseconds,
// rounding half up, exactly as the Lua script does.
func secondsToMs(b []byte) (int64, bool) {
	f, ok := num.ParseFloat(b)
	if !ok || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(math.Floor(float64(f*1000) + 0.5)), true
}

// nowToMs converts NOW (seconds with fractions) to the millisecond it
// falls in: truncated, not rounded, so that a time's sub-bucket is
// floor(now / precision) as the Lua script computes it. Rounding would put
// 1700000002.9999998 in the next second's sub-bucket.
func nowToMs(b []byte) (int64, bool) {
	f, ok := num.ParseFloat(b)
	if !ok || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(math.Floor(float64(f * 1000))), true
}

func cmdRatelimitSliding(c *engine.Ctx) {
	nk, ok := num.ParseInt(c.Args[1])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	if nk < 1 {
		c.Error(errSlideNumkeys)
		return
	}
	if nk > int64(len(c.Args)-2) {
		c.Error(errSlideTooMany)
		return
	}
	keys := c.Args[2 : 2+nk]
	if len(keys) > 1 {
		keys = dedupKeys(keys)
	}
	j := 2 + int(nk)
	if j >= len(c.Args) || !ascii.OptIs(c.Args[j], "limits") || j+1 >= len(c.Args) {
		c.Error(engine.ErrSyntax)
		return
	}
	n, ok := num.ParseInt(c.Args[j+1])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	if n < 1 {
		c.Error(errSlideNLimits)
		return
	}
	j += 2
	if n > int64(len(c.Args)-j)/3 {
		c.Error(engine.ErrSyntax)
		return
	}
	var limBuf [4]slideLimit
	lims := limBuf[:0]
	var preBuf [96]byte
	pre := preBuf[:0]
	for i := int64(0); i < n; i, j = i+1, j+3 {
		d, ok1 := secondsToMs(c.Args[j])
		p, ok2 := secondsToMs(c.Args[j+2])
		if !ok1 || !ok2 {
			c.Error(engine.ErrNotFloat)
			return
		}
		l, ok := num.ParseInt(c.Args[j+1])
		if !ok || l < 0 {
			c.Error(errSlideLimit)
			return
		}
		if d < 1 || p < 1 || d > slideMaxMs || p > slideMaxMs {
			c.Error(errSlideDuration)
			return
		}
		if p > d {
			c.Error(errSlidePrec)
			return
		}
		b := (d + p - 1) / p
		if b > slideMaxBuckets {
			c.Error(errSlideBuckets)
			return
		}
		for _, o := range lims {
			if o.dur == d && o.prec == p {
				c.Error(errSlideDup)
				return
			}
		}
		start := len(pre)
		pre = strconv.AppendInt(pre, d, 10)
		pre = append(pre, ':')
		pre = strconv.AppendInt(pre, p, 10)
		pre = append(pre, ':')
		lims = append(lims, slideLimit{dur: d, prec: p, limit: l, blocks: b, pre: pre[start:len(pre):len(pre)]})
	}
	weight, now, nowGiven := int64(1), c.Now, false
	for ; j < len(c.Args); j += 2 {
		if j+1 >= len(c.Args) {
			c.Error(engine.ErrSyntax)
			return
		}
		switch {
		case ascii.OptIs(c.Args[j], "weight"):
			if weight, ok = num.ParseInt(c.Args[j+1]); !ok || weight < 0 {
				c.Error(errSlideWeight)
				return
			}
		case ascii.OptIs(c.Args[j], "now"):
			if now, ok = nowToMs(c.Args[j+1]); !ok || now < 0 || now > slideMaxMs*1000 {
				c.Error(errSlideNow)
				return
			}
			nowGiven = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	// Every key is a hash or missing before anything is written.
	for _, k := range keys {
		if o := c.DB.Lookup(string(k)); o != nil && o.Type != keyspace.TypeHash {
			c.Error(engine.ErrWrongType)
			return
		}
	}
	sw := slider{c: c, lim: engine.HashLimits(c), now: now, nowGiven: nowGiven}
	sw.run(keys, lims, weight, now)
}

// dedupKeys drops repeated keys (a key named twice is counted once),
// keeping the first occurrence's place.
func dedupKeys(keys [][]byte) [][]byte {
	for i := 1; i < len(keys); i++ {
		if !hasKey(keys[:i], keys[i]) {
			continue
		}
		out := append([][]byte(nil), keys[:i]...)
		for _, k := range keys[i+1:] {
			if !hasKey(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	return keys
}

func hasKey(keys [][]byte, k []byte) bool {
	for _, o := range keys {
		if string(o) == string(k) {
			return true
		}
	}
	return false
}

// slider runs one RATELIMIT.SLIDING call.
type slider struct {
	c   *engine.Ctx
	lim hash.Limits
	// now is the time the request counts at; nowGiven says the command
	// named it (NOW), so that it replays as received.
	now      int64
	nowGiven bool
	fb       [64]byte // field name scratch
	vb       [24]byte // value scratch
	bad      bool     // a hash value was not an integer (replied)
}

type slideKey struct {
	o              *keyspace.Object
	h              *hash.Hash
	fresh, changed bool
}

// field is pre with suffix appended: "D:P:" + "o", "" or a bucket id.
func (s *slider) field(pre []byte, b int64, kind byte) []byte {
	f := append(s.fb[:0], pre...)
	switch kind {
	case 'o':
		f = append(f, 'o')
	case 'b':
		f = strconv.AppendInt(f, b, 10)
	}
	return f
}

// get reads an integer field (0 when missing).
func (s *slider) get(h *hash.Hash, f []byte) (int64, bool) {
	v, ok := h.Get(s.c.Now, f)
	if !ok {
		return 0, false
	}
	n, isInt := num.ParseInt(v)
	if !isInt && !s.bad {
		s.bad = true
		s.c.Error(commands.ErrHashNotInt)
	}
	return n, true
}

func (s *slider) set(h *hash.Hash, f []byte, v int64) {
	h.Set(s.c.Now, f, strconv.AppendInt(s.vb[:0], v, 10), s.lim)
}

// incr is HINCRBY: the field keeps any TTL.
func (s *slider) incr(h *hash.Hash, f []byte, by int64) {
	cur, _ := s.get(h, f)
	h.SetKeepTTL(s.c.Now, f, strconv.AppendInt(s.vb[:0], cur+by, 10), s.lim)
}

func (s *slider) run(keys [][]byte, lims []slideLimit, weight, now int64) {
	c := s.c
	var keyBuf [4]slideKey
	ks := keyBuf[:0]
	var stBuf [16]slideState
	st := stBuf[:0]
	denied := false
	// Trim and check.
	for _, k := range keys {
		o, h, fresh, _ := commands.HashWriteOrCreate(c, string(k))
		sk := slideKey{o: o, h: h, fresh: fresh}
		for i := range lims {
			l := &lims[i]
			blk := now / l.prec
			ss := slideState{cur: blk, fresh: true}
			oldest, has := s.get(h, s.field(l.pre, 0, 'o'))
			if has {
				ss.fresh = false
				if last := oldest + l.blocks - 1; ss.cur < last {
					ss.cur = last
				}
			}
			ss.trim = ss.cur - l.blocks + 1
			if has {
				ss.count, _ = s.get(h, l.pre)
				if ss.trim > oldest {
					end := min(ss.trim-1, oldest+l.blocks-1)
					gone := int64(0)
					for b := oldest; b <= end; b++ {
						f := s.field(l.pre, b, 'b')
						if v, ok := s.get(h, f); ok {
							gone += v
							h.Delete(c.Now, f)
						}
					}
					ss.count -= gone
					s.set(h, l.pre, ss.count)
					s.set(h, s.field(l.pre, 0, 'o'), ss.trim)
					sk.changed = true
				}
			}
			if exceeds(ss.count, weight, l.limit) {
				denied = true
			}
			st = append(st, ss)
		}
		ks = append(ks, sk)
	}
	if s.bad {
		s.finish(keys, ks, nil)
		return
	}
	// Count.
	var ttls []int64
	if !denied && weight > 0 {
		ttls = make([]int64, len(ks))
		for ki := range ks {
			sk := &ks[ki]
			for i := range lims {
				l, ss := &lims[i], &st[ki*len(lims)+i]
				s.incr(sk.h, s.field(l.pre, ss.cur, 'b'), weight)
				s.incr(sk.h, l.pre, weight)
				if ss.fresh {
					s.set(sk.h, s.field(l.pre, 0, 'o'), ss.trim)
				}
				ss.count += weight
				ttls[ki] = max(ttls[ki], (ss.cur+l.blocks)*l.prec-now)
			}
			sk.changed = true
		}
	}
	if s.bad {
		s.finish(keys, ks, nil)
		return
	}
	// Reply.
	c.Env.Stats.Decisions.CountLimit("ratelimit.sliding", denied)
	c.W.Array(1 + 2*len(lims))
	c.W.Int(b2i(denied))
	for i := range lims {
		l := &lims[i]
		rem, wait := int64(math.MaxInt64), int64(0)
		for ki := range ks {
			ss := &st[ki*len(lims)+i]
			rem = min(rem, max(0, subSat(l.limit, ss.count)))
			w := int64(0)
			if weight > l.limit {
				w = -1
			} else if need := addSat(subSat(ss.count, l.limit), weight); need > 0 {
				w = (ss.cur+l.blocks)*l.prec - now
				acc := int64(0)
				for b := ss.trim; b <= ss.cur; b++ {
					// A value that is not an integer counts as 0 here.
					v, _ := ks[ki].h.Get(c.Now, s.field(l.pre, b, 'b'))
					n, _ := num.ParseInt(v)
					if acc += n; acc >= need {
						w = (b+l.blocks)*l.prec - now
						break
					}
				}
			}
			if w == -1 || wait == -1 {
				wait = -1
			} else {
				wait = max(wait, w)
			}
		}
		c.W.Int(rem)
		c.W.Int(wait)
	}
	s.finish(keys, ks, ttls)
}

// finish stores or signals the keys that changed and sets the TTLs of
// the keys a request was counted in.
//
// It propagates the command with its time made explicit (NOW), then the
// TTLs it set as PEXPIREAT, so that a replay at another time counts in
// the same sub-buckets and expires at the same moment.
func (s *slider) finish(keys [][]byte, ks []slideKey, ttls []int64) {
	c := s.c
	var expires [][][]byte
	changed := false
	for ki, sk := range ks {
		if !sk.changed {
			continue
		}
		changed = true
		commands.HashDone(c, string(keys[ki]), sk.o, sk.fresh)
		c.Dirty(1)
		// The key is a hash of counters: hincrby, as HINCRBY on it would
		// publish, then expire for its TTL (docs/metrics.md).
		c.Notify(engine.NotifyHash, "hincrby", keys[ki])
		if ttls != nil && sk.h.Len(c.Now) > 0 {
			at := c.Now + ttls[ki]
			c.DB.SetExpire(sk.o, at)
			c.Notify(engine.NotifyGeneric, "expire", keys[ki])
			expires = append(expires, [][]byte{[]byte("PEXPIREAT"), keys[ki], engine.MsArg(at)})
		}
	}
	if !changed {
		return
	}
	if s.nowGiven {
		c.Propagate(c.Args...)
	} else {
		sec := strconv.AppendInt(nil, s.now/1000, 10)
		sec = append(sec, '.', byte('0'+s.now/100%10), byte('0'+s.now/10%10), byte('0'+s.now%10))
		c.Propagate(append(append([][]byte{}, c.Args...), []byte("NOW"), sec)...)
	}
	for _, e := range expires {
		c.Propagate(e...)
	}
}

// exceeds is count+weight > limit, exactly (weight >= 0): a count and a
// weight whose sum passes MaxInt64 are over any limit, not wrapped into an
// admission.
func exceeds(count, weight, limit int64) bool {
	if count > 0 && weight > math.MaxInt64-count {
		return true
	}
	return count+weight > limit
}

// addSat is a+b clamped to the int64 range.
func addSat(a, b int64) int64 {
	sum := a + b
	if (sum > a) != (b > 0) { // wrapped
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return sum
}

// subSat is a-b clamped to the int64 range.
func subSat(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return addSat(a, -b)
}
