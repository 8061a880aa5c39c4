package conn_test

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// A command of engine.PrepareArgs arguments or more, whole in one write
// or arriving in pieces (the loop hands its client to a goroutine as soon
// as the count is read), runs once, and the client goes on being served
// with its pipeline in order, in both serving modes.
func TestLargeCommandOffLoop(t *testing.T) {
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		n := engine.PrepareArgs + 500
		args := []string{"RPUSH", "l"}
		for i := 0; i < n; i++ {
			args = append(args, strconv.Itoa(i))
		}
		big := servertest.Encode(args...)
		other := inst.Raw(t)
		for round, pieces := range []int{1, 7, 300} {
			c := inst.Raw(t)
			req := append(append(servertest.Encode("DEL", "l"), big...), servertest.Encode("LLEN", "l")...)
			step := (len(req) + pieces - 1) / pieces
			for at := 0; at < len(req); at += step {
				c.Write(req[at:min(at+step, len(req))])
				if r := other.Do("PING"); r != "+PONG\r\n" {
					t.Fatalf("round %d: PING meanwhile: %q", round, r)
				}
			}
			want := []string{":" + strconv.Itoa(min(round, 1)) + "\r\n", ":" + strconv.Itoa(n) + "\r\n", ":" + strconv.Itoa(n) + "\r\n"}
			for i, w := range want {
				if r := c.Read(); r != w {
					t.Fatalf("round %d (%d pieces) reply %d: %q, want %q", round, pieces, i, r, w)
				}
			}
			if r := c.Do("LINDEX", "l", "-1"); r != "$"+strconv.Itoa(len(strconv.Itoa(n-1)))+"\r\n"+strconv.Itoa(n-1)+"\r\n" {
				t.Fatalf("round %d: LINDEX -1: %q", round, r)
			}
		}
	})
}

// Large commands that come whole, behind other commands and each other in
// one pipelined write, are each the first of a batch of their own and
// are prepared from the input in place (prepareWhole), not from argument
// slices: a batch never collects a large command's arguments behind
// another's. The replies come in order and the lists are whole.
func TestLargeCommandsPipelinedWhole(t *testing.T) {
	bothModesWith(t, []string{"enable-debug-command", "yes"}, func(t *testing.T, inst *servertest.Instance) {
		push := func(key string, n int) []byte {
			args := []string{"RPUSH", key}
			for i := 0; i < n; i++ {
				args = append(args, strconv.Itoa(i))
			}
			return servertest.Encode(args...)
		}
		n1, n2 := engine.PrepareArgs+500, engine.PrepareArgs+3
		var req []byte
		req = append(req, servertest.Encode("SET", "a", "1")...)
		req = append(req, push("l", n1)...)
		req = append(req, push("m", n2)...)
		req = append(req, servertest.Encode("LLEN", "l")...)
		req = append(req, push("l", n2)...)
		req = append(req, servertest.Encode("LLEN", "m")...)
		c := inst.Raw(t)
		// An MSET of 500 KB first grows the client's input buffer, which
		// is kept from one batch to the next up to 1 MB; then, while the
		// server sleeps on the connection's DEBUG SLEEP, the large
		// commands arrive, to be read at once, whole, before any parse
		// looks at them (on the client's goroutine; the loop reads 64 KB
		// at a time and hands the client over at the first large one).
		mset := []string{"MSET"}
		for i := 0; i < 20000; i++ {
			mset = append(mset, "k"+strconv.Itoa(100000+i), "v"+strconv.Itoa(i))
		}
		if r := c.Do(mset...); r != "+OK\r\n" {
			t.Fatalf("MSET: %q", r)
		}
		before := conn.WholePrepared()
		c.Write(servertest.Encode("DEBUG", "SLEEP", "0.2"))
		c.Write(req)
		if r := c.Read(); r != "+OK\r\n" {
			t.Fatalf("DEBUG SLEEP: %q", r)
		}
		want := []string{"+OK\r\n", ":" + strconv.Itoa(n1) + "\r\n", ":" + strconv.Itoa(n2) + "\r\n",
			":" + strconv.Itoa(n1) + "\r\n", ":" + strconv.Itoa(n1+n2) + "\r\n", ":" + strconv.Itoa(n2) + "\r\n"}
		for i, w := range want {
			if r := c.Read(); r != w {
				t.Fatalf("reply %d: %q, want %q", i, r, w)
			}
		}
		if got := conn.WholePrepared() - before; got != 3 {
			t.Fatalf("%d of the 3 large commands prepared from the input in place", got)
		}
		if r := c.Do("LINDEX", "l", strconv.Itoa(n1)); r != "$1\r\n0\r\n" {
			t.Fatalf("LINDEX at the second push's start: %q", r)
		}
	})
}
