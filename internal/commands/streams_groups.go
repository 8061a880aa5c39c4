package commands

import (
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// Consumer groups: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM. Their
// effects are Redis's: a claim or delivery propagates as an idempotent
// XCLAIM ... FORCE JUSTID LASTID, a moved last id as XGROUP SETID ...
// ENTRIESREAD.

func init() {
	const (
		acl = "@stream"
		grp = "stream"
	)
	at2 := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 2, 2, 1
		c.ACL = acl
		return c
	}
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		return c
	}
	engine.Register(
		&engine.Command{Name: "xgroup", Arity: -2, Group: grp, Since: "5.0.0", Complexity: "Depends on subcommand.",
			Summary: "A container for consumer groups commands",
			Subs: map[string]*engine.Command{
				"create": at2(&engine.Command{Arity: -5, Flags: engine.FlagWrite | engine.FlagDenyOOM, KeyFlags: "RW insert", Since: "5.0.0", Complexity: "O(1)",
					Summary: "Create a consumer group.", Handler: cmdXgroupCreate}),
				"setid": at2(&engine.Command{Arity: -5, Flags: engine.FlagWrite, KeyFlags: "RW update", Since: "5.0.0", Complexity: "O(1)",
					Summary: "Set a consumer group to an arbitrary last delivered ID value.", Handler: cmdXgroupSetid}),
				"destroy": at2(&engine.Command{Arity: 4, Flags: engine.FlagWrite, KeyFlags: "RW delete", Since: "5.0.0",
					Complexity: "O(N) where N is the number of entries in the group's pending entries list (PEL).",
					Summary:    "Destroy a consumer group.", Handler: cmdXgroupDestroy}),
				"createconsumer": at2(&engine.Command{Arity: 5, Flags: engine.FlagWrite | engine.FlagDenyOOM, KeyFlags: "RW insert", Since: "6.2.0", Complexity: "O(1)",
					Summary: "Create a consumer in a consumer group.", Handler: cmdXgroupCreateConsumer}),
				"delconsumer": at2(&engine.Command{Arity: 5, Flags: engine.FlagWrite, KeyFlags: "RW delete", Since: "5.0.0", Complexity: "O(1)",
					Summary: "Delete a consumer from a consumer group.", Handler: cmdXgroupDelConsumer}),
				"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, ACL: acl, Since: "5.0.0", Complexity: "O(1)",
					Summary: "Show helpful text about the different subcommands", Handler: cmdXgroupHelp},
			}},
		one(&engine.Command{Name: "xack", Arity: -4, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW update", Since: "5.0.0",
			Complexity: "O(1) for each message ID processed.",
			Summary:    "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", Handler: cmdXack}),
		one(&engine.Command{Name: "xpending", Arity: -3, Flags: engine.FlagReadonly, KeyFlags: "RO access", Tips: "nondeterministic_output", Since: "5.0.0",
			Complexity: "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
			Summary:    "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", Handler: cmdXpending}),
		one(&engine.Command{Name: "xclaim", Arity: -6, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW update", Tips: "nondeterministic_output", Since: "5.0.0",
			Complexity: "O(log N) with N being the number of messages in the PEL of the consumer group.",
			Summary:    "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", Handler: cmdXclaim}),
		one(&engine.Command{Name: "xautoclaim", Arity: -6, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW delete", Tips: "nondeterministic_output", Since: "6.2.0",
			Complexity: "O(1) if COUNT is small.",
			Summary:    "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", Handler: cmdXautoclaim}),
	)
}

var xgroupHelp = []string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}

func cmdXgroupHelp(c *engine.Ctx) { streamHelp(c, "XGROUP", xgroupHelp) }

// streamHelp is addReplyHelp as t_stream.c's help replies read in 7.0:
// their last line says "Prints", not "Print".
func streamHelp(c *engine.Ctx, name string, lines []string) {
	c.W.Array(len(lines) + 3)
	c.W.Simple(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}

// subSyntaxError is addReplySubcommandSyntaxError.
func subSyntaxError(c *engine.Ctx) {
	c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
		ascii.CStr(c.Args[1]), strings.ToUpper(string(c.Args[0])))
}

