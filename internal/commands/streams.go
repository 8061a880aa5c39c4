package commands

import (
	"bytes"
	"strconv"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The stream family (t_stream.c): this file has the commands on entries
// (XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID); streams_groups.go
// has the consumer groups, streams_read.go XREAD and XREADGROUP,
// streams_info.go XINFO. A stream key holds a *stream.Stream.
//
// Replies, errors, effects and keyspace notifications (xadd, xtrim,
// xdel, xsetid, xgroup-*) follow redis-server 7.0.

func init() {
	const (
		acl = "@stream"
		grp = "stream"
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "xadd", Specs: keySpecs["xadd"], Arity: -5, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast, KeyFlags: "RW update",
			Tips: "nondeterministic_output", Since: "5.0.0", Complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
			Summary: "Appends a new entry to a stream", Handler: cmdXadd}),
		one(&engine.Command{Name: "xrange", Arity: -4, Flags: engine.FlagReadonly, KeyFlags: "RO access", Since: "5.0.0",
			Complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval", Handler: cmdXrange}),
		one(&engine.Command{Name: "xrevrange", Arity: -4, Flags: engine.FlagReadonly, KeyFlags: "RO access", Since: "5.0.0",
			Complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", Handler: cmdXrevrange}),
		one(&engine.Command{Name: "xlen", Arity: 2, Flags: engine.FlagReadonly | engine.FlagFast, KeyFlags: "RO", Since: "5.0.0", Complexity: "O(1)",
			Summary: "Return the number of entries in a stream", Handler: cmdXlen}),
		one(&engine.Command{Name: "xdel", Arity: -3, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW delete", Since: "5.0.0",
			Complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
			Summary:    "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", Handler: cmdXdel}),
		one(&engine.Command{Name: "xtrim", Arity: -4, Flags: engine.FlagWrite, KeyFlags: "RW delete", Tips: "nondeterministic_output", Since: "5.0.0",
			Complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
			Summary:    "Trims the stream to (approximately if '~' is passed) a certain size", Handler: cmdXtrim}),
		one(&engine.Command{Name: "xsetid", Arity: -3, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast, KeyFlags: "RW update", Since: "5.0.0", Complexity: "O(1)",
			Summary: "An internal command for replicating stream values", Handler: cmdXsetid}),
	)
}

// trimParse is streamParseAddOrTrimArgsOrReply: the trim options (and for
// XADD NOMKSTREAM and the id). It returns the index of the id for XADD
// (of the argument after the options for XTRIM), or -1 after replying
// with an error. argIdx is the index of the trim threshold.
type trimParse struct {
	stream.TrimArgs
	argIdx   int
	id       stream.ID
	idGiven  bool
	seqGiven bool
	noMk     bool
}

func parseTrimArgs(c *engine.Ctx, xadd bool) (p trimParse, idpos int) {
	limitGiven := false
	i := 2
	args := c.Args
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			goto done
		case (ascii.OptIs(opt, "maxlen") || ascii.OptIs(opt, "minid")) && more > 0:
			if p.Strategy != stream.TrimNone {
				c.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return p, -1
			}
			p.Approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				p.Approx = next[0] == '~'
				i++
			}
			if ascii.OptIs(opt, "maxlen") {
				v, ok := c.Int(i + 1)
				if !ok {
					return p, -1
				}
				if v < 0 {
					c.Error("ERR The MAXLEN argument must be >= 0.")
					return p, -1
				}
				p.MaxLen, p.Strategy = v, stream.TrimMaxLen
			} else {
				id, ok := streamID(c, i+1, 0)
				if !ok {
					return p, -1
				}
				p.MinID, p.Strategy = id, stream.TrimMinID
			}
			i++
			p.argIdx = i
		case ascii.OptIs(opt, "limit") && more > 0:
			v, ok := c.Int(i + 1)
			if !ok {
				return p, -1
			}
			if v < 0 {
				c.Error("ERR The LIMIT argument must be >= 0.")
				return p, -1
			}
			p.Limit = v
			limitGiven = true
			i++
		case xadd && ascii.OptIs(opt, "nomkstream"):
			p.noMk = true
		case xadd:
			id, seqGiven, ok := parseStreamID(opt, 0, true, true)
			if !ok {
				c.Error(errInvalidID)
				return p, -1
			}
			p.id, p.seqGiven, p.idGiven = id, seqGiven, true
			goto done
		default:
			c.Error(engine.ErrSyntax)
			return p, -1
		}
	}
done:
	if p.Limit != 0 && p.Strategy == stream.TrimNone {
		c.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return p, -1
	}
	if !xadd && p.Strategy == stream.TrimNone {
		c.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return p, -1
	}
	if c.S.Obey {
		// What a primary or the AOF sends was rewritten to trim exactly.
		p.Limit = 0
	} else if limitGiven {
		if !p.Approx {
			c.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return p, -1
		}
	} else if p.Approx {
		p.Limit = 100 * c.Env.Cfg.Int(config.StreamNodeMaxEntries)
		if p.Limit <= 0 || p.Limit > 1000000 {
			p.Limit = 10000
		}
	} else {
		p.Limit = 0
	}
	return p, i
}

// trimRewrite gives the effect of an approximate trim: "~" becomes "="
// and the threshold what the trim reached (streamRewriteApproxSpecifier,
// streamRewriteTrimArgument).
func trimRewrite(argv [][]byte, s *stream.Stream, p *trimParse) {
	if a := argv[p.argIdx-1]; len(a) == 1 && a[0] == '~' {
		argv[p.argIdx-1] = []byte("=")
	}
	if p.Strategy == stream.TrimMaxLen {
		argv[p.argIdx] = strconv.AppendInt(nil, s.Len(), 10)
	} else {
		first, ok := s.FirstEntry(true)
		if !ok {
			first = stream.MaxID
		}
		argv[p.argIdx] = idArg(first)
	}
}

