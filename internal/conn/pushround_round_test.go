package conn_test

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// pushModes are the servers the gathering is tested on: an event loop, a
// goroutine per client, and the event loop with the AOF on.
var pushModes = []struct{ name, loop, aof string }{
	{"loop", "yes", "no"}, {"goroutines", "no", "no"}, {"loop-aof", "yes", "yes"},
}

// twoSubscribers starts a server of the mode with a RESP2 and a RESP3
// client subscribed to "ch".
func twoSubscribers(t *testing.T, mode struct{ name, loop, aof string }) (inst *servertest.Instance, resp2, resp3 *servertest.Conn) {
	inst = servertest.Start(t, servertest.WithConfig("dir", t.TempDir(), "io-event-loop", mode.loop, "appendonly", mode.aof))
	resp2 = inst.Raw(t)
	resp2.Do("SUBSCRIBE", "ch")
	resp3 = inst.Raw(t)
	resp3.Do("HELLO", "3")
	resp3.Do("SUBSCRIBE", "ch")
	return inst, resp2, resp3
}

// readMessages reads n replies from c and returns them.
func readMessages(c *servertest.Conn, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, c.Read())
	}
	return out
}

// messagePayload is a message frame's last element ("" for another
// reply).
func messagePayload(frame string) string {
	if !strings.HasPrefix(frame, "*3\r\n$7\r\nmessage\r\n") && !strings.HasPrefix(frame, ">3\r\n$7\r\nmessage\r\n") {
		return ""
	}
	parts := strings.Split(frame, "\r\n")
	return parts[len(parts)-2]
}

// checkPublisherOrder fails unless the messages of each publisher
// ("p<i>-<j>") arrive in j's order, from first on, per of them each.
func checkPublisherOrder(t *testing.T, who string, frames []string, pubs, first, per int) {
	t.Helper()
	next := make([]int, pubs)
	for i := range next {
		next[i] = first
	}
	for _, f := range frames {
		m := messagePayload(f)
		if !strings.HasPrefix(m, "p") {
			continue
		}
		i, j, _ := strings.Cut(m[1:], "-")
		pi, _ := strconv.Atoi(i)
		pj, _ := strconv.Atoi(j)
		if pj != next[pi] {
			t.Fatalf("%s: message %s after p%d-%d", who, m, pi, next[pi]-1)
		}
		next[pi]++
	}
	for i, n := range next {
		if n != first+per {
			t.Fatalf("%s: %d messages of publisher %d, want %d", who, n-first, i, per)
		}
	}
}

// Messages several publishers push in one event-loop round are gathered
// until the round ends (pushround.go): each subscriber still gets every
// publisher's messages in its order, a subscriber's own PUBLISH's message
// before that PUBLISH's reply, and everything published before a
// command's reply that was published before the command was sent; with
// the AOF on as well, and with a goroutine per client.
func TestRoundGatheredPushesOrder(t *testing.T) {
	for _, mode := range pushModes {
		t.Run(mode.name, func(t *testing.T) {
			inst, resp2, resp3 := twoSubscribers(t, mode)
			const pubs, per = 8, 16
			var conns []*servertest.Conn
			for i := 0; i < pubs; i++ {
				conns = append(conns, inst.Raw(t))
			}
			for round := 0; round < 3; round++ {
				for i, c := range conns {
					var cmds [][]string
					for j := 0; j < per; j++ {
						cmds = append(cmds, []string{"PUBLISH", "ch", "p" + strconv.Itoa(i) + "-" + strconv.Itoa(round*per+j)})
					}
					c.Write(servertest.Cat(cmds...))
				}
				// The RESP3 subscriber publishes to itself among them.
				resp3.Write(servertest.Cat([]string{"PING"}, []string{"PUBLISH", "ch", "self"}))
				for _, c := range conns {
					for j := 0; j < per; j++ {
						servertest.ExpectReply(t, c.Read(), ":2\r\n")
					}
				}
				// The RESP3 subscriber's PUBLISH has run too once it has
				// its reply.
				want := pubs*per + 1
				var got3 []string
				for len(got3) == 0 || got3[len(got3)-1] != ":2\r\n" {
					got3 = append(got3, resp3.Read())
				}
				got3 = append(got3, readMessages(resp3, want+2-len(got3))...)
				// Every publisher has its replies: a command sent now is
				// answered after all their messages.
				resp2.Write(servertest.Encode("PING"))
				resp3.Write(servertest.Encode("PING"))
				got2 := readMessages(resp2, want+1)
				got3 = append(got3, resp3.Read())
				servertest.ExpectReply(t, got2[want], "*2\r\n$4\r\npong\r\n$0\r\n\r\n")
				servertest.ExpectReply(t, got3[want+2], "+PONG\r\n")
				var mine []string
				for _, f := range got3 {
					if messagePayload(f) == "self" || !strings.HasPrefix(f, ">") {
						mine = append(mine, f)
					}
				}
				if len(mine) != 4 || mine[0] != "+PONG\r\n" || messagePayload(mine[1]) != "self" || mine[2] != ":2\r\n" {
					t.Fatalf("RESP3 subscriber's own replies and message: %q", mine)
				}
				checkPublisherOrder(t, "resp2", got2[:want], pubs, round*per, per)
				checkPublisherOrder(t, "resp3", got3[:want+2], pubs, round*per, per)
				// Both see the messages in the one order they were
				// published in, the RESP3 subscriber's own included.
				var seq2, seq3 []string
				for _, f := range got2[:want] {
					seq2 = append(seq2, messagePayload(f))
				}
				for _, f := range got3[:want+2] {
					if m := messagePayload(f); m != "" {
						seq3 = append(seq3, m)
					}
				}
				if strings.Join(seq2, ",") != strings.Join(seq3, ",") {
					t.Fatalf("subscribers saw different orders:\n%v\n%v", seq2, seq3)
				}
			}
		})
	}
}

