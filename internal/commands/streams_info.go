package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, as Redis
// 7.0 replies them (7.2 added fields: active-time, inactive).

func init() {
	at2 := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 2, 2, 1
		c.ACL = "@stream"
		return c
	}
	engine.Register(&engine.Command{Name: "xinfo", Arity: -2, Group: "stream", Since: "5.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for stream introspection commands",
		Subs: map[string]*engine.Command{
			"consumers": at2(&engine.Command{Arity: 4, Flags: engine.FlagReadonly, KeyFlags: "RO access", Tips: "nondeterministic_output", Since: "5.0.0", Complexity: "O(1)",
				Summary: "List the consumers in a consumer group", Handler: cmdXinfo}),
			"groups": at2(&engine.Command{Arity: 3, Flags: engine.FlagReadonly, KeyFlags: "RO access", Since: "5.0.0", Complexity: "O(1)",
				Summary: "List the consumer groups of a stream", Handler: cmdXinfo}),
			"stream": at2(&engine.Command{Arity: -3, Flags: engine.FlagReadonly, KeyFlags: "RO access", Since: "5.0.0", Complexity: "O(1)",
				Summary: "Get information about a stream", Handler: cmdXinfo}),
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, ACL: "@stream", Since: "5.0.0", Complexity: "O(1)",
				Summary: "Show helpful text about the different subcommands", Handler: cmdXinfoHelp},
		}})
}

func cmdXinfoHelp(c *engine.Ctx) {
	streamHelp(c, "XINFO", []string{
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	})
}

func cmdXinfo(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(2), keyspace.TypeStream)
	if !ok {
		return
	}
	if o == nil {
		c.Error(engine.ErrNoKey)
		return
	}
	s := streamOf(o)
	w := c.W
	switch {
	case ascii.OptIs(c.Args[1], "consumers"):
		g := s.Group(c.Args[3])
		if g == nil {
			c.Errorf("NOGROUP No such consumer group '%s' for key name '%s'", c.Args[3], c.Args[2])
			return
		}
		w.Array(len(g.Consumers()))
		for _, cons := range g.Consumers() {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(cons.Name)
			w.BulkString("pending")
			w.Int(int64(cons.PendingLen()))
			w.BulkString("idle")
			w.Int(max(c.Now-cons.SeenTime, 0))
		}
	case ascii.OptIs(c.Args[1], "groups"):
		w.Array(len(s.Groups()))
		for _, g := range s.Groups() {
			w.Map(6)
			w.BulkString("name")
			w.BulkString(g.Name)
			w.BulkString("consumers")
			w.Int(int64(len(g.Consumers())))
			w.BulkString("pending")
			w.Int(int64(g.PendingLen()))
			w.BulkString("last-delivered-id")
			writeID(w, g.LastID)
			writeGroupCounters(w, s, g)
		}
	default:
		xinfoStream(c, s)
	}
}

// writeGroupCounters writes entries-read and lag.
func writeGroupCounters(w *resp.Writer, s *stream.Stream, g *stream.Group) {
	w.BulkString("entries-read")
	if g.EntriesRead != stream.InvalidEntriesRead {
		w.Int(g.EntriesRead)
	} else {
		w.Null()
	}
	w.BulkString("lag")
	if lag, ok := s.Lag(g); ok {
		w.Int(lag)
	} else {
		w.Null()
	}
}

func xinfoStream(c *engine.Ctx, s *stream.Stream) {
	rest := c.Args[3:]
	full := len(rest) > 0
	count := int64(10)
	if full {
		if len(rest) != 1 && len(rest) != 3 || !ascii.OptIs(rest[0], "full") {
			subSyntaxError(c)
			return
		}
		if len(rest) == 3 {
			if !ascii.OptIs(rest[1], "count") {
				subSyntaxError(c)
				return
			}
			v, ok := c.Int(5)
			if !ok {
				return
			}
			count = v
			if count < 0 {
				count = 10
			}
		}
	}
	w := c.W
	if full {
		w.Map(9)
	} else {
		w.Map(10)
	}
	w.BulkString("length")
	w.Int(s.Len())
	w.BulkString("radix-tree-keys")
	w.Int(int64(s.Nodes()))
	w.BulkString("radix-tree-nodes")
	w.Int(int64(s.RaxNodes()))
	w.BulkString("last-generated-id")
	writeID(w, s.LastID)
	w.BulkString("max-deleted-entry-id")
	writeID(w, s.MaxDeletedID)
	w.BulkString("entries-added")
	w.Int(s.EntriesAdded)
	w.BulkString("recorded-first-entry-id")
	writeID(w, s.FirstID)
	if !full {
		w.BulkString("groups")
		w.Int(int64(len(s.Groups())))
		w.BulkString("first-entry")
		writeEdge(w, s, false)
		w.BulkString("last-entry")
		writeEdge(w, s, true)
		return
	}
	w.BulkString("entries")
	writeRange(w, s, stream.ID{}, stream.MaxID, count, false)
	w.BulkString("groups")
	w.Array(len(s.Groups()))
	for _, g := range s.Groups() {
		w.Map(7)
		w.BulkString("name")
		w.BulkString(g.Name)
		w.BulkString("last-delivered-id")
		writeID(w, g.LastID)
		writeGroupCounters(w, s, g)
		w.BulkString("pel-count")
		w.Int(int64(g.PendingLen()))
		w.BulkString("pending")
		pel := g.PendingAll()
		if count > 0 && int64(len(pel)) > count {
			pel = pel[:count]
		}
		w.Array(len(pel))
		for _, p := range pel {
			w.Array(4)
			writeID(w, p.ID)
			w.BulkString(p.Consumer.Name)
			w.Int(p.DeliveryTime)
			w.Int(int64(p.DeliveryCount))
		}
		w.BulkString("consumers")
		w.Array(len(g.Consumers()))
		for _, cons := range g.Consumers() {
			w.Map(4)
			w.BulkString("name")
			w.BulkString(cons.Name)
			w.BulkString("seen-time")
			w.Int(cons.SeenTime)
			w.BulkString("pel-count")
			w.Int(int64(cons.PendingLen()))
			w.BulkString("pending")
			cp := cons.PendingAll()
			if count > 0 && int64(len(cp)) > count {
				cp = cp[:count]
			}
			w.Array(len(cp))
			for _, p := range cp {
				w.Array(3)
				writeID(w, p.ID)
				w.Int(p.DeliveryTime)
				w.Int(int64(p.DeliveryCount))
			}
		}
	}
}

// writeEdge writes the first (or last) entry, or a null.
func writeEdge(w *resp.Writer, s *stream.Stream, last bool) {
	it := s.Range(stream.ID{}, stream.MaxID, last)
	if it.Next() {
		writeEntry(w, it.ID, it.FV)
		return
	}
	w.Null()
}
