package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// The list family (t_list.c). A list key holds a *list.List in Object.Val
// with Type TypeList; an empty list is never stored: the command that
// empties a list deletes its key. Values the list hands out (Index, Range,
// pops) are views of its storage: they are written to replies and never
// modified; pushes copy their arguments, which alias the read buffer.
//
// Redis 7.0 always reports "quicklist" for a list (the listpack encoding of
// small lists came with 7.2), so OBJECT ENCODING says so whatever form the
// list is in (list.List.Encoding). list-max-listpack-size sets the node
// limit of new lists, as list-max-ziplist-size did.
//
// Argument checks happen in Redis's order, which decides which error a
// client sees when several things are wrong: LRANGE, LTRIM and LREM parse
// their numbers before looking at the key; LINDEX, LSET and LPOP look at
// the key first.

func init() {
	const (
		lst    = "@list"
		grp    = "list"
		o1     = "O(1)"
		wd     = engine.FlagWrite | engine.FlagDenyOOM
		pushCx = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = lst, grp
		if c.Complexity == "" {
			c.Complexity = o1
		}
		return c
	}
	two := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 2, 1
		c.ACL, c.Group = lst, grp
		c.KeyFlags = "RW access delete"
		c.Complexity = o1
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "lpush", Arity: -3, Flags: wd | engine.FlagFast, KeyFlags: "RW insert", Complexity: pushCx,
			Summary: "Prepend one or multiple elements to a list", Since: "1.0.0", Handler: cmdLpush, Prepare: prepFront}),
		one(&engine.Command{Name: "rpush", Arity: -3, Flags: wd | engine.FlagFast, KeyFlags: "RW insert", Complexity: pushCx,
			Summary: "Append one or multiple elements to a list", Since: "1.0.0", Handler: cmdRpush, Prepare: prepBack}),
		one(&engine.Command{Name: "lpushx", Arity: -3, Flags: wd | engine.FlagFast, KeyFlags: "RW insert", Complexity: pushCx,
			Summary: "Prepend an element to a list, only if the list exists", Since: "2.2.0", Handler: cmdLpushx, Prepare: prepFrontX}),
		one(&engine.Command{Name: "rpushx", Arity: -3, Flags: wd | engine.FlagFast, KeyFlags: "RW insert", Complexity: pushCx,
			Summary: "Append an element to a list, only if the list exists", Since: "2.2.0", Handler: cmdRpushx, Prepare: prepBackX}),
		one(&engine.Command{Name: "lpop", Arity: -2, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW access delete",
			Complexity: "O(N) where N is the number of elements returned",
			Summary:    "Remove and get the first elements in a list", Since: "1.0.0", Handler: cmdLpop}),
		one(&engine.Command{Name: "rpop", Arity: -2, Flags: engine.FlagWrite | engine.FlagFast, KeyFlags: "RW access delete",
			Complexity: "O(N) where N is the number of elements returned",
			Summary:    "Remove and get the last elements in a list", Since: "1.0.0", Handler: cmdRpop}),
		one(&engine.Command{Name: "llen", Arity: 2, Flags: engine.FlagReadonly | engine.FlagFast, KeyFlags: "RO",
			Summary: "Get the length of a list", Since: "1.0.0", Handler: cmdLlen}),
		one(&engine.Command{Name: "lrange", Arity: 4, Flags: engine.FlagReadonly, KeyFlags: "RO access",
			Complexity: "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
			Summary:    "Get a range of elements from a list", Since: "1.0.0", Handler: cmdLrange}),
		one(&engine.Command{Name: "lindex", Arity: 3, Flags: engine.FlagReadonly, KeyFlags: "RO access",
			Complexity: "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
			Summary:    "Get an element from a list by its index", Since: "1.0.0", Handler: cmdLindex}),
		one(&engine.Command{Name: "lset", Arity: 4, Flags: wd, KeyFlags: "RW update",
			Complexity: "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
			Summary:    "Set the value of an element in a list by its index", Since: "1.0.0", Handler: cmdLset}),
		one(&engine.Command{Name: "linsert", Arity: 5, Flags: wd, KeyFlags: "RW insert",
			Complexity: "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
			Summary:    "Insert an element before or after another element in a list", Since: "2.2.0", Handler: cmdLinsert}),
		one(&engine.Command{Name: "lrem", Arity: 4, Flags: engine.FlagWrite, KeyFlags: "RW delete",
			Complexity: "O(N+M) where N is the length of the list and M is the number of elements removed.",
			Summary:    "Remove elements from a list", Since: "1.0.0", Handler: cmdLrem}),
		one(&engine.Command{Name: "ltrim", Arity: 4, Flags: engine.FlagWrite, KeyFlags: "RW delete",
			Complexity: "O(N) where N is the number of elements to be removed by the operation.",
			Summary:    "Trim a list to the specified range", Since: "1.0.0", Handler: cmdLtrim}),
		one(&engine.Command{Name: "lpos", Arity: -3, Flags: engine.FlagReadonly, KeyFlags: "RO access",
			Complexity: "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
			Summary:    "Return the index of matching elements on a list", Since: "6.0.6", Handler: cmdLpos}),
		two(&engine.Command{Name: "lmove", Specs: keySpecs["lmove"], Arity: 5, Flags: wd,
			Summary: "Pop an element from a list, push it to another list and return it", Since: "6.2.0", Handler: cmdLmove}),
		two(&engine.Command{Name: "rpoplpush", Specs: keySpecs["rpoplpush"], Arity: 3, Flags: wd,
			Summary: "Remove the last element in a list, prepend it to another list and return it", Since: "1.2.0", Handler: cmdRpoplpush}),
		&engine.Command{Name: "lmpop", Specs: keySpecs["lmpop"], Arity: -4, Flags: engine.FlagWrite | engine.FlagMovableKeys, Keys: engine.NumkeysKeys(1), KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Since: "7.0.0", Summary: "Pop elements from a list",
			Complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			Handler:    cmdLmpop},
	)
}