func cmdXadd(c *engine.Ctx) {
	p, idpos := parseTrimArgs(c, true)
	if idpos < 0 {
		return
	}
	fieldPos := idpos + 1
	if n := len(c.Args) - fieldPos; n < 2 || n%2 == 1 {
		c.Errorf("ERR wrong number of arguments for '%s' command", "xadd")
		return
	}
	if p.idGiven && p.seqGiven && p.id.IsZero() {
		c.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeStream)
	if !ok {
		return
	}
	var s *stream.Stream
	if o == nil {
		if p.noMk {
			c.W.Null()
			return
		}
		s = stream.New()
		o = keyspace.NewValue(keyspace.TypeStream, s)
		c.DB.Add(key, o)
	} else {
		s = streamOf(o)
	}
	if s.LastID == stream.MaxID {
		c.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id stream.ID
	switch {
	case !p.idGiven:
		id = nextAutoID(s.LastID, c.Now)
	case !p.seqGiven:
		if s.LastID.Ms == p.id.Ms {
			if s.LastID.Seq == 1<<64-1 {
				c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
				return
			}
			id = stream.ID{Ms: p.id.Ms, Seq: s.LastID.Seq + 1}
		} else {
			id = p.id
		}
	default:
		id = p.id
	}
	if !s.CanAppend(id) {
		c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	s.Append(id, c.Args[fieldPos:], streamLimits(c))
	writeID(c.W, id)
	c.DB.Modified(key)
	c.Notify(engine.NotifyStream, "xadd", c.Args[1])
	c.Dirty(1)
	// The effect names the id and the trim's outcome; it is built only
	// when something reads effects.
	prop := c.Propagating()
	var argv [][]byte
	if prop && (!p.idGiven || !p.seqGiven) {
		argv = append(argv, c.Args...)
		argv[idpos] = idArg(id)
	}
	if p.Strategy != stream.TrimNone {
		if s.Trim(p.TrimArgs) > 0 {
			c.Notify(engine.NotifyStream, "xtrim", c.Args[1])
		}
		if prop && p.Approx {
			if argv == nil {
				argv = append(argv, c.Args...)
			}
			trimRewrite(argv, s, &p)
		}
	}
	if argv != nil {
		c.Rewrite(argv...)
	}
}

// nextAutoID is streamNextID: the current millisecond with sequence 0,
// or the id after last when the clock has not passed it.
func nextAutoID(last stream.ID, now int64) stream.ID {
	if uint64(now) > last.Ms {
		return stream.ID{Ms: uint64(now)}
	}
	id, _ := last.Next()
	return id
}

func cmdXrange(c *engine.Ctx)    { xrangeGeneric(c, false) }
func cmdXrevrange(c *engine.Ctx) { xrangeGeneric(c, true) }

func xrangeGeneric(c *engine.Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := rangeStart(c, startArg)
	if !ok {
		return
	}
	end, ok := rangeEnd(c, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if ascii.OptIs(c.Args[j], "count") && j+1 < len(c.Args) {
			v, ok := c.Int(j + 1)
			if !ok {
				return
			}
			count = max(v, 0)
			j++
		} else {
			c.Error(engine.ErrSyntax)
			return
		}
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.W.Array(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	writeRange(c.W, streamOf(o), start, end, max(count, 0), rev)
}

func cmdXlen(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(streamOf(o).Len())
}

func cmdXdel(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-2)
	for j := 2; j < len(c.Args); j++ {
		id, ok := streamID(c, j, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := streamOf(o).XDel(ids)
	if n > 0 {
		c.DB.Modified(key)
		c.Notify(engine.NotifyStream, "xdel", c.Args[1])
		c.Dirty(int64(n))
	}
	c.W.Int(int64(n))
}

func cmdXtrim(c *engine.Ctx) {
	p, idx := parseTrimArgs(c, false)
	if idx < 0 {
		return
	}
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	s := streamOf(o)
	n := s.Trim(p.TrimArgs)
	if n > 0 {
		c.Notify(engine.NotifyStream, "xtrim", c.Args[1])
		if p.Approx {
			argv := append([][]byte(nil), c.Args...)
			trimRewrite(argv, s, &p)
			c.Rewrite(argv...)
		}
		c.DB.Modified(key)
		c.Dirty(n)
	}
	c.W.Int(n)
}

func cmdXsetid(c *engine.Ctx) {
	id, ok := streamID(c, 2, 0)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel stream.ID
	for i := 3; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		switch {
		case ascii.OptIs(c.Args[i], "entriesadded") && more > 0:
			v, ok := c.Int(i + 1)
			if !ok {
				return
			}
			if v < 0 {
				c.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
			i++
		case ascii.OptIs(c.Args[i], "maxdeletedid") && more > 0:
			v, ok := streamID(c, i+1, 0)
			if !ok {
				return
			}
			if id.Less(v) {
				c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = v
			i++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.Error(engine.ErrNoKey)
		return
	}
	s := streamOf(o)
	if s.Len() > 0 {
		last, _ := s.LastEntry()
		if id.Less(last) {
			c.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Len() > entriesAdded {
			c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = entriesAdded
	}
	if !maxDel.IsZero() {
		s.MaxDeletedID = maxDel
	}
	c.W.OK()
	c.DB.Modified(key)
	c.Notify(engine.NotifyStream, "xsetid", c.Args[1])
	c.Dirty(1)
}

// isArg reports whether b is exactly s (case-sensitive, as Redis's strcmp).
func isArg(b []byte, s string) bool { return bytes.Equal(b, []byte(s)) }
