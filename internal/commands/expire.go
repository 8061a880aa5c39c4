package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
)

// Key expiry (expire.c): setting, reading and removing TTLs. Expired keys
// are never visible: every lookup checks the TTL (keyspace.DB.Lookup) and
// the server's active cycle reclaims the ones nobody reads.

func init() {
	exp := func(name, summary, since string) *engine.Command {
		return &engine.Command{Name: name, Arity: -3, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 1, Step: 1, KeyFlags: "RW update",
			ACL: "@keyspace", Group: "generic", Summary: summary, Since: since, Complexity: "O(1)", Handler: cmdExpire}
	}
	ttl := func(name, summary, since, tips string) *engine.Command {
		return &engine.Command{Name: name, Arity: 2, Flags: engine.FlagReadonly | engine.FlagFast, First: 1, Last: 1, Step: 1, KeyFlags: "RO access",
			Tips: tips, ACL: "@keyspace", Group: "generic", Summary: summary, Since: since, Complexity: "O(1)", Handler: cmdTTL}
	}
	engine.Register(
		exp("expire", "Set a key's time to live in seconds", "1.0.0"),
		exp("pexpire", "Set a key's time to live in milliseconds", "2.6.0"),
		exp("expireat", "Set the expiration for a key as a UNIX timestamp", "1.2.0"),
		exp("pexpireat", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0"),
		ttl("ttl", "Get the time to live for a key in seconds", "1.0.0", "nondeterministic_output"),
		ttl("pttl", "Get the time to live for a key in milliseconds", "2.6.0", "nondeterministic_output"),
		ttl("expiretime", "Get the expiration Unix timestamp for a key", "7.0.0", ""),
		ttl("pexpiretime", "Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", ""),
		&engine.Command{Name: "persist", Arity: 2, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 1, Step: 1, KeyFlags: "RW update",
			ACL: "@keyspace", Group: "generic", Summary: "Remove the expiration from a key", Since: "2.2.0",
			Complexity: "O(1)", Handler: cmdPersist},
	)
}

// Options of the EXPIRE family.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

func parseExpireOpts(c *engine.Ctx) (int, bool) {
	flags := 0
	for _, opt := range c.Args[3:] {
		switch {
		case ascii.OptIs(opt, "nx"):
			flags |= expireNX
		case ascii.OptIs(opt, "xx"):
			flags |= expireXX
		case ascii.OptIs(opt, "gt"):
			flags |= expireGT
		case ascii.OptIs(opt, "lt"):
			flags |= expireLT
		default:
			c.Errorf("ERR Unsupported option %s", ascii.CStr(opt))
			return 0, false
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return 0, false
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.Error("ERR GT and LT options at the same time are not compatible")
		return 0, false
	}
	return flags, true
}

// cmdExpire serves EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT
// (expireGenericCommand). A time in the past deletes the key.
func cmdExpire(c *engine.Ctx) {
	var base int64
	seconds := false
	switch c.Cmd.Name {
	case "expire":
		base, seconds = c.Now, true
	case "pexpire":
		base = c.Now
	case "expireat":
		seconds = true
	}
	flags, ok := parseExpireOpts(c)
	if !ok {
		return
	}
	when, ok := c.Int(2)
	if !ok {
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.Errorf(engine.ErrInvalidExpire, c.Cmd.Name)
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.Errorf(engine.ErrInvalidExpire, c.Cmd.Name)
		return
	}
	when += base

	o := c.DB.Lookup(c.Key(1))
	if o == nil {
		c.W.Int(0)
		return
	}
	engine.TouchLRU(c, o)
	if flags != 0 {
		cur := o.Expire // 0: no TTL, which GT and LT treat as infinite
		if (flags&expireNX != 0 && cur != 0) ||
			(flags&expireXX != 0 && cur == 0) ||
			(flags&expireGT != 0 && (cur == 0 || when <= cur)) ||
			(flags&expireLT != 0 && cur != 0 && when >= cur) {
			c.W.Int(0)
			return
		}
	}
	c.Dirty(1)
	c.W.Int(1)
	if c.PastDeadline(when) {
		c.DB.Delete(o.Key)
		c.Propagate([]byte("DEL"), c.Args[1])
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		return
	}
	c.DB.SetExpire(o, when)
	c.Notify(engine.NotifyGeneric, "expire", c.Args[1])
	if c.Cmd.Name != "pexpireat" {
		// PEXPIREAT with the absolute time; the options stay.
		rw := append([][]byte{}, c.Args...)
		rw[0], rw[2] = []byte("PEXPIREAT"), engine.MsArg(when)
		c.Propagate(rw...)
	}
}

// cmdTTL serves TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a missing
// key, -1 for a key without TTL.
func cmdTTL(c *engine.Ctx) {
	o := lookupNoTouch(c, c.Key(1))
	if o == nil {
		c.W.Int(-2)
		return
	}
	if o.Expire == 0 {
		c.W.Int(-1)
		return
	}
	name := c.Cmd.Name
	v := o.Expire
	if name == "ttl" || name == "pttl" {
		v = max(v-c.Now, 0)
	}
	if name == "ttl" || name == "expiretime" {
		v = (v + 500) / 1000
	}
	c.W.Int(v)
}

func cmdPersist(c *engine.Ctx) {
	o := c.DB.Lookup(c.Key(1))
	if o == nil {
		c.W.Int(0)
		return
	}
	engine.TouchLRU(c, o)
	if o.Expire == 0 {
		c.W.Int(0)
		return
	}
	c.DB.SetExpire(o, 0)
	c.Dirty(1)
	c.Notify(engine.NotifyGeneric, "persist", c.Args[1])
	c.W.Int(1)
}
