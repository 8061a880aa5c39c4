package commands_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Raw RESP checks of what redis-server 7.0 cannot be compared on:
// ZRANK/ZREVRANK WITHSCORE came in Redis 7.2. The expected bytes are
// Redis 7.2's (addReplyArrayLen, addReplyLongLong, addReplyDouble; a miss
// is a null array).
func TestZsetRawRankWithScore(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	expect := func(want string, args ...string) {
		t.Helper()
		if got := c.Do(args...); got != want {
			t.Errorf("%q: got %q, want %q", args, got, want)
		}
	}
	expect(":3\r\n", "ZADD", "z", "1", "a", "2.5", "b", "inf", "c")
	expect("*2\r\n:1\r\n$3\r\n2.5\r\n", "ZRANK", "z", "b", "WITHSCORE")
	expect("*2\r\n:0\r\n$3\r\ninf\r\n", "ZREVRANK", "z", "c", "withscore")
	expect("*-1\r\n", "ZRANK", "z", "nosuch", "WITHSCORE")
	expect("*-1\r\n", "ZRANK", "nokey", "a", "WITHSCORE")
	expect("$-1\r\n", "ZRANK", "nokey", "a")
	expect(":2\r\n", "ZRANK", "z", "c")
	expect("-ERR syntax error\r\n", "ZRANK", "z", "a", "WITHSCORES")
	expect("-ERR wrong number of arguments for 'zrank' command\r\n", "ZRANK", "z", "a", "WITHSCORE", "x")
	expect("-ERR wrong number of arguments for 'zrevrank' command\r\n", "ZREVRANK", "z")
	expect("+OK\r\n", "SET", "s", "v")
	expect("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "ZRANK", "s", "a", "WITHSCORE")

	if r := c.Do("HELLO", "3"); !strings.HasPrefix(r, "%") {
		t.Fatalf("HELLO 3: %q", r)
	}
	expect("*2\r\n:1\r\n,2.5\r\n", "ZRANK", "z", "b", "WITHSCORE")
	expect("*2\r\n:2\r\n,1\r\n", "ZREVRANK", "z", "a", "WITHSCORE")
	expect("*2\r\n:2\r\n,inf\r\n", "ZRANK", "z", "c", "WITHSCORE")
	expect("_\r\n", "ZRANK", "z", "nosuch", "WITHSCORE")
	expect("_\r\n", "ZRANK", "z", "nosuch")
}

// TestZsetRawScanCursor walks a skiplist set with raw ZSCAN calls: the
// cursor is a decimal unsigned integer that grows with the scores, COUNT
// is honoured up to the end of a run of equal scores, and the last call
// returns cursor 0.
func TestZsetRawScanCursor(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("zset-max-listpack-entries", "4"))
	c := inst.Raw(t)
	c.Do("ZADD", "z", "1", "a", "2", "b", "2", "c", "2", "d", "3", "e", "-inf", "f", "inf", "g")
	if got := c.Do("OBJECT", "ENCODING", "z"); got != "$8\r\nskiplist\r\n" {
		t.Fatalf("encoding %q", got)
	}
	var calls [][]string
	cursor := "0"
	for {
		r := servertest.MustParse(t, c.Do("ZSCAN", "z", cursor, "COUNT", "2"))
		cursor = r.Items[0].Str
		calls = append(calls, r.Items[1].Strings())
		if cursor == "0" || len(calls) > 10 {
			break
		}
	}
	want := [][]string{
		{"f", "-inf", "a", "1"},
		{"b", "2", "c", "2", "d", "2"},
		{"e", "3", "g", "inf"},
	}
	if len(calls) != len(want) {
		t.Fatalf("calls %q, want %q", calls, want)
	}
	for i := range want {
		if strings.Join(calls[i], " ") != strings.Join(want[i], " ") {
			t.Fatalf("call %d: %q, want %q", i, calls[i], want[i])
		}
	}
}