// xgroupLookup is XGROUP's common part: the stream at argument 2 (nil
// when missing and allowed), and the group at argument 3 when needGroup.
func xgroupLookup(c *engine.Ctx, allowMissing, needGroup bool) (o *keyspace.Object, s *stream.Stream, g *stream.Group, ok bool) {
	o, ok = c.LookupWrite(c.Key(2), keyspace.TypeStream)
	if !ok {
		return nil, nil, nil, false
	}
	if o == nil {
		if !allowMissing {
			c.Error(errXgroupNoKey)
			return nil, nil, nil, false
		}
		return nil, nil, nil, true
	}
	s = streamOf(o)
	g = s.Group(c.Args[3])
	if needGroup && g == nil {
		c.Errorf("NOGROUP No such consumer group '%s' for key name '%s'", c.Args[3], c.Args[2])
		return nil, nil, nil, false
	}
	return o, s, g, true
}

// entriesReadArg parses an ENTRIESREAD value.
func entriesReadArg(c *engine.Ctx, i int) (int64, bool) {
	v, ok := c.Int(i)
	if !ok {
		return 0, false
	}
	if v < 0 && v != stream.InvalidEntriesRead {
		c.Error("ERR value for ENTRIESREAD must be positive or -1")
		return 0, false
	}
	return v, true
}

func cmdXgroupCreate(c *engine.Ctx) {
	mkstream := false
	entriesRead := int64(stream.InvalidEntriesRead)
	for i := 5; i < len(c.Args); {
		switch {
		case ascii.OptIs(c.Args[i], "mkstream"):
			mkstream = true
			i++
		case ascii.OptIs(c.Args[i], "entriesread") && i+1 < len(c.Args):
			v, ok := entriesReadArg(c, i+1)
			if !ok {
				return
			}
			entriesRead = v
			i += 2
		default:
			subSyntaxError(c)
			return
		}
	}
	o, s, _, ok := xgroupLookup(c, mkstream, false)
	if !ok {
		return
	}
	var id stream.ID
	if isArg(c.Args[4], "$") {
		if s != nil {
			id = s.LastID
		}
	} else if id, ok = streamID(c, 4, 0); !ok {
		return
	}
	key := c.Key(2)
	if o == nil {
		s = stream.New()
		c.DB.Add(key, keyspace.NewValue(keyspace.TypeStream, s))
	}
	if s.CreateGroup(c.Args[3], id, entriesRead) == nil {
		c.Error("BUSYGROUP Consumer Group name already exists")
		return
	}
	c.W.OK()
	c.Dirty(1)
	c.DB.Modified(key)
	c.Notify(engine.NotifyStream, "xgroup-create", c.Args[2])
}

func cmdXgroupSetid(c *engine.Ctx) {
	entriesRead := int64(stream.InvalidEntriesRead)
	switch len(c.Args) {
	case 7:
		if !ascii.OptIs(c.Args[5], "entriesread") {
			subSyntaxError(c)
			return
		}
		v, ok := entriesReadArg(c, 6)
		if !ok {
			return
		}
		entriesRead = v
	case 5:
	default:
		subSyntaxError(c)
		return
	}
	_, s, g, ok := xgroupLookup(c, false, true)
	if !ok {
		return
	}
	var id stream.ID
	if isArg(c.Args[4], "$") {
		id = s.LastID
	} else {
		var ok bool
		if id, _, ok = parseStreamID(c.Args[4], 0, false, false); !ok {
			c.Error(errInvalidID)
			return
		}
	}
	g.LastID = id
	g.EntriesRead = entriesRead
	c.W.OK()
	c.Dirty(1)
	c.DB.Modified(c.Key(2))
	c.Notify(engine.NotifyStream, "xgroup-setid", c.Args[2])
}

func cmdXgroupDestroy(c *engine.Ctx) {
	_, s, g, ok := xgroupLookup(c, false, false)
	if !ok {
		return
	}
	if g == nil {
		c.W.Int(0)
		return
	}
	s.DestroyGroup(c.Args[3])
	c.W.Int(1)
	c.Dirty(1)
	c.Notify(engine.NotifyStream, "xgroup-destroy", c.Args[2])
	// The write wakes XREADGROUP clients blocked on the group, which
	// then fail with NOGROUP.
	c.DB.Modified(c.Key(2))
}

