package commands

import (
	"fmt"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// Hash-field expiration: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL,
// HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST (Redis 7.4) and HGETEX, HSETEX,
// HGETDEL (Redis 8.0). redis-server 7.0 has none of them; argument order,
// error texts and per-field replies follow Redis 8.0's t_hash.c and the
// command documentation. Times are the command's time (Ctx.Now), and a field
// whose expiry time is <= now is gone.

func registerHashTTLCommands(one func(*engine.Command) *engine.Command) {
	const (
		wdf  = engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast
		wf   = engine.FlagWrite | engine.FlagFast
		rf   = engine.FlagReadonly | engine.FlagFast
		perN = "O(N) where N is the number of specified fields"
	)
	exp := func(name, summary string, h func(*engine.Ctx)) *engine.Command {
		return one(&engine.Command{Name: name, Arity: -6, Flags: wdf, KeyFlags: "RW update",
			Summary: summary, Since: "7.4.0", Complexity: perN, Handler: h})
	}
	ttl := func(name, summary string, h func(*engine.Ctx)) *engine.Command {
		return one(&engine.Command{Name: name, Arity: -5, Flags: rf, KeyFlags: "RO access",
			Summary: summary, Since: "7.4.0", Complexity: perN, Handler: h})
	}
	engine.Register(
		exp("hexpire", "Set expiry for hash field using relative time to expire (seconds)", cmdHexpire),
		exp("hpexpire", "Set expiry for hash field using relative time to expire (milliseconds)", cmdHexpire),
		exp("hexpireat", "Set expiry for hash field using an absolute Unix timestamp (seconds)", cmdHexpire),
		exp("hpexpireat", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", cmdHexpire),
		ttl("httl", "Returns the TTL in seconds of a hash field.", cmdHttl),
		ttl("hpttl", "Returns the TTL in milliseconds of a hash field.", cmdHttl),
		ttl("hexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", cmdHttl),
		ttl("hpexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", cmdHttl),
		one(&engine.Command{Name: "hpersist", Arity: -5, Flags: wf, KeyFlags: "RW update",
			Summary: "Removes the expiration time for each specified field", Since: "7.4.0", Complexity: perN, Handler: cmdHpersist}),
		one(&engine.Command{Name: "hgetex", Arity: -5, Flags: wf, KeyFlags: "RW access update",
			Summary: "Get the value of one or more fields of a given hash key, and optionally set their expiration.",
			Since:   "8.0.0", Complexity: perN, Handler: cmdHgetex}),
		one(&engine.Command{Name: "hsetex", Arity: -6, Flags: wdf, KeyFlags: "RW update",
			Summary: "Set the value of one or more fields of a given hash key, and optionally set their expiration.",
			Since:   "8.0.0", Complexity: perN, Handler: cmdHsetex}),
		one(&engine.Command{Name: "hgetdel", Arity: -5, Flags: wf, KeyFlags: "RW access delete",
			Summary: "Returns the value of a field and deletes it from the hash.",
			Since:   "8.0.0", Complexity: perN, Handler: cmdHgetdel}),
	)
}

// Error texts of the field-expiry commands (Redis 8.0).
const (
	errFieldsMissing    = "ERR Mandatory argument FIELDS is missing or not at the right position"
	errNumFieldsHexpire = "ERR Parameter `numFields` should be greater than 0"
	errNumFields        = "ERR Number of fields must be a positive integer"
	errNumFieldsMatch   = "ERR The `numfields` parameter must match the number of arguments"
	errExpireNegative   = "ERR invalid expire time, must be >= 0"
	errHsetexNumFields  = "ERR invalid number of fields"
	errHsetexTTLOpts    = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
	errHsetexCondOpts   = "ERR Only one of FXX or FNX arguments can be specified"
	errMissingExpire    = "ERR missing expire time"
)

// hfeMaxMs is HFE_MAX_ABS_TIME_MSEC, the latest field expiry time Redis
// accepts: a quarter of its 48-bit expiry range.
const hfeMaxMs = (1<<48 - 1) >> 2

// hashExpireArg parses an expiry argument as Redis's parseExpireTime: an
// integer >= 0 in seconds or ms, added to base (the command's time for the
// relative forms, 0 for the absolute ones), within hfeMaxMs. It returns the
// absolute unix ms.
func hashExpireArg(c *engine.Ctx, i int, seconds bool, base int64) (int64, bool) {
	v, ok := c.Int(i)
	if !ok {
		return 0, false
	}
	if v < 0 {
		c.Error(errExpireNegative)
		return 0, false
	}
	bad := func() (int64, bool) {
		c.Error(fmt.Sprintf(engine.ErrInvalidExpire, c.Cmd.Name))
		return 0, false
	}
	if seconds {
		if v > hfeMaxMs/1000 {
			return bad()
		}
		v *= 1000
	}
	if v > hfeMaxMs-base {
		return bad()
	}
	return v + base, true
}

// numFieldsArg checks "FIELDS numfields field..." with the FIELDS keyword at
// argument i-1 and the count at i, the fields running to the end of the
// command. msg is the command's error for a count that is not >= 1.
func numFieldsArg(c *engine.Ctx, i int, msg string) (fields [][]byte, ok bool) {
	if i >= len(c.Args) {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return nil, false
	}
	if !ascii.OptIs(c.Args[i-1], "fields") {
		c.Error(errFieldsMissing)
		return nil, false
	}
	n, isInt := num.ParseInt(c.Args[i])
	if !isInt || n < 1 {
		c.Error(msg)
		return nil, false
	}
	if n != int64(len(c.Args)-i-1) {
		c.Error(errNumFieldsMatch)
		return nil, false
	}
	return c.Args[i+1:], true
}

// HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field [field ...] and
// HPEXPIRE, HEXPIREAT, HPEXPIREAT. Per field: -2 no such field, 0 condition
// not met, 1 expiry set, 2 field deleted (the time is not in the future).
func cmdHexpire(c *engine.Ctx) {
	key := c.Key(1)
	o, h, ok := hashWrite(c, key)
	if !ok {
		return
	}
	name := c.Cmd.Name
	seconds := name == "hexpire" || name == "hexpireat"
	var base int64
	if name == "hexpire" || name == "hpexpire" {
		base = c.Now
	}
	at, ok := hashExpireArg(c, 2, seconds, base)
	if !ok {
		return
	}
	cond, countAt := hash.CondNone, 4
	switch {
	case ascii.OptIs(c.Args[3], "nx"):
		cond = hash.CondNX
	case ascii.OptIs(c.Args[3], "xx"):
		cond = hash.CondXX
	case ascii.OptIs(c.Args[3], "gt"):
		cond = hash.CondGT
	case ascii.OptIs(c.Args[3], "lt"):
		cond = hash.CondLT
	}
	if cond != hash.CondNone {
		countAt++
	}
	fields, ok := numFieldsArg(c, countAt, errNumFieldsHexpire)
	if !ok {
		return
	}
	c.W.Array(len(fields))
	if h == nil {
		for range fields {
			c.W.Int(int64(hash.ExpireNoField))
		}
		return
	}
	changed, deleted := 0, false
	for _, f := range fields {
		res := h.SetExpiry(c.Now, f, at, cond)
		if res == hash.ExpireSet || res == hash.ExpireDeleted {
			changed++
		}
		deleted = deleted || res == hash.ExpireDeleted
		c.W.Int(int64(res))
	}
	if changed > 0 {
		c.Dirty(int64(changed))
		HashDone(c, key, o, false)
		// Redis 7.4: hdel when a time in the past deleted fields.
		hashNotify(c, cond2(deleted, "hdel", "hexpire"), h)
		if base != 0 || seconds {
			// HPEXPIREAT with the absolute time; the condition and fields stay.
			rw := append([][]byte{}, c.Args...)
			rw[0], rw[2] = []byte("HPEXPIREAT"), engine.MsArg(at)
			c.Propagate(rw...)
		}
	}
}

// propagateAbsTTL propagates the command with its relative TTL option
// (EX or PX at argument i, its value at i+1) as PXAT at.
func propagateAbsTTL(c *engine.Ctx, i int, at int64) {
	rw := append([][]byte{}, c.Args...)
	rw[i], rw[i+1] = []byte("PXAT"), engine.MsArg(at)
	c.Propagate(rw...)
}

// HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME key FIELDS numfields field ...
// Per field: -2 no such field, -1 no expiry, else the TTL or the unix time,
// seconds rounded up as Redis does.
func cmdHttl(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	fields, ok := numFieldsArg(c, 3, errNumFields)
	if !ok {
		return
	}
	name := c.Cmd.Name
	seconds := name == "httl" || name == "hexpiretime"
	var base int64
	if name == "httl" || name == "hpttl" {
		base = c.Now
	}
	c.W.Array(len(fields))
	for _, f := range fields {
		var at int64
		exists := false
		if h != nil {
			at, exists = h.Expiry(c.Now, f)
		}
		switch {
		case !exists:
			c.W.Int(-2)
		case at == 0:
			c.W.Int(-1)
		case seconds:
			c.W.Int((at + 999 - base) / 1000)
		default:
			c.W.Int(at - base)
		}
	}
}

// HPERSIST key FIELDS numfields field ... Per field: -2 no such field, -1
// no expiry, 1 expiry removed.
func cmdHpersist(c *engine.Ctx) {
	key := c.Key(1)
	o, h, ok := hashWrite(c, key)
	if !ok {
		return
	}
	fields, ok := numFieldsArg(c, 3, errNumFields)
	if !ok {
		return
	}
	c.W.Array(len(fields))
	changed := false
	for _, f := range fields {
		if h == nil {
			c.W.Int(int64(hash.PersistNoField))
			continue
		}
		res := h.Persist(c.Now, f)
		changed = changed || res == hash.Persisted
		c.W.Int(int64(res))
	}
	if changed {
		c.Dirty(1)
		HashDone(c, key, o, false)
		c.Notify(engine.NotifyHash, "hpersist", c.Args[1])
	}
}

// HGETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] FIELDS numfields field ...
// replies with the values, then gives the fields found the new expiry (or
// none); an expiry that is not in the future deletes them.
func cmdHgetex(c *engine.Ctx) {
	key := c.Key(1)
	o, h, ok := hashWrite(c, key)
	if !ok {
		return
	}
	const (
		optNone = iota
		optSet
		optPersist
	)
	opt, countAt := optNone, 3
	var at int64
	a := c.Args[2]
	if ascii.OptIs(a, "ex") || ascii.OptIs(a, "px") || ascii.OptIs(a, "exat") || ascii.OptIs(a, "pxat") {
		seconds := ascii.OptIs(a, "ex") || ascii.OptIs(a, "exat")
		var base int64
		if ascii.OptIs(a, "ex") || ascii.OptIs(a, "px") {
			base = c.Now
		}
		if at, ok = hashExpireArg(c, 3, seconds, base); !ok {
			return
		}
		opt, countAt = optSet, 5
	} else if ascii.OptIs(a, "persist") {
		opt, countAt = optPersist, 4
	}
	fields, ok := numFieldsArg(c, countAt, errNumFields)
	if !ok {
		return
	}
	c.W.Array(len(fields))
	if h == nil {
		for range fields {
			c.W.Null()
		}
		return
	}
	changed, deleted := 0, false
	for _, f := range fields {
		v, found := h.Get(c.Now, f)
		if !found {
			c.W.Null()
			continue
		}
		c.W.Bulk(v) // copied into the reply before the hash changes
		switch opt {
		case optSet:
			if r := h.SetExpiry(c.Now, f, at, hash.CondNone); r == hash.ExpireSet || r == hash.ExpireDeleted {
				changed++
				deleted = deleted || r == hash.ExpireDeleted
			}
		case optPersist:
			if h.Persist(c.Now, f) == hash.Persisted {
				changed++
			}
		}
	}
	if changed > 0 {
		c.Dirty(int64(changed))
		HashDone(c, key, o, false)
		switch {
		case opt == optPersist:
			hashNotify(c, "hpersist", h)
		case deleted:
			hashNotify(c, "hdel", h)
		default:
			hashNotify(c, "hexpire", h)
		}
		if ascii.OptIs(a, "ex") || ascii.OptIs(a, "px") {
			propagateAbsTTL(c, 2, at)
		}
	}
}

// HSETEX key [FNX|FXX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
// FIELDS numfields field value [field value ...]
// replies 1 when the fields were set, 0 when FNX or FXX said no.
func cmdHsetex(c *engine.Ctx) {
	const (
		fnx = 1 << iota
		fxx
		keepTTL
		setTTL
	)
	var flags int
	var at int64
	first, relTTL := -1, 0 // relTTL: the position of EX or PX, if given
	for i := 2; i < len(c.Args) && first < 0; i++ {
		a := c.Args[i]
		switch {
		case ascii.OptIs(a, "fields"):
			if i >= len(c.Args)-3 {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return
			}
			n, isInt := num.ParseInt(c.Args[i+1])
			if !isInt || n < 1 || n > 1<<31-1 {
				c.Error(errHsetexNumFields)
				return
			}
			rest := len(c.Args) - i - 2
			if rest%2 != 0 || n != int64(rest/2) {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return
			}
			first = i + 2
		case ascii.OptIs(a, "ex") || ascii.OptIs(a, "px") || ascii.OptIs(a, "exat") || ascii.OptIs(a, "pxat"):
			if flags&(setTTL|keepTTL) != 0 {
				c.Error(errHsetexTTLOpts)
				return
			}
			if i >= len(c.Args)-1 {
				c.Error(errMissingExpire)
				return
			}
			var base int64
			if ascii.OptIs(a, "ex") || ascii.OptIs(a, "px") {
				base, relTTL = c.Now, i
			}
			var ok bool
			if at, ok = hashExpireArg(c, i+1, ascii.OptIs(a, "ex") || ascii.OptIs(a, "exat"), base); !ok {
				return
			}
			flags |= setTTL
			i++
		case ascii.OptIs(a, "keepttl"):
			if flags&(setTTL|keepTTL) != 0 {
				c.Error(errHsetexTTLOpts)
				return
			}
			flags |= keepTTL
		case ascii.OptIs(a, "fxx") || ascii.OptIs(a, "fnx"):
			if flags&(fnx|fxx) != 0 {
				c.Error(errHsetexCondOpts)
				return
			}
			if ascii.OptIs(a, "fxx") {
				flags |= fxx
			} else {
				flags |= fnx
			}
		default:
			c.Errorf("ERR unknown argument: %s", ascii.CStr(a))
			return
		}
	}
	if first < 0 {
		// Unreachable with the arity of 6: the options alone use at most 3
		// arguments, so some argument was refused above.
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Key(1)
	o, h, fresh, ok := HashWriteOrCreate(c, key)
	if !ok {
		return
	}
	pairs := c.Args[first:]
	if fresh && flags&fxx != 0 {
		c.W.Int(0)
		return
	}
	if flags&(fnx|fxx) != 0 {
		for i := 0; i < len(pairs); i += 2 {
			exists := h.Exists(c.Now, pairs[i])
			if flags&fxx != 0 && !exists || flags&fnx != 0 && exists {
				c.W.Int(0)
				return
			}
		}
	}
	lim := engine.HashLimits(c)
	for i := 0; i < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		switch {
		case flags&setTTL != 0 && at > c.Now:
			h.SetWithExpiry(c.Now, f, v, at, lim)
		case flags&setTTL != 0:
			// Set, then deleted at once as its time has come (Redis sets
			// the value first, so a long value still converts the hash).
			h.SetKeepTTL(c.Now, f, v, lim)
			h.Delete(c.Now, f)
		case flags&keepTTL != 0:
			h.SetKeepTTL(c.Now, f, v, lim)
		default:
			h.Set(c.Now, f, v, lim)
		}
	}
	HashDone(c, key, o, fresh)
	c.Dirty(int64(len(pairs) / 2))
	c.Notify(engine.NotifyHash, "hset", c.Args[1])
	if flags&setTTL != 0 {
		hashNotify(c, cond2(at > c.Now, "hexpire", "hdel"), h)
	}
	if relTTL > 0 {
		propagateAbsTTL(c, relTTL, at)
	}
	c.W.Int(1)
}

// HGETDEL key FIELDS numfields field ... replies with the values and
// deletes the fields; the key goes with its last field.
func cmdHgetdel(c *engine.Ctx) {
	key := c.Key(1)
	o, h, ok := hashWrite(c, key)
	if !ok {
		return
	}
	fields, ok := numFieldsArg(c, 3, errNumFields)
	if !ok {
		return
	}
	c.W.Array(len(fields))
	deleted := 0
	for _, f := range fields {
		if h == nil {
			c.W.Null()
			continue
		}
		v, found := h.Get(c.Now, f)
		if !found {
			c.W.Null()
			continue
		}
		c.W.Bulk(v) // into the reply before the field goes
		h.Delete(c.Now, f)
		deleted++
	}
	if deleted > 0 {
		c.Dirty(int64(deleted))
		HashDone(c, key, o, false)
		hashNotify(c, "hdel", h)
	}
}

// cond2 is a if cond, else b.
func cond2(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