// Errors of the list family, in Redis's words.
const (
	errIndexRange = "ERR index out of range"
	errRankZero   = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errCountNeg   = "ERR COUNT can't be negative"
	errMaxlenNeg  = "ERR MAXLEN can't be negative"
	errNumkeys    = "ERR numkeys should be greater than 0"
	errCountZero  = "ERR count should be greater than 0"
)

// listOf returns the list a list object holds.
func listOf(o *keyspace.Object) *list.List { return o.Val().(*list.List) }

// newList makes an empty list with the configured node limit.
func newList(c *engine.Ctx) *list.List {
	return list.New(int(c.Env.Cfg.Int(config.ListMaxListpackSize)))
}

// lookupList finds a list for a write: nil when the key is missing,
// ok=false (WRONGTYPE already sent) when it holds another type. Like
// Redis's lookupKeyWrite it refreshes the key's access time.
func lookupList(c *engine.Ctx, key string) (o *keyspace.Object, ok bool) {
	return c.LookupWrite(key, keyspace.TypeList)
}

// listChanged signals a change to the list at key (k, as bytes), publishes
// event, and deletes the key when the list is empty (with a del event), as
// listElementsRemoved does.
func listChanged(c *engine.Ctx, k []byte, key string, l *list.List, event string) {
	c.Notify(engine.NotifyList, event, k)
	if l.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", k)
		return
	}
	c.DB.Modified(key)
}

// popEvent is the event of a pop from one end.
func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