// A message published before the write that wakes a subscriber's
// blocking command comes before that command's reply, though the loop
// has not moved it to the subscriber's output yet when the parked
// client takes its reply (waitBlocked moves it first).
func TestRoundGatheredPushesBeforeBlockedReply(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	sub := inst.Raw(t)
	sub.Do("HELLO", "3")
	sub.Do("SUBSCRIBE", "ch")
	sub.Write(servertest.Encode("BLPOP", "list", "0"))
	other := inst.Raw(t)
	for servertest.InfoField(other.Do("INFO", "clients"), "blocked_clients") != "1" {
	}
	for i := 0; i < 5; i++ {
		// The sleep holds the batch after the wake-up, so that the
		// woken client may take the server lock before the loop's round
		// ends.
		other.Write(servertest.Cat([]string{"PUBLISH", "ch", "m" + strconv.Itoa(i)}, []string{"LPUSH", "list", "v"}, []string{"DEBUG", "SLEEP", "0.01"}))
		servertest.ExpectReply(t, other.Read(), ":1\r\n")
		servertest.ExpectReply(t, other.Read(), ":1\r\n")
		servertest.ExpectReply(t, other.Read(), "+OK\r\n")
		servertest.ExpectReply(t, sub.Read(), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm"+strconv.Itoa(i)+"\r\n")
		servertest.ExpectReply(t, sub.Read(), "*2\r\n$4\r\nlist\r\n$1\r\nv\r\n")
		sub.Write(servertest.Encode("BLPOP", "list", "0"))
		for servertest.InfoField(other.Do("INFO", "clients"), "blocked_clients") != "1" {
		}
	}
}

// A subscriber that does not read is closed by its pubsub limit while
// many publishers' batches in the same rounds push to it: the limit is
// checked as each message is gathered, so its unread output stays near
// the limit rather than at a round's size.
func TestRoundGatheredPushesLimit(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("client-output-buffer-limit", "pubsub 1mb 0 0"))
	slow := inst.Raw(t)
	slow.Do("SUBSCRIBE", "feed")
	const pubs, per, size = 20, 10, 100 << 10
	var cmds [][]string
	for j := 0; j < per; j++ {
		cmds = append(cmds, []string{"PUBLISH", "feed", strings.Repeat("x", size)})
	}
	batch := servertest.Cat(cmds...)
	var conns []*servertest.Conn
	for i := 0; i < pubs; i++ {
		conns = append(conns, inst.Raw(t))
	}
	for _, c := range conns {
		c.Write(batch)
	}
	for _, c := range conns {
		for j := 0; j < per; j++ {
			if r := c.Read(); r != ":1\r\n" && r != ":0\r\n" {
				t.Fatalf("PUBLISH: %q", r)
			}
		}
	}
	// What its socket took before the limit closed it is there first.
	slow.C.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, slow.R); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("slow subscriber not closed: %v", err)
	}
	info := inst.Raw(t).Do("INFO", "everything")
	if v := servertest.InfoField(info, "client_output_buffer_limit_disconnections"); v != "1" {
		t.Errorf("disconnections %s, want 1", v)
	}
	peak, _ := strconv.Atoi(servertest.InfoField(info, "client_recent_max_output_buffer"))
	// The limit, Redis's uncounted 16 KB, and the message that passed it.
	if peak > 1<<20+16<<10+size+1024 {
		t.Errorf("recent peak output %d: the limit was not checked as messages were gathered", peak)
	}
}