func cmdXgroupCreateConsumer(c *engine.Ctx) {
	_, _, g, ok := xgroupLookup(c, false, true)
	if !ok {
		return
	}
	if g.CreateConsumer(c.Args[4], c.Now) == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(1)
	c.Dirty(1)
	c.DB.Modified(c.Key(2))
	c.Notify(engine.NotifyStream, "xgroup-createconsumer", c.Args[2])
}

func cmdXgroupDelConsumer(c *engine.Ctx) {
	_, _, g, ok := xgroupLookup(c, false, true)
	if !ok {
		return
	}
	n := g.DeleteConsumer(c.Args[4])
	if n < 0 {
		n = 0
	}
	c.W.Int(int64(n))
	c.Dirty(1)
	c.DB.Modified(c.Key(2))
	c.Notify(engine.NotifyStream, "xgroup-delconsumer", c.Args[2])
}

// groupOf finds the stream at argument 1 and its group named by argument
// 2 for the commands that reply NOGROUP when either is missing.
func groupOf(c *engine.Ctx, o *keyspace.Object) (*stream.Stream, *stream.Group, bool) {
	var g *stream.Group
	var s *stream.Stream
	if o != nil {
		s = streamOf(o)
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.Errorf(errNoGroupFmt, c.Args[1], c.Args[2])
		return nil, nil, false
	}
	return s, g, true
}

func cmdXack(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeStream)
	if !ok {
		return
	}
	var g *stream.Group
	if o != nil {
		g = streamOf(o).Group(c.Args[2])
	}
	if g == nil {
		c.W.Int(0)
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-3)
	for j := 3; j < len(c.Args); j++ {
		id, ok := streamID(c, j, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := 0
	for _, id := range ids {
		if g.Ack(id) {
			n++
		}
	}
	if n > 0 {
		c.Dirty(int64(n))
		c.DB.Modified(key)
	}
	c.W.Int(int64(n))
}

func cmdXpending(c *engine.Ctx) {
	argc := len(c.Args)
	justInfo := argc == 3
	if argc != 3 && (argc < 6 || argc > 9) {
		c.Error(engine.ErrSyntax)
		return
	}
	var start, end stream.ID
	var count, minIdle int64
	var consumerName []byte
	if argc >= 6 {
		si := 3
		if ascii.OptIs(c.Args[3], "idle") {
			v, ok := c.Int(4)
			if !ok {
				return
			}
			minIdle = v
			if argc < 8 {
				c.Error(engine.ErrSyntax)
				return
			}
			si += 2
		}
		v, ok := c.Int(si + 2)
		if !ok {
			return
		}
		count = max(v, 0)
		if start, ok = rangeStart(c, c.Args[si]); !ok {
			return
		}
		if end, ok = rangeEnd(c, c.Args[si+1]); !ok {
			return
		}
		if si+3 < argc {
			consumerName = c.Args[si+3]
		}
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeStream)
	if !ok {
		return
	}
	_, g, ok := groupOf(c, o)
	if !ok {
		return
	}
	if justInfo {
		c.W.Array(4)
		all := g.PendingAll()
		c.W.Int(int64(len(all)))
		if len(all) == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		writeID(c.W, all[0].ID)
		writeID(c.W, all[len(all)-1].ID)
		n := 0
		for _, cons := range g.Consumers() {
			if cons.PendingLen() > 0 {
				n++
			}
		}
		c.W.Array(n)
		for _, cons := range g.Consumers() {
			if cons.PendingLen() > 0 {
				c.W.Array(2)
				c.W.BulkString(cons.Name)
				c.W.BulkInt(int64(cons.PendingLen()))
			}
		}
		return
	}
	var pel []*stream.Pending
	if consumerName != nil {
		cons := g.Consumer(consumerName)
		if cons == nil {
			c.W.Array(0)
			return
		}
		pel = cons.PendingFrom(start)
	} else {
		pel = g.PendingFrom(start)
	}
	var out []*stream.Pending
	for _, p := range pel {
		if count == 0 || end.Less(p.ID) {
			break
		}
		if minIdle != 0 && c.Now-p.DeliveryTime < minIdle {
			continue
		}
		out = append(out, p)
		count--
	}
	c.W.Array(len(out))
	for _, p := range out {
		c.W.Array(4)
		writeID(c.W, p.ID)
		c.W.BulkString(p.Consumer.Name)
		c.W.Int(max(c.Now-p.DeliveryTime, 0))
		c.W.Int(int64(p.DeliveryCount))
	}
}

// propXclaim propagates a delivery or claim of p as Redis's
// streamPropagateXCLAIM does.
func propXclaim(c *engine.Ctx, key, group, id []byte, p *stream.Pending, g *stream.Group) {
	if !c.Propagating() {
		return
	}
	c.Propagate([]byte("XCLAIM"), key, group, []byte(p.Consumer.Name), []byte("0"), id,
		[]byte("TIME"), strconv.AppendInt(nil, p.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, p.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), idArg(g.LastID))
}

// propSetID propagates a group's last id and read counter
// (streamPropagateGroupID).
func propSetID(c *engine.Ctx, key, group []byte, g *stream.Group) {
	if !c.Propagating() {
		return
	}
	c.Propagate([]byte("XGROUP"), []byte("SETID"), key, group, idArg(g.LastID),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10))
}

