package commands

import (
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// The pub/sub family: subscriptions and publishing over the engine's
// registry (engine/pubsub.go). Confirmations are pushes in RESP3 and
// arrays in RESP2; a channel's shard variant behaves as in a standalone
// Redis 7.0 (the cluster routes it by slot).

func init() {
	const subFlags = engine.FlagPubSub | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
	const pubFlags = engine.FlagPubSub | engine.FlagLoading | engine.FlagStale | engine.FlagFast | engine.FlagMayReplicate
	const listFlags = engine.FlagPubSub | engine.FlagLoading | engine.FlagStale
	const grp = "pubsub"
	const nSub = "O(N) where N is the number of channels to subscribe to."
	engine.Register(
		&engine.Command{Name: "subscribe", Arity: -2, Flags: subFlags, Group: grp,
			Summary: "Listen for messages published to the given channels", Since: "2.0.0", Complexity: nSub,
			Handler: func(c *engine.Ctx) { subscribe(c, engine.SubChannel) }},
		&engine.Command{Name: "psubscribe", Arity: -2, Flags: subFlags, Group: grp,
			Summary: "Listen for messages published to channels matching the given patterns", Since: "2.0.0",
			Complexity: "O(N) where N is the number of patterns the client is already subscribed to.",
			Handler:    func(c *engine.Ctx) { subscribe(c, engine.SubPattern) }},
		&engine.Command{Name: "ssubscribe", Arity: -2, Flags: subFlags, First: 1, Last: -1, Step: 1, KeyFlags: "not_key", Group: grp,
			Summary: "Listen for messages published to the given shard channels", Since: "7.0.0",
			Complexity: "O(N) where N is the number of shard channels to subscribe to.",
			Handler:    func(c *engine.Ctx) { subscribe(c, engine.SubShard) }},
		&engine.Command{Name: "unsubscribe", Arity: -1, Flags: subFlags, Group: grp,
			Summary: "Stop listening for messages posted to the given channels", Since: "2.0.0",
			Complexity: "O(N) where N is the number of clients already subscribed to a channel.",
			Handler:    func(c *engine.Ctx) { unsubscribe(c, engine.SubChannel) }},
		&engine.Command{Name: "punsubscribe", Arity: -1, Flags: subFlags, Group: grp,
			Summary: "Stop listening for messages posted to channels matching the given patterns", Since: "2.0.0",
			Complexity: "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
			Handler:    func(c *engine.Ctx) { unsubscribe(c, engine.SubPattern) }},
		&engine.Command{Name: "sunsubscribe", Arity: -1, Flags: subFlags, First: 1, Last: -1, Step: 1, KeyFlags: "not_key", Group: grp,
			Summary: "Stop listening for messages posted to the given shard channels", Since: "7.0.0",
			Complexity: "O(N) where N is the number of clients already subscribed to a shard channel.",
			Handler:    func(c *engine.Ctx) { unsubscribe(c, engine.SubShard) }},
		&engine.Command{Name: "publish", Arity: 3, Flags: pubFlags, Group: grp,
			Summary: "Post a message to a channel", Since: "2.0.0",
			Complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
			Handler:    func(c *engine.Ctx) { publish(c, engine.SubChannel) }},
		&engine.Command{Name: "spublish", Arity: 3, Flags: pubFlags, First: 1, Last: 1, Step: 1, KeyFlags: "not_key", Group: grp,
			Summary: "Post a message to a shard channel", Since: "7.0.0",
			Complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
			Handler:    func(c *engine.Ctx) { publish(c, engine.SubShard) }},
		&engine.Command{Name: "pubsub", Arity: -2, Group: grp, Summary: "A container for Pub/Sub commands", Since: "2.8.0",
			Complexity: "Depends on subcommand.", Subs: map[string]*engine.Command{
				"channels": {Arity: -2, Flags: listFlags, Summary: "List active channels", Since: "2.8.0",
					Complexity: "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
					Handler:    func(c *engine.Ctx) { pubsubChannels(c, engine.SubChannel) }},
				"shardchannels": {Arity: -2, Flags: listFlags, Summary: "List active shard channels", Since: "7.0.0",
					Complexity: "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
					Handler:    func(c *engine.Ctx) { pubsubChannels(c, engine.SubShard) }},
				"numsub": {Arity: -2, Flags: listFlags, Summary: "Get the count of subscribers for channels", Since: "2.8.0",
					Complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
					Handler:    func(c *engine.Ctx) { pubsubNumsub(c, engine.SubChannel) }},
				"shardnumsub": {Arity: -2, Flags: listFlags, Summary: "Get the count of subscribers for shard channels", Since: "7.0.0",
					Complexity: "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
					Handler:    func(c *engine.Ctx) { pubsubNumsub(c, engine.SubShard) }},
				"numpat": {Arity: 2, Flags: listFlags, Summary: "Get the count of unique patterns pattern subscriptions", Since: "2.8.0",
					Complexity: "O(1)", Handler: func(c *engine.Ctx) { c.W.Int(int64(c.Env.NumPatterns())) }},
				"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Summary: "Show helpful text about the different subcommands",
					Since: "6.2.0", Complexity: "O(1)", Handler: cmdPubsubHelp},
			}},
	)
}