// parseWhere reads LEFT or RIGHT; front is true for LEFT.
func parseWhere(c *engine.Ctx, i int) (front, ok bool) {
	switch {
	case ascii.OptIs(c.Args[i], "left"):
		return true, true
	case ascii.OptIs(c.Args[i], "right"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

// listPush adds vals at one end of the list at key (k, as bytes), creating
// it, publishes lpush or rpush, and returns the new length. The caller
// counts the change (Dirty).
func listPush(c *engine.Ctx, k []byte, key string, o *keyspace.Object, front bool, vals [][]byte) int {
	var l *list.List
	if o == nil {
		l = newList(c)
		c.DB.Add(key, keyspace.NewValue(keyspace.TypeList, l))
	} else {
		l = listOf(o)
	}
	if p, _ := c.Prepared().(*list.Prepared); l.PushPrepared(p, vals) {
		// Packed ahead (lists_prepare.go).
	} else if front {
		l.PushFront(vals...)
	} else {
		l.PushBack(vals...)
	}
	if o != nil {
		c.DB.Modified(key)
	}
	if front {
		c.Notify(engine.NotifyList, "lpush", k)
	} else {
		c.Notify(engine.NotifyList, "rpush", k)
	}
	return l.Len()
}

func cmdLpush(c *engine.Ctx)  { pushCommand(c, true, false) }
func cmdRpush(c *engine.Ctx)  { pushCommand(c, false, false) }
func cmdLpushx(c *engine.Ctx) { pushCommand(c, true, true) }
func cmdRpushx(c *engine.Ctx) { pushCommand(c, false, true) }

// pushCommand serves LPUSH, RPUSH and (onlyExisting) LPUSHX, RPUSHX.
func pushCommand(c *engine.Ctx, front, onlyExisting bool) {
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil && onlyExisting {
		c.W.Int(0)
		return
	}
	n := listPush(c, c.Args[1], key, o, front, c.Args[2:])
	c.Dirty(int64(len(c.Args) - 2))
	c.W.Int(int64(n))
}

func cmdLpop(c *engine.Ctx) { popCommand(c, true) }
func cmdRpop(c *engine.Ctx) { popCommand(c, false) }

// popCommand serves LPOP and RPOP: one element as a bulk string, or with a
// count an array (RPOP's from the tail inwards).
func popCommand(c *engine.Ctx, front bool) {
	if len(c.Args) > 3 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = positiveArg(c, 2, engine.ErrPositive); !ok {
			return
		}
	}
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	if hasCount && count == 0 {
		c.W.Array(0)
		return
	}
	l := listOf(o)
	n := 1
	if hasCount {
		n = int(min(count, int64(l.Len())))
	}
	vals := listPop(l, front, n)
	if hasCount {
		c.W.Array(len(vals))
	}
	for _, v := range vals {
		c.W.Bulk(v)
	}
	listChanged(c, c.Args[1], key, l, popEvent(front))
	c.Dirty(int64(len(vals)))
}

// listPop pops n elements from one end.
func listPop(l *list.List, front bool, n int) [][]byte {
	if front {
		return l.PopFront(n)
	}
	return l.PopBack(n)
}

// positiveArg parses argument i as a non-negative integer, replying with
// msg (Redis uses the same text for "not a number" and "negative").
func positiveArg(c *engine.Ctx, i int, msg string) (int64, bool) {
	v, ok := num.ParseInt(c.Args[i])
	if !ok || v < 0 {
		c.Error(msg)
		return 0, false
	}
	return v, true
}

func cmdLlen(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeList)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(listOf(o).Len()))
}

func cmdLrange(c *engine.Ctx) {
	start, ok := c.Int(2)
	if !ok {
		return
	}
	stop, ok := c.Int(3)
	if !ok {
		return
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeList)
	if !ok {
		return
	}
	if o == nil {
		c.W.Array(0)
		return
	}
	l := listOf(o)
	n := l.RangeLen(int(start), int(stop))
	if n >= deferRangeMin && c.W.CanDefer(n) {
		// Queued as the list's bytes, encoded as the client reads it.
		c.W.Defer(resp.NewArraySegment(l.SnapshotRange(int(start), int(stop))))
		return
	}
	c.W.Array(n)
	l.EachInRange(int(start), int(stop), c.W.Bulk)
}

// deferRangeMin is the least number of elements for which LRANGE offers
// its reply to the writer's Deferrer (resp.Writer.Defer): below it the
// snapshot would cost more than the encoding it may save.
const deferRangeMin = 64

func cmdLindex(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeList)
	if !ok {
		return
	}
	if o == nil {
		c.W.Null()
		return
	}
	i, ok := c.Int(2)
	if !ok {
		return
	}
	if v, found := listOf(o).Index(int(i)); found {
		c.W.Bulk(v)
	} else {
		c.W.Null()
	}
}