func cmdXclaim(c *engine.Ctx) {
	o, ok := c.LookupWrite(c.Key(1), keyspace.TypeStream)
	if !ok {
		return
	}
	s, g, ok := groupOf(c, o)
	if !ok {
		return
	}
	minIdle, ok := llArg(c, 4, "Invalid min-idle-time argument for XCLAIM")
	if !ok {
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(c.Args); j++ {
		if _, _, ok := parseStreamID(c.Args[j], 0, true, false); !ok {
			break
		}
	}
	lastIDArg := j - 1
	now := c.Now
	var lastID stream.ID
	retry, delivery := int64(-1), int64(-1)
	force, justID := false, false
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		opt := c.Args[j]
		switch {
		case ascii.OptIs(opt, "force"):
			force = true
		case ascii.OptIs(opt, "justid"):
			justID = true
		case ascii.OptIs(opt, "idle") && more > 0:
			j++
			v, ok := llArg(c, j, "Invalid IDLE option argument for XCLAIM")
			if !ok {
				return
			}
			delivery = now - v
		case ascii.OptIs(opt, "time") && more > 0:
			j++
			v, ok := llArg(c, j, "Invalid TIME option argument for XCLAIM")
			if !ok {
				return
			}
			delivery = v
		case ascii.OptIs(opt, "retrycount") && more > 0:
			j++
			v, ok := llArg(c, j, "Invalid RETRYCOUNT option argument for XCLAIM")
			if !ok {
				return
			}
			retry = v
		case ascii.OptIs(opt, "lastid") && more > 0:
			j++
			v, ok := streamID(c, j, 0)
			if !ok {
				return
			}
			lastID = v
		default:
			c.Errorf("ERR Unrecognized XCLAIM option '%s'", ascii.CStr(opt))
			return
		}
	}
	propLast := false
	if g.LastID.Less(lastID) {
		g.LastID = lastID
		propLast = true
	}
	if delivery != -1 {
		if delivery < 0 || delivery > now {
			delivery = now
		}
	} else {
		delivery = now
	}
	key, group, name := c.Args[1], c.Args[2], c.Args[3]
	var cons *stream.Consumer
	var out claimReply
	dirty := int64(0)
	for k := 5; k <= lastIDArg; k++ {
		id, _, _ := parseStreamID(c.Args[k], 0, true, false)
		p := g.Pending(id)
		if !s.Has(id) {
			if p != nil {
				propXclaim(c, key, group, c.Args[k], p, g)
				propLast = false
				dirty++
				g.Ack(id)
			}
			continue
		}
		checkIdle := p != nil
		if force && p == nil {
			// A forced claim creates the pending entry first, as
			// delivered once now (streamCreateNACK).
			if cons == nil {
				cons = claimConsumer(c, g, name)
			}
			p, _ = g.AddPending(id, cons, now, 1)
		}
		if p == nil {
			continue
		}
		if checkIdle && minIdle != 0 && now-p.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = claimConsumer(c, g, name)
		}
		g.Assign(p, cons)
		p.DeliveryTime = delivery
		if retry >= 0 {
			p.DeliveryCount = uint64(retry)
		} else if !justID {
			p.DeliveryCount++
		}
		out.add(s, id, justID)
		cons.SeenTime = c.Now
		propXclaim(c, key, group, c.Args[k], p, g)
		propLast = false
		dirty++
	}
	if propLast {
		propSetID(c, key, group, g)
		dirty++
	}
	c.PreventPropagation()
	if dirty > 0 {
		c.Dirty(dirty)
		c.DB.Modified(c.Key(1))
	}
	out.write(c)
}

