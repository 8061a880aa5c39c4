package conn_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The event loop's handoffs (loop_linux.go): what the loop cannot do
// without holding up the other clients moves the client to a goroutine,
// which must go on exactly where the loop stopped. Each test runs with
// one loop that polls for 50 µs before it sleeps (io-event-loop-spin-us
// 50), two loops (io-threads 2), one loop that sleeps as soon as it is
// idle (io-event-loop-spin-us 0, the default) and none: the
// goroutine-per-connection path stays covered.

func bothModes(t *testing.T, f func(t *testing.T, inst *servertest.Instance)) {
	bothModesWith(t, nil, f)
}

// bothModesWith is bothModes with more configuration for every mode.
func bothModesWith(t *testing.T, extra []string, f func(t *testing.T, inst *servertest.Instance)) {
	for _, mode := range [][]string{
		{"io-event-loop", "yes", "io-event-loop-spin-us", "50"},
		{"io-event-loop", "yes", "io-threads", "2"},
		{"io-event-loop", "yes", "io-event-loop-spin-us", "0"},
		{"io-event-loop", "no"},
	} {
		t.Run(strings.Join(mode, "="), func(t *testing.T) {
			f(t, servertest.Start(t, servertest.WithConfig(append(mode, extra...)...)))
		})
	}
}

// A reply larger than the socket takes, to a client that does not read
// yet: the other clients are served meanwhile, and the slow client gets
// every byte in order, then the rest of its pipeline, then more.
func TestLoopLargeReplyToSlowReader(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		other := inst.Raw(t)
		big := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
		if r := other.Do("SET", "big", big); r != "+OK\r\n" {
			t.Fatalf("SET big: %q", r)
		}
		slow := inst.Raw(t)
		slow.Write(append(servertest.Encode("GET", "big"), servertest.Encode("ECHO", "after")...))
		// The slow client reads nothing yet; another client is not held up.
		for i := 0; i < 50; i++ {
			v := fmt.Sprint(i)
			if r := other.Do("SET", "k", v); r != "+OK\r\n" {
				t.Fatalf("SET while a reply waits: %q", r)
			}
			if r := other.Do("GET", "k"); r != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
				t.Fatalf("GET while a reply waits: %q", r)
			}
		}
		want := fmt.Sprintf("$%d\r\n%s\r\n", len(big), big) + "$5\r\nafter\r\n"
		slow.C.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, len(want))
		if _, err := io.ReadFull(slow.R, got); err != nil {
			t.Fatalf("reading the large reply: %v", err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Fatalf("large reply differs (len %d, want %d)", len(got), len(want))
		}
		if r := slow.Do("ECHO", "more"); r != "$4\r\nmore\r\n" {
			t.Fatalf("after the large reply: %q", r)
		}
	})
}

// A blocking command in the middle of a pipeline parks the client; the
// commands after it run once the wait is over, in order.
func TestLoopBlockedInPipeline(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		a, b := inst.Raw(t), inst.Raw(t)
		var req []byte
		req = append(req, servertest.Encode("ECHO", "before")...)
		req = append(req, servertest.Encode("BLPOP", "q", "0")...)
		req = append(req, servertest.Encode("RPUSH", "q", "again")...)
		req = append(req, servertest.Encode("LPOP", "q")...)
		a.Write(req)
		if r := a.Read(); r != "$6\r\nbefore\r\n" {
			t.Fatalf("before the block: %q", r)
		}
		waitBlocked(t, b, 1)
		if r := b.Do("RPUSH", "q", "x"); r != ":1\r\n" {
			t.Fatalf("RPUSH: %q", r)
		}
		for _, want := range []string{"*2\r\n$1\r\nq\r\n$1\r\nx\r\n", ":1\r\n", "$5\r\nagain\r\n"} {
			if r := a.Read(); r != want {
				t.Fatalf("after the wake-up: %q, want %q", r, want)
			}
		}
		if r := a.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING after: %q", r)
		}
	})
}

// waitBlocked waits until n clients are blocked (INFO clients).
func waitBlocked(t *testing.T, c *servertest.Conn, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	for i := 0; ; i++ {
		if strings.Contains(c.Do("INFO", "clients"), want) {
			return
		}
		if i > 2000 {
			t.Fatalf("never %d blocked clients", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// CLIENT PAUSE WRITE holds a write in the middle of a pipeline; the reads
// before it are answered at once, the write and what follows after
// CLIENT UNPAUSE.
func TestLoopPausedInPipeline(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		a, admin := inst.Raw(t), inst.Raw(t)
		if r := admin.Do("CLIENT", "PAUSE", "100000", "WRITE"); r != "+OK\r\n" {
			t.Fatalf("CLIENT PAUSE: %q", r)
		}
		var req []byte
		req = append(req, servertest.Encode("ECHO", "read")...)
		req = append(req, servertest.Encode("SET", "p", "1")...)
		req = append(req, servertest.Encode("GET", "p")...)
		a.Write(req)
		if r := a.Read(); r != "$4\r\nread\r\n" {
			t.Fatalf("read before the paused write: %q", r)
		}
		if r := admin.Do("EXISTS", "p"); r != ":0\r\n" {
			t.Fatalf("the paused SET ran: %q", r)
		}
		if r := admin.Do("CLIENT", "UNPAUSE"); r != "+OK\r\n" {
			t.Fatalf("CLIENT UNPAUSE: %q", r)
		}
		if r := a.Read(); r != "+OK\r\n" {
			t.Fatalf("SET after unpause: %q", r)
		}
		if r := a.Read(); r != "$1\r\n1\r\n" {
			t.Fatalf("GET after unpause: %q", r)
		}
	})
}

// Many clients at once, each pipelining: every reply reaches its own
// client in order (the loop serves them all from one goroutine).
func TestLoopManyClients(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		const clients, per = 40, 50
		conns := make([]*servertest.Conn, clients)
		for i := range conns {
			conns[i] = inst.Raw(t)
		}
		for round := 0; round < 3; round++ {
			for i, c := range conns {
				var req []byte
				for j := 0; j < per; j++ {
					req = append(req, servertest.Encode("INCR", fmt.Sprintf("c%d", i))...)
				}
				c.Write(req)
			}
			for i, c := range conns {
				for j := 0; j < per; j++ {
					want := fmt.Sprintf(":%d\r\n", round*per+j+1)
					if r := c.Read(); r != want {
						t.Fatalf("client %d round %d reply %d: %q, want %q", i, round, j, r, want)
					}
				}
			}
		}
	})
}

