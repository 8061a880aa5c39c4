package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// XREAD and XREADGROUP (xreadCommand). Served at once when a stream has
// what they ask for; with BLOCK they park on their keys otherwise
// (engine/blocking.go) and run again when a key is written: XREAD's "$"
// is resolved before it parks, so the re-run asks for what came after;
// XREADGROUP waits for "the group's last id", which the re-run reads
// again, and it also runs again when its stream is deleted or its group
// destroyed, to fail as Redis's blocked clients do.

// xreadBlockedCount is XREAD_BLOCKED_DEFAULT_COUNT: a blocked read
// without COUNT is served at most this many entries.
const xreadBlockedCount = 1000

func init() {
	engine.Register(
		&engine.Command{Name: "xread", Arity: -4, Flags: engine.FlagReadonly | engine.FlagBlocking, Keys: xreadKeys, KeyFlags: "RO access",
			Keyword: &engine.KeywordSpec{Keyword: "STREAMS", StartFrom: 1, LastKey: -1, Step: 1, Limit: 2},
			ACL:     "@stream", Group: "stream", Since: "5.0.0",
			Complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
			Summary:    "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", Handler: cmdXread},
		&engine.Command{Name: "xreadgroup", Arity: -7, Flags: engine.FlagWrite | engine.FlagBlocking, Keys: xreadKeys, KeyFlags: "RO access",
			Keyword: &engine.KeywordSpec{Keyword: "STREAMS", StartFrom: 4, LastKey: -1, Step: 1, Limit: 2},
			ACL:     "@stream", Group: "stream", Since: "5.0.0",
			Complexity: "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
			Summary:    "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", Handler: cmdXreadgroup},
	)
}

// xreadKeys finds the keys after STREAMS: the first half of what follows.
func xreadKeys(args [][]byte) []int {
	for i := 1; i < len(args); i++ {
		if ascii.OptIs(args[i], "streams") {
			n := (len(args) - i - 1) / 2
			keys := make([]int, n)
			for k := range keys {
				keys[k] = i + 1 + k
			}
			return keys
		}
	}
	return nil
}

func cmdXread(c *engine.Ctx)      { xread(c, false) }
func cmdXreadgroup(c *engine.Ctx) { xread(c, true) }