// claimConsumer finds or creates the claiming consumer.
func claimConsumer(c *engine.Ctx, g *stream.Group, name []byte) *stream.Consumer {
	if cons := g.Consumer(name); cons != nil {
		return cons
	}
	c.Notify(engine.NotifyStream, "xgroup-createconsumer", c.Args[1])
	c.Dirty(1)
	return g.CreateConsumer(name, c.Now)
}

// claimReply collects a claim's reply: ids alone (JUSTID) or entries.
type claimReply struct {
	n   int
	buf []byte
}

func (r *claimReply) add(s *stream.Stream, id stream.ID, justID bool) {
	w := resp.Writer{Buf: r.buf}
	if justID {
		writeID(&w, id)
	} else {
		fv, _ := s.Get(id)
		writeEntry(&w, id, fv)
	}
	r.buf = w.Buf
	r.n++
}

func (r *claimReply) write(c *engine.Ctx) {
	c.W.Array(r.n)
	c.W.Raw(r.buf)
}

func cmdXautoclaim(c *engine.Ctx) {
	minIdle, ok := llArg(c, 4, "Invalid min-idle-time argument for XAUTOCLAIM")
	if !ok {
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := rangeStart(c, c.Args[5])
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	const attemptsFactor = 10
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case ascii.OptIs(c.Args[j], "count") && more > 0:
			v, ok := c.Int(j + 1)
			if !ok || v < 1 || v > (1<<63-1)/16 {
				if ok {
					c.Error("ERR COUNT must be > 0")
				}
				return
			}
			count = v
			j++
		case ascii.OptIs(c.Args[j], "justid"):
			justID = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	o, ok := c.LookupWrite(c.Key(1), keyspace.TypeStream)
	if !ok {
		return
	}
	s, g, ok := groupOf(c, o)
	if !ok {
		return
	}
	attempts := count * attemptsFactor
	key, group, name := c.Args[1], c.Args[2], c.Args[3]
	var cons *stream.Consumer
	var out claimReply
	var deleted []stream.ID
	dirty := int64(0)
	now := c.Now
	// Walk the PEL from start; claims change owners but not the PEL's
	// order, and deleted entries leave it, so the walk re-seeks by id.
	cur := start
	var endID stream.ID
	for {
		pel := g.PendingFrom(cur)
		if len(pel) == 0 {
			break
		}
		if attempts == 0 || count == 0 {
			endID = pel[0].ID
			break
		}
		attempts--
		p := pel[0]
		id := p.ID
		if next, ok := id.Next(); ok {
			cur = next
		} else {
			cur = id
		}
		if !s.Has(id) {
			propXclaim(c, key, group, idArg(id), p, g)
			dirty++
			g.Ack(id)
			deleted = append(deleted, id)
			count--
			if id == stream.MaxID {
				break
			}
			continue
		}
		if minIdle != 0 && now-p.DeliveryTime < minIdle {
			if id == stream.MaxID {
				break
			}
			continue
		}
		if cons == nil {
			cons = claimConsumer(c, g, name)
		}
		g.Assign(p, cons)
		p.DeliveryTime = now
		if !justID {
			p.DeliveryCount++
		}
		out.add(s, id, justID)
		count--
		cons.SeenTime = c.Now
		propXclaim(c, key, group, idArg(id), p, g)
		dirty++
		if id == stream.MaxID {
			break
		}
	}
	c.PreventPropagation()
	if dirty > 0 {
		c.Dirty(dirty)
		c.DB.Modified(c.Key(1))
	}
	c.W.Array(3)
	writeID(c.W, endID)
	out.write(c)
	c.W.Array(len(deleted))
	for _, id := range deleted {
		writeID(c.W, id)
	}
}
