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
	n, err := c.LPush(servertest.Ctx, "l", "a", "b", "c").Result()
	servertest.MustEq(t, "LPUSH", n, err, 3)
	n, err = c.RPush(servertest.Ctx, "l", "d", 5).Result()
	servertest.MustEq(t, "RPUSH", n, err, 5)
	got, err := c.LRange(servertest.Ctx, "l", 0, -1).Result()
	servertest.MustSlice(t, "LRANGE", got, err, "c", "b", "a", "d", "5")
	n, err = c.LPushX(servertest.Ctx, "none", "x").Result()
	servertest.MustEq(t, "LPUSHX missing", n, err, 0)
	n, err = c.RPushX(servertest.Ctx, "none", "x", "y").Result()
	servertest.MustEq(t, "RPUSHX missing", n, err, 0)
	n, err = c.Exists(servertest.Ctx, "none").Result()
	servertest.MustEq(t, "EXISTS after PUSHX", n, err, 0)
	n, err = c.LPushX(servertest.Ctx, "l", "x", "y").Result()
	servertest.MustEq(t, "LPUSHX", n, err, 7)
	n, err = c.RPushX(servertest.Ctx, "l", "z").Result()
	servertest.MustEq(t, "RPUSHX", n, err, 8)

	s, err := c.LPop(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "LPOP", s, err, "y")
	s, err = c.RPop(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "RPOP", s, err, "z")
	got, err = c.LPopCount(servertest.Ctx, "l", 2).Result()
	servertest.MustSlice(t, "LPOP 2", got, err, "x", "c")
	got, err = c.RPopCount(servertest.Ctx, "l", 2).Result()
	servertest.MustSlice(t, "RPOP 2 (tail first)", got, err, "5", "d")
	got, err = c.LPopCount(servertest.Ctx, "l", 0).Result()
	servertest.MustSlice(t, "LPOP 0", got, err)
	_, err = c.LPopCount(servertest.Ctx, "l", -1).Result()
	lsErr(t, "LPOP -1", err, "ERR value is out of range, must be positive")
	got, err = c.RPopCount(servertest.Ctx, "l", 10).Result()
	servertest.MustSlice(t, "RPOP 10", got, err, "a", "b")
	n, err = c.Exists(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "EXISTS after popping all", n, err, 0)
	_, err = c.LPop(servertest.Ctx, "l").Result()
	lsNil(t, "LPOP missing", err)
	_, err = c.LPopCount(servertest.Ctx, "l", 3).Result()
	lsNil(t, "LPOP missing with count", err)
	n, err = c.LLen(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "LLEN missing", n, err, 0)

	c.Set(servertest.Ctx, "s", "v", 0)
	_, err = c.LPush(servertest.Ctx, "s", "a").Result()
	lsErr(t, "LPUSH on string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	_, err = c.LLen(servertest.Ctx, "s").Result()
	lsErr(t, "LLEN on string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
}

func TestListsIndexAndEdit(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(servertest.Ctx, "l", "a", "b", "c", "d")
	s, err := c.LIndex(servertest.Ctx, "l", 1).Result()
	servertest.MustEq(t, "LINDEX 1", s, err, "b")
	s, err = c.LIndex(servertest.Ctx, "l", -1).Result()
	servertest.MustEq(t, "LINDEX -1", s, err, "d")
	_, err = c.LIndex(servertest.Ctx, "l", 4).Result()
	lsNil(t, "LINDEX out of range", err)
	_, err = c.LIndex(servertest.Ctx, "none", 0).Result()
	lsNil(t, "LINDEX missing", err)

	st, err := c.LSet(servertest.Ctx, "l", -2, "C").Result()
	servertest.MustEq(t, "LSET", st, err, "OK")
	_, err = c.LSet(servertest.Ctx, "l", 9, "x").Result()
	lsErr(t, "LSET out of range", err, "ERR index out of range")
	_, err = c.LSet(servertest.Ctx, "none", 0, "x").Result()
	lsErr(t, "LSET missing", err, "ERR no such key")

	n, err := c.LInsertBefore(servertest.Ctx, "l", "a", "A").Result()
	servertest.MustEq(t, "LINSERT BEFORE", n, err, 5)
	n, err = c.LInsertAfter(servertest.Ctx, "l", "d", "D").Result()
	servertest.MustEq(t, "LINSERT AFTER", n, err, 6)
	n, err = c.LInsert(servertest.Ctx, "l", "BEFORE", "nosuch", "x").Result()
	servertest.MustEq(t, "LINSERT no pivot", n, err, -1)
	n, err = c.LInsert(servertest.Ctx, "none", "AFTER", "a", "x").Result()
	servertest.MustEq(t, "LINSERT missing", n, err, 0)
	_, err = c.LInsert(servertest.Ctx, "l", "MIDDLE", "a", "x").Result()
	lsErr(t, "LINSERT bad where", err, "ERR syntax error")
	got, err := c.LRange(servertest.Ctx, "l", 0, -1).Result()
	servertest.MustSlice(t, "LRANGE", got, err, "A", "a", "b", "C", "d", "D")
	got, err = c.LRange(servertest.Ctx, "l", -2, 100).Result()
	servertest.MustSlice(t, "LRANGE clamped", got, err, "d", "D")
	got, err = c.LRange(servertest.Ctx, "l", 4, 2).Result()
	servertest.MustSlice(t, "LRANGE empty", got, err)

	c.RPush(servertest.Ctx, "r", "x", "y", "x", "z", "x")
	n, err = c.LRem(servertest.Ctx, "r", -2, "x").Result()
	servertest.MustEq(t, "LREM -2", n, err, 2)
	got, err = c.LRange(servertest.Ctx, "r", 0, -1).Result()
	servertest.MustSlice(t, "after LREM -2", got, err, "x", "y", "z")
	n, err = c.LRem(servertest.Ctx, "r", 1, "y").Result()
	servertest.MustEq(t, "LREM 1", n, err, 1)
	n, err = c.LRem(servertest.Ctx, "r", 0, "nosuch").Result()
	servertest.MustEq(t, "LREM none", n, err, 0)

	st, err = c.LTrim(servertest.Ctx, "l", 1, -2).Result()
	servertest.MustEq(t, "LTRIM", st, err, "OK")
	got, err = c.LRange(servertest.Ctx, "l", 0, -1).Result()
	servertest.MustSlice(t, "after LTRIM", got, err, "a", "b", "C", "d")
	st, err = c.LTrim(servertest.Ctx, "l", 5, 10).Result()
	servertest.MustEq(t, "LTRIM to nothing", st, err, "OK")
	n, err = c.Exists(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "EXISTS after LTRIM", n, err, 0)
	st, err = c.LTrim(servertest.Ctx, "none", 0, 1).Result()
	servertest.MustEq(t, "LTRIM missing", st, err, "OK")
}

func TestListsPos(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(servertest.Ctx, "l", "a", "b", "a", "c", "a")
	n, err := c.LPos(servertest.Ctx, "l", "a", redis.LPosArgs{}).Result()
	servertest.MustEq(t, "LPOS", n, err, 0)
	n, err = c.LPos(servertest.Ctx, "l", "a", redis.LPosArgs{Rank: 2}).Result()
	servertest.MustEq(t, "LPOS RANK 2", n, err, 2)
	n, err = c.LPos(servertest.Ctx, "l", "a", redis.LPosArgs{Rank: -1}).Result()
	servertest.MustEq(t, "LPOS RANK -1", n, err, 4)
	_, err = c.LPos(servertest.Ctx, "l", "a", redis.LPosArgs{Rank: 4}).Result()
	lsNil(t, "LPOS RANK past the matches", err)
	_, err = c.LPos(servertest.Ctx, "l", "c", redis.LPosArgs{MaxLen: 3}).Result()
	lsNil(t, "LPOS MAXLEN short of the match", err)
	idx, err := c.LPosCount(servertest.Ctx, "l", "a", 0, redis.LPosArgs{}).Result()
	servertest.MustSlice(t, "LPOS COUNT 0", idx, err, 0, 2, 4)
	idx, err = c.LPosCount(servertest.Ctx, "l", "a", 2, redis.LPosArgs{Rank: -1}).Result()
	servertest.MustSlice(t, "LPOS RANK -1 COUNT 2", idx, err, 4, 2)
	idx, err = c.LPosCount(servertest.Ctx, "l", "a", 0, redis.LPosArgs{Rank: 2, MaxLen: 4}).Result()
	servertest.MustSlice(t, "LPOS RANK 2 COUNT 0 MAXLEN 4", idx, err, 2)
	idx, err = c.LPosCount(servertest.Ctx, "none", "a", 1, redis.LPosArgs{}).Result()
	servertest.MustSlice(t, "LPOS missing COUNT", idx, err)
	_, err = c.Do(servertest.Ctx, "LPOS", "l", "a", "RANK", 0).Result()
	lsErr(t, "LPOS RANK 0", err, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
	_, err = c.Do(servertest.Ctx, "LPOS", "l", "a", "COUNT", -1).Result()
	lsErr(t, "LPOS COUNT -1", err, "ERR COUNT can't be negative")
	_, err = c.Do(servertest.Ctx, "LPOS", "l", "a", "MAXLEN", -1).Result()
	lsErr(t, "LPOS MAXLEN -1", err, "ERR MAXLEN can't be negative")
	_, err = c.Do(servertest.Ctx, "LPOS", "l", "a", "RANK").Result()
	lsErr(t, "LPOS RANK without value", err, "ERR syntax error")
}

func TestListsMove(t *testing.T) {
	c := servertest.Start(t).Client(t)
	c.RPush(servertest.Ctx, "src", "a", "b", "c")
	s, err := c.LMove(servertest.Ctx, "src", "dst", "LEFT", "RIGHT").Result()
	servertest.MustEq(t, "LMOVE", s, err, "a")
	s, err = c.RPopLPush(servertest.Ctx, "src", "dst").Result()
	servertest.MustEq(t, "RPOPLPUSH", s, err, "c")
	got, err := c.LRange(servertest.Ctx, "dst", 0, -1).Result()
	servertest.MustSlice(t, "dst", got, err, "c", "a")
	s, err = c.LMove(servertest.Ctx, "dst", "dst", "LEFT", "RIGHT").Result()
	servertest.MustEq(t, "LMOVE rotate", s, err, "c")
	got, err = c.LRange(servertest.Ctx, "dst", 0, -1).Result()
	servertest.MustSlice(t, "rotated", got, err, "a", "c")
	s, err = c.LMove(servertest.Ctx, "src", "dst", "RIGHT", "LEFT").Result()
	servertest.MustEq(t, "LMOVE last", s, err, "b")
	n, err := c.Exists(servertest.Ctx, "src").Result()
	servertest.MustEq(t, "EXISTS emptied source", n, err, 0)
	_, err = c.LMove(servertest.Ctx, "src", "dst", "LEFT", "LEFT").Result()
	lsNil(t, "LMOVE missing source", err)
	_, err = c.LMove(servertest.Ctx, "dst", "x", "UP", "LEFT").Result()
	lsErr(t, "LMOVE bad direction", err, "ERR syntax error")
	c.Set(servertest.Ctx, "str", "v", 0)
	_, err = c.LMove(servertest.Ctx, "dst", "str", "LEFT", "LEFT").Result()
	lsErr(t, "LMOVE to a string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	n, err = c.LLen(servertest.Ctx, "dst").Result()
	servertest.MustEq(t, "nothing popped on WRONGTYPE", n, err, 3)

	c.RPush(servertest.Ctx, "m", "1", "2", "3")
	key, vals, err := c.LMPop(servertest.Ctx, "right", 2, "none", "m").Result()
	if err != nil || key != "m" || !slices.Equal(vals, []string{"3", "2"}) {
		t.Fatalf("LMPOP = %q %q %v", key, vals, err)
	}
	key, vals, err = c.LMPop(servertest.Ctx, "left", 5, "m").Result()
	if err != nil || key != "m" || !slices.Equal(vals, []string{"1"}) {
		t.Fatalf("LMPOP rest = %q %q %v", key, vals, err)
	}
	_, _, err = c.LMPop(servertest.Ctx, "left", 1, "m", "none").Result()
	lsNil(t, "LMPOP nothing", err)
	_, err = c.Do(servertest.Ctx, "LMPOP", 0, "m", "LEFT").Result()
	lsErr(t, "LMPOP numkeys 0", err, "ERR numkeys should be greater than 0")
	_, err = c.Do(servertest.Ctx, "LMPOP", 1, "m", "LEFT", "COUNT", 0).Result()
	lsErr(t, "LMPOP COUNT 0", err, "ERR count should be greater than 0")
	keys, err := c.CommandGetKeys(servertest.Ctx, "LMPOP", 2, "a", "b", "LEFT").Result()
	servertest.MustSlice(t, "COMMAND GETKEYS LMPOP", keys, err, "a", "b")
}

// TestListsObject covers OBJECT ENCODING (always quicklist, as in Redis
// 7.0), MEMORY USAGE growing with the list, COPY making an independent
// list, and the node limit from list-max-listpack-size.
func TestListsObject(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	c.RPush(servertest.Ctx, "l", "a")
	s, err := c.ObjectEncoding(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "OBJECT ENCODING small", s, err, "quicklist")
	small, err := c.MemoryUsage(servertest.Ctx, "l").Result()
	if err != nil || small <= 0 {
		t.Fatalf("MEMORY USAGE = %d %v", small, err)
	}
	for i := 0; i < 2000; i++ {
		c.RPush(servertest.Ctx, "l", strings.Repeat("v", 20)+strconv.Itoa(i))
	}
	s, err = c.ObjectEncoding(servertest.Ctx, "l").Result()
	servertest.MustEq(t, "OBJECT ENCODING large", s, err, "quicklist")
	big, err := c.MemoryUsage(servertest.Ctx, "l").Result()
	if err != nil || big < small+2000*20 {
		t.Fatalf("MEMORY USAGE of 2001 elements = %d (small %d) %v", big, small, err)
	}

	ok, err := c.Copy(servertest.Ctx, "l", "l2", 0, false).Result()
	servertest.MustEq(t, "COPY", ok, err, 1)
	c.LPop(servertest.Ctx, "l")
	c.LSet(servertest.Ctx, "l", 0, "changed")
	a, err := c.LIndex(servertest.Ctx, "l2", 0).Result()
	servertest.MustEq(t, "copy unchanged head", a, err, "a")
	a, err = c.LIndex(servertest.Ctx, "l2", 1).Result()
	servertest.MustEq(t, "copy unchanged element", a, err, strings.Repeat("v", 20)+"0")
	n, err := c.LLen(servertest.Ctx, "l2").Result()
	servertest.MustEq(t, "copy length", n, err, 2001)

	st, err := c.ConfigSet(servertest.Ctx, "list-max-listpack-size", "3").Result()
	servertest.MustEq(t, "CONFIG SET", st, err, "OK")
	c.RPush(servertest.Ctx, "small", "1", "2", "3", "4", "5", "6", "7")
	got, err := c.LRange(servertest.Ctx, "small", 0, -1).Result()
	servertest.MustSlice(t, "LRANGE over several nodes", got, err, "1", "2", "3", "4", "5", "6", "7")
	c.LInsertAfter(servertest.Ctx, "small", "2", "2.5")
	c.LRem(servertest.Ctx, "small", 0, "5")
	got, err = c.LRange(servertest.Ctx, "small", 0, -1).Result()
	servertest.MustSlice(t, "after edits", got, err, "1", "2", "2.5", "3", "4", "6", "7")
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
