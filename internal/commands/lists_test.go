package commands_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// go-redis and raw RESP tests of the list commands against an in-process
// server. Helpers start with "ls" (see lists_diff_test.go).

var lsCtx = servertest.Ctx

func lsEq[T comparable](t *testing.T, what string, got T, err error, want T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func lsSlice[T comparable](t *testing.T, what string, got []T, err error, want ...T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func lsErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("%s: error %v, want %q", what, err, want)
	}
}

func lsNil(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, redis.Nil) {
		t.Fatalf("%s: %v, want redis.Nil", what, err)
	}
}

func TestListsPushPop(t *testing.T) {
	c := servertest.Start(t).Client(t)
	n, err := c.LPush(lsCtx, "l", "a", "b", "c").Result()
	lsEq(t, "LPUSH", n, err, 3)
	n, err = c.RPush(lsCtx, "l", "d", 5).Result()
	lsEq(t, "RPUSH", n, err, 5)
	got, err := c.LRange(lsCtx, "l", 0, -1).Result()
	lsSlice(t, "LRANGE", got, err, "c", "b", "a", "d", "5")
	n, err = c.LPushX(lsCtx, "none", "x").Result()
	lsEq(t, "LPUSHX missing", n, err, 0)
	n, err = c.RPushX(lsCtx, "none", "x", "y").Result()
	lsEq(t, "RPUSHX missing", n, err, 0)
	n, err = c.Exists(lsCtx, "none").Result()
	lsEq(t, "EXISTS after PUSHX", n, err, 0)
	n, err = c.LPushX(lsCtx, "l", "x", "y").Result()
	lsEq(t, "LPUSHX", n, err, 7)
	n, err = c.RPushX(lsCtx, "l", "z").Result()
	lsEq(t, "RPUSHX", n, err, 8)

	s, err := c.LPop(lsCtx, "l").Result()
	lsEq(t, "LPOP", s, err, "y")
	s, err = c.RPop(lsCtx, "l").Result()
	lsEq(t, "RPOP", s, err, "z")
	got, err = c.LPopCount(lsCtx, "l", 2).Result()
	lsSlice(t, "LPOP 2", got, err, "x", "c")
	got, err = c.RPopCount(lsCtx, "l", 2).Result()
	lsSlice(t, "RPOP 2 (tail first)", got, err, "5", "d")
	got, err = c.LPopCount(lsCtx, "l", 0).Result()
	lsSlice(t, "LPOP 0", got, err)
	_, err = c.LPopCount(lsCtx, "l", -1).Result()
	lsErr(t, "LPOP -1", err, "ERR value is out of range, must be positive")
	got, err = c.RPopCount(lsCtx, "l", 10).Result()
	lsSlice(t, "RPOP 10", got, err, "a", "b")
	n, err = c.Exists(lsCtx, "l").Result()
	lsEq(t, "EXISTS after popping all", n, err, 0)
	_, err = c.LPop(lsCtx, "l").Result()
	lsNil(t, "LPOP missing", err)
	_, err = c.LPopCount(lsCtx, "l", 3).Result()
	lsNil(t, "LPOP missing with count", err)
	n, err = c.LLen(lsCtx, "l").Result()
	lsEq(t, "LLEN missing", n, err, 0)

	c.Set(lsCtx, "s", "v", 0)
	_, err = c.LPush(lsCtx, "s", "a").Result()
	lsErr(t, "LPUSH on string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	_, err = c.LLen(lsCtx, "s").Result()
	lsErr(t, "LLEN on string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
}

func TestListsIndexAndEdit(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(lsCtx, "l", "a", "b", "c", "d")
	s, err := c.LIndex(lsCtx, "l", 1).Result()
	lsEq(t, "LINDEX 1", s, err, "b")
	s, err = c.LIndex(lsCtx, "l", -1).Result()
	lsEq(t, "LINDEX -1", s, err, "d")
	_, err = c.LIndex(lsCtx, "l", 4).Result()
	lsNil(t, "LINDEX out of range", err)
	_, err = c.LIndex(lsCtx, "none", 0).Result()
	lsNil(t, "LINDEX missing", err)

	st, err := c.LSet(lsCtx, "l", -2, "C").Result()
	lsEq(t, "LSET", st, err, "OK")
	_, err = c.LSet(lsCtx, "l", 9, "x").Result()
	lsErr(t, "LSET out of range", err, "ERR index out of range")
	_, err = c.LSet(lsCtx, "none", 0, "x").Result()
	lsErr(t, "LSET missing", err, "ERR no such key")

	n, err := c.LInsertBefore(lsCtx, "l", "a", "A").Result()
	lsEq(t, "LINSERT BEFORE", n, err, 5)
	n, err = c.LInsertAfter(lsCtx, "l", "d", "D").Result()
	lsEq(t, "LINSERT AFTER", n, err, 6)
	n, err = c.LInsert(lsCtx, "l", "BEFORE", "nosuch", "x").Result()
	lsEq(t, "LINSERT no pivot", n, err, -1)
	n, err = c.LInsert(lsCtx, "none", "AFTER", "a", "x").Result()
	lsEq(t, "LINSERT missing", n, err, 0)
	_, err = c.LInsert(lsCtx, "l", "MIDDLE", "a", "x").Result()
	lsErr(t, "LINSERT bad where", err, "ERR syntax error")
	got, err := c.LRange(lsCtx, "l", 0, -1).Result()
	lsSlice(t, "LRANGE", got, err, "A", "a", "b", "C", "d", "D")
	got, err = c.LRange(lsCtx, "l", -2, 100).Result()
	lsSlice(t, "LRANGE clamped", got, err, "d", "D")
	got, err = c.LRange(lsCtx, "l", 4, 2).Result()
	lsSlice(t, "LRANGE empty", got, err)

	c.RPush(lsCtx, "r", "x", "y", "x", "z", "x")
	n, err = c.LRem(lsCtx, "r", -2, "x").Result()
	lsEq(t, "LREM -2", n, err, 2)
	got, err = c.LRange(lsCtx, "r", 0, -1).Result()
	lsSlice(t, "after LREM -2", got, err, "x", "y", "z")
	n, err = c.LRem(lsCtx, "r", 1, "y").Result()
	lsEq(t, "LREM 1", n, err, 1)
	n, err = c.LRem(lsCtx, "r", 0, "nosuch").Result()
	lsEq(t, "LREM none", n, err, 0)

	st, err = c.LTrim(lsCtx, "l", 1, -2).Result()
	lsEq(t, "LTRIM", st, err, "OK")
	got, err = c.LRange(lsCtx, "l", 0, -1).Result()
	lsSlice(t, "after LTRIM", got, err, "a", "b", "C", "d")
	st, err = c.LTrim(lsCtx, "l", 5, 10).Result()
	lsEq(t, "LTRIM to nothing", st, err, "OK")
	n, err = c.Exists(lsCtx, "l").Result()
	lsEq(t, "EXISTS after LTRIM", n, err, 0)
	st, err = c.LTrim(lsCtx, "none", 0, 1).Result()
	lsEq(t, "LTRIM missing", st, err, "OK")
}

func TestListsPos(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(lsCtx, "l", "a", "b", "a", "c", "a")
	n, err := c.LPos(lsCtx, "l", "a", redis.LPosArgs{}).Result()
	lsEq(t, "LPOS", n, err, 0)
	n, err = c.LPos(lsCtx, "l", "a", redis.LPosArgs{Rank: 2}).Result()
	lsEq(t, "LPOS RANK 2", n, err, 2)
	n, err = c.LPos(lsCtx, "l", "a", redis.LPosArgs{Rank: -1}).Result()
	lsEq(t, "LPOS RANK -1", n, err, 4)
	_, err = c.LPos(lsCtx, "l", "a", redis.LPosArgs{Rank: 4}).Result()
	lsNil(t, "LPOS RANK past the matches", err)
	_, err = c.LPos(lsCtx, "l", "c", redis.LPosArgs{MaxLen: 3}).Result()
	lsNil(t, "LPOS MAXLEN short of the match", err)
	idx, err := c.LPosCount(lsCtx, "l", "a", 0, redis.LPosArgs{}).Result()
	lsSlice(t, "LPOS COUNT 0", idx, err, 0, 2, 4)
	idx, err = c.LPosCount(lsCtx, "l", "a", 2, redis.LPosArgs{Rank: -1}).Result()
	lsSlice(t, "LPOS RANK -1 COUNT 2", idx, err, 4, 2)
	idx, err = c.LPosCount(lsCtx, "l", "a", 0, redis.LPosArgs{Rank: 2, MaxLen: 4}).Result()
	lsSlice(t, "LPOS RANK 2 COUNT 0 MAXLEN 4", idx, err, 2)
	idx, err = c.LPosCount(lsCtx, "none", "a", 1, redis.LPosArgs{}).Result()
	lsSlice(t, "LPOS missing COUNT", idx, err)
	_, err = c.Do(lsCtx, "LPOS", "l", "a", "RANK", 0).Result()
	lsErr(t, "LPOS RANK 0", err, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
	_, err = c.Do(lsCtx, "LPOS", "l", "a", "COUNT", -1).Result()
	lsErr(t, "LPOS COUNT -1", err, "ERR COUNT can't be negative")
	_, err = c.Do(lsCtx, "LPOS", "l", "a", "MAXLEN", -1).Result()
	lsErr(t, "LPOS MAXLEN -1", err, "ERR MAXLEN can't be negative")
	_, err = c.Do(lsCtx, "LPOS", "l", "a", "RANK").Result()
	lsErr(t, "LPOS RANK without value", err, "ERR syntax error")
}

func TestListsMove(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(lsCtx, "src", "a", "b", "c")
	s, err := c.LMove(lsCtx, "src", "dst", "LEFT", "RIGHT").Result()
	lsEq(t, "LMOVE", s, err, "a")
	s, err = c.RPopLPush(lsCtx, "src", "dst").Result()
	lsEq(t, "RPOPLPUSH", s, err, "c")
	got, err := c.LRange(lsCtx, "dst", 0, -1).Result()
	lsSlice(t, "dst", got, err, "c", "a")
	s, err = c.LMove(lsCtx, "dst", "dst", "LEFT", "RIGHT").Result()
	lsEq(t, "LMOVE rotate", s, err, "c")
	got, err = c.LRange(lsCtx, "dst", 0, -1).Result()
	lsSlice(t, "rotated", got, err, "a", "c")
	s, err = c.LMove(lsCtx, "src", "dst", "RIGHT", "LEFT").Result()
	lsEq(t, "LMOVE last", s, err, "b")
	n, err := c.Exists(lsCtx, "src").Result()
	lsEq(t, "EXISTS emptied source", n, err, 0)
	_, err = c.LMove(lsCtx, "src", "dst", "LEFT", "LEFT").Result()
	lsNil(t, "LMOVE missing source", err)
	_, err = c.LMove(lsCtx, "dst", "x", "UP", "LEFT").Result()
	lsErr(t, "LMOVE bad direction", err, "ERR syntax error")
	c.Set(lsCtx, "str", "v", 0)
	_, err = c.LMove(lsCtx, "dst", "str", "LEFT", "LEFT").Result()
	lsErr(t, "LMOVE to a string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	n, err = c.LLen(lsCtx, "dst").Result()
	lsEq(t, "nothing popped on WRONGTYPE", n, err, 3)

	c.RPush(lsCtx, "m", "1", "2", "3")
	key, vals, err := c.LMPop(lsCtx, "right", 2, "none", "m").Result()
	if err != nil || key != "m" || !slices.Equal(vals, []string{"3", "2"}) {
		t.Fatalf("LMPOP = %q %q %v", key, vals, err)
	}
	key, vals, err = c.LMPop(lsCtx, "left", 5, "m").Result()
	if err != nil || key != "m" || !slices.Equal(vals, []string{"1"}) {
		t.Fatalf("LMPOP rest = %q %q %v", key, vals, err)
	}
	_, _, err = c.LMPop(lsCtx, "left", 1, "m", "none").Result()
	lsNil(t, "LMPOP nothing", err)
	_, err = c.Do(lsCtx, "LMPOP", 0, "m", "LEFT").Result()
	lsErr(t, "LMPOP numkeys 0", err, "ERR numkeys should be greater than 0")
	_, err = c.Do(lsCtx, "LMPOP", 1, "m", "LEFT", "COUNT", 0).Result()
	lsErr(t, "LMPOP COUNT 0", err, "ERR count should be greater than 0")
	keys, err := c.CommandGetKeys(lsCtx, "LMPOP", 2, "a", "b", "LEFT").Result()
	lsSlice(t, "COMMAND GETKEYS LMPOP", keys, err, "a", "b")
}

// TestListsObject covers OBJECT ENCODING (always quicklist, as in Redis
// 7.0), MEMORY USAGE growing with the list, COPY making an independent
// list, and the node limit from list-max-listpack-size.
func TestListsObject(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	c.RPush(lsCtx, "l", "a")
	s, err := c.ObjectEncoding(lsCtx, "l").Result()
	lsEq(t, "OBJECT ENCODING small", s, err, "quicklist")
	small, err := c.MemoryUsage(lsCtx, "l").Result()
	if err != nil || small <= 0 {
		t.Fatalf("MEMORY USAGE = %d %v", small, err)
	}
	for i := 0; i < 2000; i++ {
		c.RPush(lsCtx, "l", strings.Repeat("v", 20)+strconv.Itoa(i))
	}
	s, err = c.ObjectEncoding(lsCtx, "l").Result()
	lsEq(t, "OBJECT ENCODING large", s, err, "quicklist")
	big, err := c.MemoryUsage(lsCtx, "l").Result()
	if err != nil || big < small+2000*20 {
		t.Fatalf("MEMORY USAGE of 2001 elements = %d (small %d) %v", big, small, err)
	}

	ok, err := c.Copy(lsCtx, "l", "l2", 0, false).Result()
	lsEq(t, "COPY", ok, err, 1)
	c.LPop(lsCtx, "l")
	c.LSet(lsCtx, "l", 0, "changed")
	a, err := c.LIndex(lsCtx, "l2", 0).Result()
	lsEq(t, "copy unchanged head", a, err, "a")
	a, err = c.LIndex(lsCtx, "l2", 1).Result()
	lsEq(t, "copy unchanged element", a, err, strings.Repeat("v", 20)+"0")
	n, err := c.LLen(lsCtx, "l2").Result()
	lsEq(t, "copy length", n, err, 2001)

	st, err := c.ConfigSet(lsCtx, "list-max-listpack-size", "3").Result()
	lsEq(t, "CONFIG SET", st, err, "OK")
	c.RPush(lsCtx, "small", "1", "2", "3", "4", "5", "6", "7")
	got, err := c.LRange(lsCtx, "small", 0, -1).Result()
	lsSlice(t, "LRANGE over several nodes", got, err, "1", "2", "3", "4", "5", "6", "7")
	c.LInsertAfter(lsCtx, "small", "2", "2.5")
	c.LRem(lsCtx, "small", 0, "5")
	got, err = c.LRange(lsCtx, "small", 0, -1).Result()
	lsSlice(t, "after edits", got, err, "1", "2", "2.5", "3", "4", "6", "7")
}

// TestListsRaw checks exact bytes: RESP2 and RESP3 nulls, the arity error
// of LPOP with too many arguments, and pushes of binary values.
func TestListsRaw(t *testing.T) {
	inst := servertest.Start(t)
	r := inst.Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"LPOP", "none"}, "$-1\r\n"},
		{[]string{"LPOP", "none", "1"}, "*-1\r\n"},
		{[]string{"LINDEX", "none", "0"}, "$-1\r\n"},
		{[]string{"LMPOP", "1", "none", "LEFT"}, "*-1\r\n"},
		{[]string{"LPOS", "none", "a"}, "$-1\r\n"},
		{[]string{"LPOS", "none", "a", "COUNT", "0"}, "*0\r\n"},
		{[]string{"RPUSH", "b", "x\x00y", "\r\n", ""}, ":3\r\n"},
		{[]string{"LRANGE", "b", "0", "-1"}, "*3\r\n$3\r\nx\x00y\r\n$2\r\n\r\n\r\n$0\r\n\r\n"},
		{[]string{"LPOP", "b", "1", "2"}, "-ERR wrong number of arguments for 'lpop' command\r\n"},
		{[]string{"LPOP", "b", "0"}, "*0\r\n"},
		{[]string{"LMPOP", "1", "b", "RIGHT", "COUNT", "2"}, "*2\r\n$1\r\nb\r\n*2\r\n$0\r\n\r\n$2\r\n\r\n\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"LPOP", "none"}, "_\r\n"},
		{[]string{"LPOP", "none", "1"}, "_\r\n"},
		{[]string{"LMPOP", "1", "none", "LEFT"}, "_\r\n"},
		{[]string{"LPOS", "b", "nosuch"}, "_\r\n"},
	} {
		got := r.Do(tc.args...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
}