// subCount is the count a (un)subscribe confirmation reports: channels
// and patterns together, or shard channels alone.
func subCount(s *engine.Session, kind engine.SubKind) int64 {
	if kind == engine.SubShard {
		return int64(s.SubCount(engine.SubShard))
	}
	return int64(s.SubCount(engine.SubChannel) + s.SubCount(engine.SubPattern))
}

// confirm writes one (un)subscribe confirmation; a nil name is the
// unsubscribe-from-nothing reply. CLIENT REPLY OFF or SKIP, which drop
// the command's reply, do not silence it (Redis's CLIENT_PUSHING): it is
// pushed instead, and the connection keeps it (conn.applyReplyMode).
func confirm(c *engine.Ctx, kind engine.SubKind, unsub bool, name []byte) {
	w := c.W
	pushed := c.S.Reply != engine.ReplyOn && c.S.Push != nil
	if pushed {
		w = &resp.Writer{Proto: c.W.Proto}
	}
	w.Push(3)
	w.BulkString(engine.SubVerb(kind, unsub))
	if name == nil {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(subCount(c.S, kind))
	if pushed {
		c.S.Push(w.Buf)
	}
}

func subscribe(c *engine.Ctx, kind engine.SubKind) {
	// A transaction may subscribe (Redis lets EXEC's client do it), but
	// a shard subscription is refused there, as in Redis 7.0.
	if kind == engine.SubShard && c.S.DenyBlocking {
		c.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	for _, ch := range c.Args[1:] {
		c.Env.Subscribe(c.S, kind, string(ch))
		confirm(c, kind, false, ch)
	}
}

func unsubscribe(c *engine.Ctx, kind engine.SubKind) {
	if len(c.Args) > 1 {
		for _, ch := range c.Args[1:] {
			c.Env.Unsubscribe(c.S, kind, string(ch))
			confirm(c, kind, true, ch)
		}
		return
	}
	names := c.S.Subscriptions(kind)
	if len(names) == 0 {
		confirm(c, kind, true, nil)
		return
	}
	for _, name := range names {
		c.Env.Unsubscribe(c.S, kind, name)
		confirm(c, kind, true, []byte(name))
	}
}

func publish(c *engine.Ctx, kind engine.SubKind) {
	c.W.Int(int64(c.Env.Publish(kind, c.Args[1], c.Args[2])))
	c.PropagateToReplicas()
	c.Env.PublishCluster(kind, c.Args[1], c.Args[2])
}

func pubsubChannels(c *engine.Ctx, kind engine.SubKind) {
	pattern := ""
	if len(c.Args) > 2 {
		pattern = string(c.Args[2])
	}
	c.W.StringArray(c.Env.Channels(kind, pattern))
}

func pubsubNumsub(c *engine.Ctx, kind engine.SubKind) {
	c.W.Array(2 * (len(c.Args) - 2))
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		c.W.Int(int64(c.Env.NumSub(kind, string(ch))))
	}
}

func cmdPubsubHelp(c *engine.Ctx) {
	c.ReplyHelp("PUBSUB",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	)
}
