package conn_test

import (
	"strconv"
	"testing"

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
