package commands

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// Argument parsing and replies shared by the stream commands
// (t_stream.c's helpers), with Redis 7.0's error texts.

const (
	errInvalidID   = "ERR Invalid stream ID specified as stream command argument"
	errStartID     = "ERR invalid start ID for the interval"
	errEndID       = "ERR invalid end ID for the interval"
	errNoGroupFmt  = "NOGROUP No such key '%s' or consumer group '%s'"
	errXgroupNoKey = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
)

// parseU64 is Redis's string2ull: a canonical integer that is not
// negative, or else whatever strtoull accepts whole (leading spaces, a
// sign, a negative value wrapping around) without overflow.
func parseU64(b []byte) (uint64, bool) {
	if v, ok := num.ParseInt(b); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID is streamGenericParseIDOrReply without the reply: "-" and
// "+" (unless strict), "ms", "ms-seq", and with star "ms-*" (seqGiven
// false). missingSeq fills a bare "ms".
func parseStreamID(b []byte, missingSeq uint64, strict, star bool) (id stream.ID, seqGiven, ok bool) {
	if len(b) > 127 {
		return id, false, false
	}
	// Redis copies the argument into a C string: a NUL ends it.
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return id, false, false
		}
		if b[0] == '-' {
			return stream.ID{}, true, true
		}
		return stream.MaxID, true, true
	}
	seqGiven = true
	dash := -1
	for i, c := range b {
		if c == '-' {
			dash = i
			break
		}
	}
	msPart := b
	if dash >= 0 {
		msPart = b[:dash]
	}
	ms, ok := parseU64(msPart)
	if !ok {
		return id, false, false
	}
	seq := missingSeq
	if dash >= 0 {
		rest := b[dash+1:]
		if star && len(rest) == 1 && rest[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseU64(rest); !ok {
			return id, false, false
		}
	}
	return stream.ID{Ms: ms, Seq: seq}, seqGiven, true
}

// streamID parses argument i as a strict id (no "-" or "+"), replying
// with Redis's error when it is not one.
func streamID(c *engine.Ctx, i int, missingSeq uint64) (stream.ID, bool) {
	id, _, ok := parseStreamID(c.Args[i], missingSeq, true, false)
	if !ok {
		c.Error(errInvalidID)
	}
	return id, ok
}

// intervalID is streamParseIntervalIDOrReply: "(" makes the bound
// exclusive (then strict), otherwise "-" and "+" are allowed.
func intervalID(c *engine.Ctx, b []byte, missingSeq uint64) (id stream.ID, excl, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, _, ok = parseStreamID(b[1:], missingSeq, true, false)
		excl = true
	} else {
		id, _, ok = parseStreamID(b, missingSeq, false, false)
	}
	if !ok {
		c.Error(errInvalidID)
	}
	return id, excl, ok
}

// rangeStart and rangeEnd parse an interval's bounds, exclusive ones
// moved inward.
func rangeStart(c *engine.Ctx, b []byte) (stream.ID, bool) {
	id, excl, ok := intervalID(c, b, 0)
	if !ok {
		return id, false
	}
	if excl {
		if id, ok = id.Next(); !ok {
			c.Error(errStartID)
			return id, false
		}
	}
	return id, true
}

func rangeEnd(c *engine.Ctx, b []byte) (stream.ID, bool) {
	id, excl, ok := intervalID(c, b, 1<<64-1)
	if !ok {
		return id, false
	}
	if excl {
		if id, ok = id.Prev(); !ok {
			c.Error(errEndID)
			return id, false
		}
	}
	return id, true
}

// llArg parses argument i as a long long with Redis's error, or with
// "ERR "+msg in its place when msg is set.
func llArg(c *engine.Ctx, i int, msg string) (int64, bool) {
	v, ok := num.ParseInt(c.Args[i])
	if !ok {
		if msg == "" {
			msg = engine.ErrNotInt
		} else {
			msg = "ERR " + msg
		}
		c.Error(msg)
	}
	return v, ok
}

func streamOf(o *keyspace.Object) *stream.Stream { return o.Val().(*stream.Stream) }

// streamLimits are the node limits from the configuration.
func streamLimits(c *engine.Ctx) stream.Limits {
	return stream.Limits{NodeMaxBytes: c.Env.Cfg.Int(config.StreamNodeMaxBytes), NodeMaxEntries: c.Env.Cfg.Int(config.StreamNodeMaxEntries)}
}

func writeID(w *resp.Writer, id stream.ID) {
	var b [48]byte
	w.Bulk(id.AppendTo(b[:0]))
}

// writeEntry writes [id, [field, value, ...]].
func writeEntry(w *resp.Writer, id stream.ID, fv [][]byte) {
	w.Array(2)
	writeID(w, id)
	w.Array(len(fv))
	for _, b := range fv {
		w.Bulk(b)
	}
}

// writeRange writes the live entries from start to end (reverse with
// rev), at most count of them when count > 0, and returns how many.
func writeRange(w *resp.Writer, s *stream.Stream, start, end stream.ID, count int64, rev bool) int64 {
	mark := len(w.Buf)
	var n int64
	it := s.Range(start, end, rev)
	for (count == 0 || n < count) && it.Next() {
		writeEntry(w, it.ID, it.FV)
		n++
	}
	insertHeader(w, mark, func() { w.Array(int(n)) })
	return n
}

// insertHeader puts what header writes (an aggregate's header, whose
// length was known only after its elements) at mark, in front of what
// was written since: the elements are written in place, with no second
// buffer to grow and copy.
func insertHeader(w *resp.Writer, mark int, header func()) {
	if w.Dropped {
		return // the reply is thrown away
	}
	body := len(w.Buf) - mark
	header()
	var hdr [24]byte
	h := copy(hdr[:], w.Buf[mark+body:])
	copy(w.Buf[mark+h:], w.Buf[mark:mark+body])
	copy(w.Buf[mark:], hdr[:h])
	w.Buf = w.Buf[:mark+h+body]
}

// idArg is an id as a command argument.
func idArg(id stream.ID) []byte { return id.Bytes() }