func xread(c *engine.Ctx, isGroup bool) {
	if isGroup {
		// Deliveries and claims propagate as XCLAIM and XGROUP forms.
		c.PreventPropagation()
	}
	args := c.Args
	timeout := int64(-1)
	var count int64
	streamsArg, nstreams := 0, 0
	var groupName, consumerName []byte
	noack := false
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case ascii.OptIs(o, "block") && more > 0:
			if c.Env.ScriptRunning() {
				// Redis refuses BLOCK in scripts outright rather than
				// answering as a timeout.
				c.Errorf("ERR %s command is not allowed with BLOCK option from scripts", args[0])
				return
			}
			i++
			v, ok := num.ParseInt(args[i])
			if !ok {
				c.Error("ERR timeout is not an integer or out of range")
				return
			}
			if v < 0 {
				c.Error(engine.ErrTimeoutNeg)
				return
			}
			timeout = v
		case ascii.OptIs(o, "count") && more > 0:
			i++
			v, ok := c.Int(i)
			if !ok {
				return
			}
			count = max(v, 0)
		case ascii.OptIs(o, "streams") && more > 0:
			streamsArg = i + 1
			nstreams = len(args) - streamsArg
			if nstreams%2 != 0 {
				c.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			nstreams /= 2
			i = len(args)
		case ascii.OptIs(o, "group") && more >= 2:
			if !isGroup {
				c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumerName = args[i+1], args[i+2]
			i += 2
		case ascii.OptIs(o, "noack"):
			if !isGroup {
				c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	if isGroup && groupName == nil {
		c.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	keys := args[streamsArg : streamsArg+nstreams]
	idArgs := args[streamsArg+nstreams:]
	servingKey, serving := c.ServingKey()
	if serving {
		// Run again for a write to one key: only that key counts.
		for i, k := range keys {
			if string(k) == servingKey {
				keys, idArgs = keys[i:i+1], idArgs[i:i+1]
				break
			}
		}
		if count == 0 {
			count = xreadBlockedCount
		}
	}
	ids := make([]stream.ID, len(keys))
	groups := make([]*stream.Group, len(keys))
	streams := make([]*stream.Stream, len(keys))
	for i, k := range keys {
		var o *keyspace.Object
		if isGroup {
			o = c.DB.Lookup(string(k))
		} else {
			o = c.DB.LookupRead(string(k))
		}
		if o != nil && o.Type != keyspace.TypeStream {
			if serving {
				c.Error("UNBLOCKED the stream key no longer exists")
				return
			}
			c.Error(engine.ErrWrongType)
			return
		}
		if o != nil {
			streams[i] = streamOf(o)
		}
		if isGroup {
			if o != nil {
				groups[i] = streams[i].Group(groupName)
			}
			if groups[i] == nil {
				switch {
				case serving && o == nil:
					c.Error("UNBLOCKED the stream key no longer exists")
				case serving:
					c.Error("NOGROUP the consumer group this client was blocked on no longer exists")
				default:
					c.Errorf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", k, groupName)
				}
				return
			}
		}
		a := idArgs[i]
		switch {
		case isArg(a, "$"):
			if isGroup {
				c.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if o != nil {
				ids[i] = streams[i].LastID
			}
			continue
		case isArg(a, ">"):
			if !isGroup {
				c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids[i] = stream.MaxID
			continue
		}
		id, _, ok := parseStreamID(a, 0, true, false)
		if !ok {
			c.Error(errInvalidID)
			return
		}
		ids[i] = id
	}

	// The reply is written in place; its header goes in front at the end,
	// when the number of streams served is known.
	body := c.W
	mark := len(body.Buf)
	served := 0
	for i, s := range streams {
		if s == nil {
			continue
		}
		gt := ids[i]
		g := groups[i]
		history, sync := false, false
		if serving {
			// A blocked reader is served when the stream's last id
			// passed its own, even if the entries that moved it are
			// gone again (it then gets none), as Redis serves it.
			if g != nil {
				gt = g.LastID
			}
			sync = gt.Less(s.LastID)
		} else if g != nil {
			if gt != stream.MaxID {
				sync, history = true, true
			} else if s.Len() > 0 {
				if last, _ := s.LastEntry(); g.LastID.Less(last) {
					sync = true
					gt = g.LastID
				}
			}
		} else if s.Len() > 0 {
			if last, _ := s.LastEntry(); gt.Less(last) {
				sync = true
			}
		}
		if !sync {
			continue
		}
		served++
		start, _ := gt.Next()
		if c.W.Proto == 2 {
			body.Array(2)
		}
		body.Bulk(keys[i])
		if g == nil {
			writeRange(body, s, start, stream.MaxID, count, false)
			continue
		}
		cons := g.Consumer(consumerName)
		if cons == nil {
			cons = g.CreateConsumer(consumerName, c.Now)
			c.Notify(engine.NotifyStream, "xgroup-createconsumer", keys[i])
			if noack {
				c.Propagate([]byte("XGROUP"), []byte("CREATECONSUMER"), keys[i], groupName, consumerName)
			}
		}
		cons.SeenTime = c.Now
		if history {
			readHistory(c, body, s, cons, start, count)
		} else if deliverNew(c, body, s, g, cons, keys[i], groupName, start, count, noack) == 0 {
			continue
		}
		c.Dirty(1)
	}
	if served > 0 {
		insertHeader(body, mark, func() {
			if body.Proto == 2 {
				body.Array(served)
			} else {
				body.Map(served)
			}
		})
		return
	}
	if timeout != -1 {
		deadline := int64(0)
		if timeout > 0 {
			if timeout > math.MaxInt64-c.Now {
				deadline = math.MaxInt64
			} else {
				deadline = c.Now + timeout
			}
		}
		if serving {
			c.Block(keyspace.TypeStream, keys, deadline) // keeps its place
			return
		}
		// The parked copy of the command names the ids "$" stood for.
		orig := c.Args
		if !isGroup {
			c.Args = append([][]byte(nil), orig...)
			for i := range keys {
				if isArg(idArgs[i], "$") {
					c.Args[streamsArg+nstreams+i] = idArg(ids[i])
				}
			}
		}
		var ok bool
		if isGroup {
			ok = c.BlockAlways(keyspace.TypeStream, keys, deadline)
		} else {
			ok = c.Block(keyspace.TypeStream, keys, deadline)
		}
		c.Args = orig
		if ok {
			return
		}
	}
	c.W.NullArray()
}

// readHistory replies with the consumer's pending entries from start
// (streamReplyWithRangeFromConsumerPEL): an entry deleted since its
// delivery comes as its id and a null; the others count one more
// delivery.
func readHistory(c *engine.Ctx, w *resp.Writer, s *stream.Stream, cons *stream.Consumer, start stream.ID, count int64) {
	pel := cons.PendingFrom(start)
	if count > 0 && int64(len(pel)) > count {
		pel = pel[:count]
	}
	w.Array(len(pel))
	for _, p := range pel {
		fv, ok := s.Get(p.ID)
		if !ok {
			w.Array(2)
			writeID(w, p.ID)
			w.NullArray()
			continue
		}
		writeEntry(w, p.ID, fv)
		p.DeliveryTime = c.Now
		p.DeliveryCount++
	}
}

// deliverNew delivers entries from start on to cons (streamReplyWithRange
// with a group) and returns how many: each moves the group's last id and read counter, and
// unless noack enters the PELs, propagated as XCLAIM; with noack the new
// last id propagates as XGROUP SETID.
func deliverNew(c *engine.Ctx, w *resp.Writer, s *stream.Stream, g *stream.Group, cons *stream.Consumer, key, group []byte, start stream.ID, count int64, noack bool) int {
	var it stream.Iter
	s.InitRangeFrom(&it, start, stream.MaxID, g.Delivered)
	var idBuf [16]stream.ID
	ids := idBuf[:0]
	mark := len(w.Buf)
	for (count == 0 || int64(len(ids)) < count) && it.Next() {
		writeEntry(w, it.ID, it.FV)
		ids = append(ids, it.ID)
	}
	insertHeader(w, mark, func() { w.Array(len(ids)) })
	if len(ids) > 0 {
		g.Delivered = it.Cursor()
	}
	propLast := false
	for _, id := range ids {
		if g.LastID.Less(id) {
			if g.EntriesRead != stream.InvalidEntriesRead && !s.RangeHasTombstones(&id, nil) {
				g.EntriesRead++
			} else if s.EntriesAdded != 0 {
				g.EntriesRead = s.EstimateDistance(id)
			}
			g.LastID = id
			if noack {
				propLast = true
			}
		}
		if !noack {
			p, fresh := g.AddPending(id, cons, c.Now, 1)
			if !fresh {
				g.Assign(p, cons)
				p.DeliveryTime = c.Now
				p.DeliveryCount = 1
			}
			if c.Propagating() {
				propXclaim(c, key, group, idArg(id), p, g)
			}
		}
	}
	if propLast {
		propSetID(c, key, group, g)
	}
	return len(ids)
}
