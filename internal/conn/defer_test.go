package conn_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// distinctList fills key with n elements of 100 bytes, each different,
// and returns LRANGE key 0 -1's reply.
func distinctList(t *testing.T, c *servertest.Conn, key string, n int) []byte {
	t.Helper()
	args := []string{"RPUSH", key}
	want := []byte(fmt.Sprintf("*%d\r\n", n))
	for i := range n {
		v := fmt.Sprintf("%-100s", "e"+strconv.Itoa(i))
		args = append(args, v)
		want = append(want, fmt.Sprintf("$100\r\n%s\r\n", v)...)
	}
	if r := c.Do(args...); r != fmt.Sprintf(":%d\r\n", n) {
		t.Fatalf("RPUSH: %q", r)
	}
	return want
}

// The large replies of a client that does not read are queued as the
// list's bytes and encoded as it reads them (client.deferReply): they
// count whole in omem at once, and what the client finally reads is the
// list as it was when each LRANGE ran, however the list was changed or
// deleted meanwhile.
func TestDeferredRepliesKeepTheirBytes(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		admin := inst.Raw(t)
		defer setLimit(t, admin, "normal 256mb 0 0")()
		want := distinctList(t, admin, "d", 5000) // about 540 KB
		slow := inst.Raw(t)
		id := clientID(t, slow)
		const n = 60
		req := bytes.Repeat(servertest.Encode("LRANGE", "d", "0", "-1"), n)
		req = append(req, servertest.Cat([]string{"MULTI"}, []string{"LRANGE", "d", "0", "-1"}, []string{"PING"}, []string{"EXEC"},
			[]string{"CLIENT", "SETNAME", "ran"})...)
		slow.Write(req)
		eventually(t, "the pipeline run", func() bool {
			v, _ := clientField(t, admin, id, "name")
			return v == "ran"
		})
		if v, _ := clientField(t, admin, id, "omem"); len(v) < len("10000000") {
			t.Fatalf("omem=%s with %d replies of %d bytes queued", v, n, len(want))
		}
		for _, cmd := range [][]string{
			{"LSET", "d", "0", "changed"}, {"LSET", "d", "2500", "changed too"},
			{"LINSERT", "d", "BEFORE", fmt.Sprintf("%-100s", "e7"), "inserted"},
			{"LREM", "d", "0", fmt.Sprintf("%-100s", "e9")}, {"LTRIM", "d", "3", "-3"},
			{"LPOP", "d", "10"}, {"RPUSH", "d", "more"}, {"DEL", "d"},
		} {
			admin.Do(cmd...)
		}
		for i := range n {
			if r := slow.Read(); r != string(want) {
				t.Fatalf("reply %d: %d bytes differing from the list as it was (%d bytes)", i, len(r), len(want))
			}
		}
		// A deferred reply inside EXEC's stays in its place.
		for _, w := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n" + string(want) + "+PONG\r\n", "+OK\r\n"} {
			if r := slow.Read(); r != w {
				t.Fatalf("after the replies: %d bytes, want %d", len(r), len(w))
			}
		}
		if d := inst.Srv.DeferredReplies(); d == 0 {
			t.Fatal("no reply was deferred to the queue")
		}
	})
}

// A client that does not read is closed by its limit as before, and the
// largest output it had stays within the limit, Redis's 16 KB buffer and
// one reply (what the replies built in full reach too): a deferred reply
// that would pass the limit is built instead, and dropped as it passes
// it.
func TestDeferredRepliesLimit(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		admin := inst.Raw(t)
		defer setLimit(t, admin, "normal 16mb 0 0")()
		one := len(distinctList(t, admin, "d", 5000))
		bad := inst.Raw(t)
		id := clientID(t, bad)
		bad.Write(bytes.Repeat(servertest.Encode("LRANGE", "d", "0", "-1"), 200))
		waitGone(t, admin, id, "the client over its hard limit closed")
		if r := admin.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING: %q", r)
		}
		peak := inst.Srv.RecentMaxOutputBuffer()
		if peak < 16<<20 || peak > int64(16<<20+16<<10+one) {
			t.Errorf("largest output %d bytes, want the 16 MB limit plus at most 16 KB and one reply", peak)
		}
		if d := inst.Srv.DeferredReplies(); d == 0 {
			t.Fatal("no reply was deferred to the queue")
		}
		if !strings.Contains(inst.Logs.String(), "overcoming of output buffer limits") {
			t.Error("no log line for the closed client")
		}
	})
}

// A loop client with an output limit has its first large reply queued
// unencoded, before its socket has stopped taking replies: a client that
// pipelines large replies and does not read had each of the first few
// (what the kernel takes, several MB) built on the event loop. Without a
// limit, or off the loop, the reply is built as before. Either way the
// client reads the same bytes, in order with the replies around it.
func TestFirstLargeReplyDeferred(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		admin := inst.Raw(t)
		want := distinctList(t, admin, "d", 5000) // about 540 KB
		loop := !strings.Contains(t.Name(), "io-event-loop=no")
		for _, limit := range []string{"normal 64mb 16mb 10", "normal 0 0 0"} {
			setLimit(t, admin, limit)
			before := inst.Srv.DeferredReplies()
			c := inst.Raw(t)
			if r := c.Do("PING"); r != "+PONG\r\n" {
				t.Fatalf("PING: %q", r)
			}
			// The batch's first reply: no reply of the batch is queued
			// ahead of the batch's AOF write (client.deferReply).
			c.Write(servertest.Cat([]string{"LRANGE", "d", "0", "-1"}, []string{"ECHO", "after"}))
			for _, w := range []string{string(want), "$5\r\nafter\r\n"} {
				if r := c.Read(); r != w {
					t.Fatalf("limit %q: read %d bytes, want %d", limit, len(r), len(w))
				}
			}
			deferred := inst.Srv.DeferredReplies() - before
			if wantDeferred := loop && limit != "normal 0 0 0"; deferred != map[bool]int64{true: 1, false: 0}[wantDeferred] {
				t.Errorf("limit %q: %d replies deferred, want one only on the loop with a limit", limit, deferred)
			}
			// The client goes on being answered through its queue.
			if r := c.Do("ECHO", "again"); r != "$5\r\nagain\r\n" {
				t.Fatalf("limit %q: ECHO: %q", limit, r)
			}
		}
	})
}