// CLIENT KILL closes a loop client at once: it is gone from CLIENT LIST
// and its socket closes.
func TestLoopClientKill(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		admin, victim := inst.Raw(t), inst.Raw(t)
		id := strings.TrimSuffix(strings.TrimPrefix(victim.Do("CLIENT", "ID"), ":"), "\r\n")
		if r := admin.Do("CLIENT", "KILL", "ID", id); r != ":1\r\n" {
			t.Fatalf("CLIENT KILL: %q", r)
		}
		victim.ExpectClosed()
		if list := admin.Do("CLIENT", "LIST"); strings.Contains(list, "id="+id+" ") {
			t.Fatalf("killed client still listed: %s", list)
		}
	})
}

// A loop writes the replies of a round after running every ready client's
// commands (client.deferWrite). A MONITOR client that pipelines commands
// while another client writes gets its own replies in order and a monitor
// line for every command in order, none lost, doubled or cut into: the
// other client's lines go through its pushed-output queue, its replies
// through the deferred write, and the two must not interleave.
func TestLoopDeferredRepliesAndPushes(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		mon, other := inst.Raw(t), inst.Raw(t)
		if r := mon.Do("MONITOR"); r != "+OK\r\n" {
			t.Fatalf("MONITOR: %q", r)
		}
		const n = 300
		done := make(chan string, 1)
		go func() {
			for i := 0; i < n; i++ {
				if r := other.Do("SET", "k", fmt.Sprint("s", i)); r != "+OK\r\n" {
					done <- fmt.Sprintf("SET %d: %q", i, r)
					return
				}
			}
			done <- ""
		}()
		var req []byte
		for i := 0; i < n; i++ {
			req = append(req, servertest.Encode("ECHO", fmt.Sprint("e", i))...)
		}
		mon.Write(req)
		echo, setLine, echoLine := 0, 0, 0
		for echo < n || setLine < n || echoLine < n {
			r := mon.Read()
			switch {
			case strings.HasPrefix(r, "+") && strings.Contains(r, `] "SET" "k" `):
				if want := fmt.Sprintf(`] "SET" "k" "s%d"`+"\r\n", setLine); !strings.HasSuffix(r, want) {
					t.Fatalf("monitor line %d of SET: %q, want ...%q", setLine, r, want)
				}
				setLine++
			case strings.HasPrefix(r, "+") && strings.Contains(r, `] "ECHO" `):
				if want := fmt.Sprintf(`] "ECHO" "e%d"`+"\r\n", echoLine); !strings.HasSuffix(r, want) {
					t.Fatalf("monitor line %d of ECHO: %q, want ...%q", echoLine, r, want)
				}
				echoLine++
			default:
				want := fmt.Sprintf("$%d\r\ne%d\r\n", len(fmt.Sprint("e", echo)), echo)
				if r != want {
					t.Fatalf("reply %d: %q, want %q", echo, r, want)
				}
				echo++
			}
		}
		if err := <-done; err != "" {
			t.Fatal(err)
		}
	})
}

// A script that never ends, started by one client: the others, on the
// script's loop and on the other (io-threads 2), get BUSY once the script
// is busy, and one of them kills it; then everybody is served as before.
// The busy server is woken by the script's start, not by a timer.
func TestLoopBusyScript(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		if r := inst.Raw(t).Do("CONFIG", "SET", "busy-reply-threshold", "20"); r != "+OK\r\n" {
			t.Fatalf("CONFIG SET: %q", r)
		}
		a := inst.Raw(t)
		others := []*servertest.Conn{inst.Raw(t), inst.Raw(t), inst.Raw(t)}
		for round := 0; round < 2; round++ {
			a.Write(servertest.Encode("EVAL", "while true do end", "0"))
			for !inst.Srv.Env.ScriptRunning() {
				time.Sleep(time.Millisecond)
			}
			busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
			for i, b := range others {
				if r := b.Do("GET", "x"); r != busy {
					t.Fatalf("round %d, client %d: %q, want BUSY", round, i, r)
				}
			}
			if r := others[round].Do("SCRIPT", "KILL"); r != "+OK\r\n" {
				t.Fatalf("SCRIPT KILL: %q", r)
			}
			if r := a.Read(); !strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL...") {
				t.Fatalf("the script's client got %q", r)
			}
			for i, b := range append(others, a) {
				if r := b.Do("PING"); r != "+PONG\r\n" {
					t.Fatalf("round %d, client %d after the kill: %q", round, i, r)
				}
			}
		}
	})
}
