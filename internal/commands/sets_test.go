package commands_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Client-level tests of the set commands through go-redis and raw RESP.

func sxSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sxCheck[T comparable](t *testing.T, what string, got T, err error, want T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func sxCheckList(t *testing.T, what string, got []string, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

func TestSetsGoRedisBasics(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()

	n, err := c.SAdd(ctx, "s", "c", "a", "b", "a").Result()
	sxCheck(t, "SADD", n, err, int64(3))
	n, err = c.SAdd(ctx, "s", "a", "d").Result()
	sxCheck(t, "SADD again", n, err, int64(1))
	n, err = c.SCard(ctx, "s").Result()
	sxCheck(t, "SCARD", n, err, int64(4))
	n, err = c.SCard(ctx, "nosuch").Result()
	sxCheck(t, "SCARD missing", n, err, int64(0))

	ok, err := c.SIsMember(ctx, "s", "a").Result()
	sxCheck(t, "SISMEMBER a", ok, err, true)
	ok, err = c.SIsMember(ctx, "s", "z").Result()
	sxCheck(t, "SISMEMBER z", ok, err, false)
	ok, err = c.SIsMember(ctx, "nosuch", "a").Result()
	sxCheck(t, "SISMEMBER missing key", ok, err, false)
	bs, err := c.SMIsMember(ctx, "s", "a", "z", "d").Result()
	if err != nil || !slices.Equal(bs, []bool{true, false, true}) {
		t.Errorf("SMISMEMBER: %v %v", bs, err)
	}
	bs, err = c.SMIsMember(ctx, "nosuch", "a").Result()
	if err != nil || !slices.Equal(bs, []bool{false}) {
		t.Errorf("SMISMEMBER missing key: %v %v", bs, err)
	}

	ms, err := c.SMembers(ctx, "s").Result()
	sxCheckList(t, "SMEMBERS", sxSorted(ms), err, "a", "b", "c", "d")
	ms, err = c.SMembers(ctx, "nosuch").Result()
	sxCheckList(t, "SMEMBERS missing", ms, err)
	mm, err := c.SMembersMap(ctx, "s").Result()
	if err != nil || len(mm) != 4 {
		t.Errorf("SMEMBERS as map: %v %v", mm, err)
	}

	n, err = c.SRem(ctx, "s", "a", "z", "a").Result()
	sxCheck(t, "SREM", n, err, int64(1))
	n, err = c.SRem(ctx, "nosuch", "a").Result()
	sxCheck(t, "SREM missing", n, err, int64(0))
	n, err = c.SRem(ctx, "s", "b", "c", "d").Result()
	sxCheck(t, "SREM rest", n, err, int64(3))
	n, err = c.Exists(ctx, "s").Result()
	sxCheck(t, "emptied set is deleted", n, err, int64(0))
}

func TestSetsGoRedisIntegersAndEncodings(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("set-max-intset-entries", "4", "set-max-listpack-entries", "3"))
	c := inst.Client(t)
	ctx := context.Background()

	c.SAdd(ctx, "i", "3", "-1", "2")
	ms, err := c.SMembers(ctx, "i").Result()
	sxCheckList(t, "intset members ascending", ms, err, "-1", "2", "3")
	enc, err := c.ObjectEncoding(ctx, "i").Result()
	sxCheck(t, "intset", enc, err, "intset")
	// Not integers as Redis sees them: they convert the intset.
	for _, m := range []string{"-0", "01", "+1", " 1", "1.0"} {
		c.Del(ctx, "j")
		c.SAdd(ctx, "j", "1")
		n, err := c.SAdd(ctx, "j", m).Result()
		sxCheck(t, "SADD "+m, n, err, int64(1))
		enc, err := c.ObjectEncoding(ctx, "j").Result()
		sxCheck(t, "encoding after "+m, enc, err, "listpack")
		ok, err := c.SIsMember(ctx, "j", m).Result()
		sxCheck(t, "SISMEMBER "+m, ok, err, true)
	}
	c.SAdd(ctx, "i", "4")
	enc, _ = c.ObjectEncoding(ctx, "i").Result()
	sxCheck(t, "4 members", enc, nil, "intset")
	c.SAdd(ctx, "i", "5")
	enc, _ = c.ObjectEncoding(ctx, "i").Result()
	sxCheck(t, "past set-max-intset-entries", enc, nil, "hashtable")
	c.SRem(ctx, "i", "5", "4")
	enc, _ = c.ObjectEncoding(ctx, "i").Result()
	sxCheck(t, "removal never converts back", enc, nil, "hashtable")

	c.SAdd(ctx, "l", "a", "b", "c")
	enc, _ = c.ObjectEncoding(ctx, "l").Result()
	sxCheck(t, "small strings", enc, nil, "listpack")
	c.SAdd(ctx, "l", "d")
	enc, _ = c.ObjectEncoding(ctx, "l").Result()
	sxCheck(t, "past set-max-listpack-entries", enc, nil, "hashtable")
	c.SAdd(ctx, "v", "a", strings.Repeat("x", 65))
	enc, _ = c.ObjectEncoding(ctx, "v").Result()
	sxCheck(t, "past set-max-listpack-value", enc, nil, "hashtable")

	// Extremes of int64 stay integers; one past them does not.
	c.SAdd(ctx, "x", "9223372036854775807", "-9223372036854775808")
	ms, _ = c.SMembers(ctx, "x").Result()
	sxCheckList(t, "int64 extremes", ms, nil, "-9223372036854775808", "9223372036854775807")
	enc, _ = c.ObjectEncoding(ctx, "x").Result()
	sxCheck(t, "int64 extremes encoding", enc, nil, "intset")
	c.SAdd(ctx, "x", "9223372036854775808")
	enc, _ = c.ObjectEncoding(ctx, "x").Result()
	sxCheck(t, "past int64", enc, nil, "listpack")
}

func TestSetsGoRedisRandom(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	var all []string
	for i := 0; i < 50; i++ {
		all = append(all, "m"+strconv.Itoa(i))
	}
	c.SAdd(ctx, "s", all)
	member := map[string]bool{}
	for _, m := range all {
		member[m] = true
	}

	m, err := c.SRandMember(ctx, "s").Result()
	if err != nil || !member[m] {
		t.Errorf("SRANDMEMBER: %q %v", m, err)
	}
	_, err = c.SRandMember(ctx, "nosuch").Result()
	if err != redis.Nil {
		t.Errorf("SRANDMEMBER missing key: %v", err)
	}
	for _, n := range []int64{1, 10, 49, 50, 100} {
		ms, err := c.SRandMemberN(ctx, "s", n).Result()
		if err != nil || len(ms) != int(min(n, 50)) {
			t.Fatalf("SRANDMEMBER %d: %d members, %v", n, len(ms), err)
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if !member[m] || seen[m] {
				t.Errorf("SRANDMEMBER %d: %q not a member or repeated", n, m)
			}
			seen[m] = true
		}
	}
	ms, err := c.SRandMemberN(ctx, "s", -200).Result()
	if err != nil || len(ms) != 200 {
		t.Fatalf("SRANDMEMBER -200: %d members, %v", len(ms), err)
	}
	distinct := map[string]bool{}
	for _, m := range ms {
		if !member[m] {
			t.Errorf("SRANDMEMBER -200: %q is not a member", m)
		}
		distinct[m] = true
	}
	// 200 uniform picks from 50 leave one out with probability < 1e-20.
	if len(distinct) < 40 {
		t.Errorf("SRANDMEMBER -200 saw only %d distinct members", len(distinct))
	}
	n, _ := c.SCard(ctx, "s").Result()
	sxCheck(t, "SRANDMEMBER leaves the set", n, nil, int64(50))

	popped := map[string]bool{}
	p, err := c.SPop(ctx, "s").Result()
	if err != nil || !member[p] {
		t.Fatalf("SPOP: %q %v", p, err)
	}
	popped[p] = true
	for _, k := range []int64{5, 40} {
		ps, err := c.SPopN(ctx, "s", k).Result()
		if err != nil || len(ps) != int(k) {
			t.Fatalf("SPOP %d: %q %v", k, ps, err)
		}
		for _, p := range ps {
			if !member[p] || popped[p] {
				t.Errorf("SPOP %d: %q not a member or popped twice", k, p)
			}
			popped[p] = true
		}
	}
	rest, _ := c.SMembers(ctx, "s").Result()
	if len(rest) != 4 {
		t.Fatalf("after popping 46 of 50: %q", rest)
	}
	for _, m := range rest {
		if popped[m] {
			t.Errorf("%q was popped but is still there", m)
		}
	}
	ps, err := c.SPopN(ctx, "s", 10).Result()
	sxCheckList(t, "SPOP more than left", sxSorted(ps), err, sxSorted(rest)...)
	n, _ = c.Exists(ctx, "s").Result()
	sxCheck(t, "SPOP of everything deletes the key", n, nil, int64(0))
	_, err = c.SPop(ctx, "s").Result()
	if err != redis.Nil {
		t.Errorf("SPOP missing key: %v", err)
	}
	ps, err = c.SPopN(ctx, "s", 3).Result()
	sxCheckList(t, "SPOP count missing key", ps, err)
}

func TestSetsGoRedisMoveAndAlgebra(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	c.SAdd(ctx, "a", "1", "2", "3", "x")
	c.SAdd(ctx, "b", "2", "3", "4", "y")
	c.SAdd(ctx, "c", "3", "x", "y", "z")

	ms, err := c.SInter(ctx, "a", "b").Result()
	sxCheckList(t, "SINTER", sxSorted(ms), err, "2", "3")
	ms, err = c.SInter(ctx, "a", "b", "c").Result()
	sxCheckList(t, "SINTER 3", ms, err, "3")
	ms, err = c.SInter(ctx, "a", "nosuch").Result()
	sxCheckList(t, "SINTER missing", ms, err)
	n, err := c.SInterCard(ctx, 0, "a", "b").Result()
	sxCheck(t, "SINTERCARD", n, err, int64(2))
	n, err = c.SInterCard(ctx, 1, "a", "b").Result()
	sxCheck(t, "SINTERCARD LIMIT 1", n, err, int64(1))
	n, err = c.SInterStore(ctx, "d", "a", "b").Result()
	sxCheck(t, "SINTERSTORE", n, err, int64(2))
	ms, _ = c.SMembers(ctx, "d").Result()
	sxCheckList(t, "SINTERSTORE result", ms, nil, "2", "3")

	ms, err = c.SUnion(ctx, "a", "b", "nosuch").Result()
	sxCheckList(t, "SUNION", sxSorted(ms), err, "1", "2", "3", "4", "x", "y")
	n, err = c.SUnionStore(ctx, "d", "a", "c").Result()
	sxCheck(t, "SUNIONSTORE", n, err, int64(6))
	ms, err = c.SDiff(ctx, "a", "b", "c").Result()
	sxCheckList(t, "SDIFF", ms, err, "1")
	ms, err = c.SDiff(ctx, "nosuch", "a").Result()
	sxCheckList(t, "SDIFF missing first", ms, err)
	n, err = c.SDiffStore(ctx, "d", "a", "b").Result()
	sxCheck(t, "SDIFFSTORE", n, err, int64(2))
	ms, _ = c.SMembers(ctx, "d").Result()
	sxCheckList(t, "SDIFFSTORE result", sxSorted(ms), nil, "1", "x")

	// An empty result deletes the destination, whatever it held.
	c.Set(ctx, "str", "v", 0)
	n, err = c.SInterStore(ctx, "str", "a", "nosuch").Result()
	sxCheck(t, "SINTERSTORE empty", n, err, int64(0))
	n, _ = c.Exists(ctx, "str").Result()
	sxCheck(t, "destination deleted", n, nil, int64(0))
	c.Set(ctx, "str", "v", 0)
	_, err = c.SInter(ctx, "a", "str").Result()
	if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("SINTER with a string: %v", err)
	}

	ok, err := c.SMove(ctx, "a", "m", "1").Result()
	sxCheck(t, "SMOVE to new key", ok, err, true)
	ok, err = c.SMove(ctx, "a", "m", "1").Result()
	sxCheck(t, "SMOVE gone member", ok, err, false)
	ok, err = c.SMove(ctx, "nosuch", "m", "1").Result()
	sxCheck(t, "SMOVE missing source", ok, err, false)
	ok, err = c.SMove(ctx, "a", "a", "2").Result()
	sxCheck(t, "SMOVE to itself", ok, err, true)
	for _, m := range []string{"2", "3", "x"} {
		c.SMove(ctx, "a", "m", m)
	}
	n, _ = c.Exists(ctx, "a").Result()
	sxCheck(t, "SMOVE of the last member deletes the source", n, nil, int64(0))
	ms, _ = c.SMembers(ctx, "m").Result()
	sxCheckList(t, "SMOVE destination", sxSorted(ms), nil, "1", "2", "3", "x")
	_, err = c.SMove(ctx, "m", "str", "1").Result()
	if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("SMOVE to a string: %v", err)
	}
}