func cmdLset(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.Error(engine.ErrNoKey)
		return
	}
	i, ok := c.Int(2)
	if !ok {
		return
	}
	if !listOf(o).Set(int(i), c.Args[3]) {
		c.Error(errIndexRange)
		return
	}
	c.DB.Modified(key)
	c.Dirty(1)
	c.Notify(engine.NotifyList, "lset", c.Args[1])
	c.W.OK()
}

func cmdLinsert(c *engine.Ctx) {
	var after bool
	switch {
	case ascii.OptIs(c.Args[2], "after"):
		after = true
	case ascii.OptIs(c.Args[2], "before"):
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	l := listOf(o)
	if !l.Insert(c.Args[3], c.Args[4], after) {
		c.W.Int(-1)
		return
	}
	c.DB.Modified(key)
	c.Dirty(1)
	c.Notify(engine.NotifyList, "linsert", c.Args[1])
	c.W.Int(int64(l.Len()))
}

func cmdLrem(c *engine.Ctx) {
	count, ok := c.Int(2)
	if !ok {
		return
	}
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	l := listOf(o)
	n := l.Remove(int(count), c.Args[3])
	if n > 0 {
		listChanged(c, c.Args[1], key, l, "lrem")
		c.Dirty(int64(n))
	}
	c.W.Int(int64(n))
}

func cmdLtrim(c *engine.Ctx) {
	start, ok := c.Int(2)
	if !ok {
		return
	}
	stop, ok := c.Int(3)
	if !ok {
		return
	}
	key := c.Key(1)
	o, ok := lookupList(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.W.OK()
		return
	}
	l := listOf(o)
	before := l.Len()
	l.Trim(int(start), int(stop))
	// Redis signals the key even when nothing was trimmed.
	listChanged(c, c.Args[1], key, l, "ltrim")
	c.Dirty(int64(before - l.Len()))
	c.W.OK()
}

// cmdLpos is LPOS key element [RANK rank] [COUNT n] [MAXLEN len]: options
// are checked one by one, in order, before the key is looked up.
func cmdLpos(c *engine.Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Args); j++ {
		more := j+1 < len(c.Args)
		switch {
		case more && ascii.OptIs(c.Args[j], "rank"):
			j++
			v, ok := c.Int(j)
			if !ok {
				return
			}
			if v == 0 {
				c.Error(errRankZero)
				return
			}
			rank = v
		case more && ascii.OptIs(c.Args[j], "count"):
			j++
			v, ok := positiveArg(c, j, errCountNeg)
			if !ok {
				return
			}
			count = v
		case more && ascii.OptIs(c.Args[j], "maxlen"):
			j++
			v, ok := positiveArg(c, j, errMaxlenNeg)
			if !ok {
				return
			}
			maxlen = v
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if rank == math.MinInt64 {
		// Redis negates the rank to scan from the tail; LONG_MIN stays
		// negative, so every match qualifies (rank -1), and the COUNT test,
		// matches-rank+1 >= count, overflows and never stops the scan.
		rank = -1
		if count > 0 {
			count = 0
		}
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeList)
	if !ok {
		return
	}
	if count < 0 {
		// No COUNT: the first qualifying index, or nil.
		if o != nil {
			if idx := listOf(o).Pos(c.Args[2], int(rank), 1, int(maxlen)); len(idx) > 0 {
				c.W.Int(int64(idx[0]))
				return
			}
		}
		c.W.Null()
		return
	}
	if o == nil {
		c.W.Array(0)
		return
	}
	idx := listOf(o).Pos(c.Args[2], int(rank), int(count), int(maxlen))
	c.W.Array(len(idx))
	for _, i := range idx {
		c.W.Int(int64(i))
	}
}

func cmdLmove(c *engine.Ctx) {
	from, ok := parseWhere(c, 3)
	if !ok {
		return
	}
	to, ok := parseWhere(c, 4)
	if !ok {
		return
	}
	lmove(c, from, to)
}

func cmdRpoplpush(c *engine.Ctx) { lmove(c, false, true) }

// lmove pops from the source (args[1]) and pushes onto the destination
// (args[2]), which may be the same list: a rotation. The destination's
// type is checked before anything is popped.
func lmove(c *engine.Ctx, fromFront, toFront bool) {
	src, dst := c.Key(1), c.Key(2)
	so, ok := lookupList(c, src)
	if !ok {
		return
	}
	if so == nil {
		c.W.Null()
		return
	}
	do, ok := lookupList(c, dst)
	if !ok {
		return
	}
	sl := listOf(so)
	v := listPop(sl, fromFront, 1)[0]
	listPush(c, c.Args[2], dst, do, toFront, [][]byte{v})
	c.W.Bulk(v)
	listChanged(c, c.Args[1], src, sl, popEvent(fromFront))
	c.Dirty(1)
	switch c.Cmd.Name { // the blocking forms replay as the plain ones
	case "blmove":
		if _, served := c.ServingKey(); served {
			// Served after waiting, Redis names the ends in lower case.
			c.Rewrite([]byte("LMOVE"), c.Args[1], c.Args[2], []byte(whereName(fromFront)), []byte(whereName(toFront)))
		} else {
			c.Rewrite(append([][]byte{[]byte("LMOVE")}, c.Args[1:5]...)...)
		}
	case "brpoplpush":
		c.Rewrite([]byte("RPOPLPUSH"), c.Args[1], c.Args[2])
	}
}

// cmdLmpop is LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
func cmdLmpop(c *engine.Ctx) {
	keys, front, count, ok := parseMpop(c, 1, parseWhere)
	if !ok {
		return
	}
	if !lmpopFrom(c, keys, front, count) {
		c.W.NullArray()
	}
}

// parseMpop parses the arguments LMPOP, BLMPOP, ZMPOP and BZMPOP share:
// numkeys at idx, the keys, a direction word read by where, and an
// optional COUNT (default 1), in Redis's order and with its errors.
func parseMpop(c *engine.Ctx, idx int, where func(*engine.Ctx, int) (bool, bool)) (keys [][]byte, dir bool, count int64, ok bool) {
	n, isInt := num.ParseInt(c.Args[idx])
	if !isInt {
		c.Error(errNumkeys)
		return
	}
	if n <= 0 {
		c.Error(errNumkeys)
		return
	}
	if n > int64(len(c.Args)-idx-2) {
		c.Error(engine.ErrSyntax)
		return
	}
	wi := idx + int(n) + 1
	if dir, ok = where(c, wi); !ok {
		return
	}
	count = -1
	for j := wi + 1; j < len(c.Args); j++ {
		if count == -1 && j+1 < len(c.Args) && ascii.OptIs(c.Args[j], "count") {
			j++
			v, isInt := num.ParseInt(c.Args[j])
			if !isInt || v <= 0 {
				c.Error(errCountZero)
				return nil, false, 0, false
			}
			count = v
			continue
		}
		c.Error(engine.ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return c.Args[idx+1 : wi], dir, count, true
}

// lmpopFrom pops up to count elements from the first non-empty list among
// keys and replies [key, [elements]]. It reports false, having replied
// nothing, when every key is missing; a key of another type is an error.
func lmpopFrom(c *engine.Ctx, keys [][]byte, front bool, count int64) bool {
	for _, k := range keys {
		key := string(k)
		o, ok := lookupList(c, key)
		if !ok {
			return true
		}
		if o == nil {
			continue
		}
		l := listOf(o)
		vals := listPop(l, front, int(min(count, int64(l.Len()))))
		c.W.Array(2)
		c.W.Bulk(k)
		c.W.Array(len(vals))
		for _, v := range vals {
			c.W.Bulk(v)
		}
		listChanged(c, k, key, l, popEvent(front))
		c.Dirty(int64(len(vals)))
		c.Rewrite(popName(front), k, engine.MsArg(int64(len(vals))))
		return true
	}
	return false
}

// popName is the pop command of the list's end: what blocking and
// multi-key pops replay as.
func popName(front bool) []byte {
	if front {
		return []byte("LPOP")
	}
	return []byte("RPOP")
}

// whereName is a list end as Redis names it in the commands it
// propagates for a served BLMOVE.
func whereName(front bool) string {
	if front {
		return "left"
	}
	return "right"
}