func TestSetsGoRedisScan(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	c.SAdd(ctx, "small", "1", "2", "3", "10")
	keys, cursor, err := c.SScan(ctx, "small", 0, "1*", 1).Result()
	if err != nil || cursor != 0 || !slices.Equal(keys, []string{"1", "10"}) {
		t.Errorf("SSCAN small intset: %q %d %v", keys, cursor, err)
	}
	want := map[string]bool{}
	var members []any
	for i := 0; i < 1000; i++ {
		m := "member:" + strconv.Itoa(i)
		want[m] = true
		members = append(members, m)
	}
	c.SAdd(ctx, "big", members...)
	got := map[string]bool{}
	calls := 0
	for cursor = 0; ; calls++ {
		var ks []string
		ks, cursor, err = c.SScan(ctx, "big", cursor, "", 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			got[k] = true
		}
		if cursor == 0 {
			break
		}
	}
	if len(got) != len(want) || calls < 5 {
		t.Errorf("SSCAN big: %d members in %d calls", len(got), calls)
	}
	ks, _, err := c.SScan(ctx, "nosuch", 0, "", 0).Result()
	if err != nil || len(ks) != 0 {
		t.Errorf("SSCAN missing: %q %v", ks, err)
	}
}

// TestSetsRawRESP3 checks the reply types: RESP3 sets for SMEMBERS, the
// algebra and SPOP with a count, arrays for SRANDMEMBER with a count and
// SMISMEMBER, nulls for SPOP and SRANDMEMBER of a missing key.
func TestSetsRawRESP3(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("HELLO", "3")
	for _, tc := range []struct{ cmd, want string }{
		{"SADD i 3 1 2", ":3\r\n"},
		{"SMEMBERS i", "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SMEMBERS nosuch", "~0\r\n"},
		{"SINTER i nosuch", "~0\r\n"},
		{"SUNION i", "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SDIFF i nosuch", "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SRANDMEMBER i 5", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SRANDMEMBER nosuch 5", "*0\r\n"},
		{"SRANDMEMBER nosuch", "_\r\n"},
		{"SMISMEMBER i 1 9", "*2\r\n:1\r\n:0\r\n"},
		{"SPOP nosuch", "_\r\n"},
		{"SPOP nosuch 2", "~0\r\n"},
		{"SPOP i 0", "~0\r\n"},
		{"SPOP i 3", "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SSCAN nosuch 0", "*2\r\n$1\r\n0\r\n*0\r\n"},
		{"SINTERCARD 1 nosuch", ":0\r\n"},
	} {
		if got := c.Do(strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
	c.Do("HELLO", "2")
	for _, tc := range []struct{ cmd, want string }{
		{"SADD i 3 1 2", ":3\r\n"},
		{"SMEMBERS i", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SPOP nosuch", "$-1\r\n"},
		{"SPOP nosuch 1", "*0\r\n"},
		{"SRANDMEMBER nosuch", "$-1\r\n"},
	} {
		if got := c.Do(strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("RESP2 %s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestSetsRawBinaryMembers: members are binary-safe, and members that look
// like integers but are not canonical stay distinct from the integer.
func TestSetsRawBinaryMembers(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	bin := "a\x00b\r\n\xff"
	if got := c.Do("SADD", "s", bin, "", "1", "01", "-0", "0"); got != ":6\r\n" {
		t.Fatalf("SADD: %q", got)
	}
	for _, m := range []string{bin, "", "1", "01", "-0", "0"} {
		if got := c.Do("SISMEMBER", "s", m); got != ":1\r\n" {
			t.Errorf("SISMEMBER %q: %q", m, got)
		}
	}
	if got := c.Do("SISMEMBER", "s", "a"); got != ":0\r\n" {
		t.Errorf("SISMEMBER prefix of a binary member: %q", got)
	}
	got := sxMembers(t, c.Do("SMEMBERS", "s"))
	if !slices.Equal(sxSorted(got), sxSorted([]string{bin, "", "1", "01", "-0", "0"})) {
		t.Errorf("SMEMBERS: %q", got)
	}
	if got := c.Do("SREM", "s", "00", "1"); got != ":1\r\n" {
		t.Errorf("SREM: %q", got)
	}
	if got := c.Do("SCARD", "s"); got != ":5\r\n" {
		t.Errorf("SCARD: %q", got)
	}
}

// TestSetsCopyAndType: COPY deep-copies a set; TYPE and OBJECT ENCODING
// see it; MEMORY USAGE grows with it.
func TestSetsCopyAndType(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	var ints []any
	for i := 0; i < 2000; i++ {
		ints = append(ints, i*3)
	}
	c.SAdd(ctx, "big", ints...)
	c.SAdd(ctx, "small", "a", "b")
	for _, key := range []string{"big", "small"} {
		ok, err := c.Copy(ctx, key, key+"2", 0, false).Result()
		sxCheck(t, "COPY "+key, ok, err, int64(1))
		a, _ := c.SMembers(ctx, key).Result()
		b, _ := c.SMembers(ctx, key+"2").Result()
		if !slices.Equal(sxSorted(a), sxSorted(b)) {
			t.Errorf("COPY %s: members differ", key)
		}
		e1, _ := c.ObjectEncoding(ctx, key).Result()
		e2, _ := c.ObjectEncoding(ctx, key+"2").Result()
		sxCheck(t, "COPY keeps the encoding of "+key, e2, nil, e1)
	}
	c.SAdd(ctx, "big2", "x")
	c.SRem(ctx, "small2", "a")
	n, _ := c.SCard(ctx, "big").Result()
	sxCheck(t, "original unchanged by a write to the copy", n, nil, int64(2000))
	n, _ = c.SCard(ctx, "small").Result()
	sxCheck(t, "original unchanged by a removal from the copy", n, nil, int64(2))
	typ, _ := c.Type(ctx, "big").Result()
	sxCheck(t, "TYPE", typ, nil, "set")
	small, err := c.MemoryUsage(ctx, "small").Result()
	if err != nil {
		t.Fatal(err)
	}
	big, _ := c.MemoryUsage(ctx, "big").Result()
	if small <= 0 || big <= small {
		t.Errorf("MEMORY USAGE small %d big %d", small, big)
	}
}
