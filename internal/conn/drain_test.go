package conn_test

import (
	"bufio"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Subscribers' output written by the event loop at the end of its round
// (outQueue.drain) keeps every stream's order: RESP2 subscribers and a
// RESP3 one that runs commands meanwhile (its replies join the same
// queue) get every message of several pipelining publishers in each
// publisher's order, and the RESP3 client its replies in order.
func TestLoopDrainKeepsOrder(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("io-event-loop", "yes"))
	const pubs, perPub, depth = 4, 500, 16
	subs := make([]*servertest.Conn, 3)
	for i := range subs {
		subs[i] = inst.Raw(t)
	}
	mixed := inst.Raw(t)
	mixed.Do("HELLO", "3")
	for _, c := range append(subs, mixed) {
		c.Do("SUBSCRIBE", "drain")
	}
	check := func(name string, r *bufio.Reader, pings int) error {
		next := make([]int, pubs)
		ping := 0
		for got := 0; got < pubs*perPub; {
			v, err := servertest.ReadValue(r)
			if err != nil {
				return fmt.Errorf("%s after %d messages: %v", name, got, err)
			}
			if v.Kind == '$' {
				if want := strconv.Itoa(ping); v.Str != want {
					return fmt.Errorf("%s: reply %q, want %q", name, v.Str, want)
				}
				ping++
				continue
			}
			if len(v.Items) != 3 || v.Items[0].Str != "message" {
				return fmt.Errorf("%s: frame %+v", name, v)
			}
			var p, i int
			if _, err := fmt.Sscanf(v.Items[2].Str, "%d:%d", &p, &i); err != nil || p >= pubs || i != next[p] {
				return fmt.Errorf("%s: message %q, want %d:%d", name, v.Items[2].Str, p, next[p])
			}
			next[p]++
			got++
		}
		for ping < pings {
			v, err := servertest.ReadValue(r)
			if err != nil || v.Str != strconv.Itoa(ping) {
				return fmt.Errorf("%s: reply %d: %+v %v", name, ping, v, err)
			}
			ping++
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(subs)+1+pubs)
	for i, c := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
			errs <- check(fmt.Sprintf("subscriber %d", i), bufio.NewReader(c.C), 0)
		}()
	}
	const pings = 200
	wg.Add(1)
	go func() {
		defer wg.Done()
		mixed.C.SetReadDeadline(time.Now().Add(60 * time.Second))
		errs <- check("RESP3 subscriber", bufio.NewReader(mixed.C), pings)
	}()
	go func() {
		for i := 0; i < pings; i++ {
			if _, err := mixed.C.Write(servertest.Encode("ECHO", strconv.Itoa(i))); err != nil {
				return
			}
		}
	}()
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := inst.Raw(t)
			r := bufio.NewReader(c.C)
			c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
			for i := 0; i < perPub; i += depth {
				var cmds [][]string
				for j := i; j < i+depth && j < perPub; j++ {
					cmds = append(cmds, []string{"PUBLISH", "drain", fmt.Sprintf("%d:%d", p, j)})
				}
				if _, err := c.C.Write(servertest.Cat(cmds...)); err != nil {
					errs <- err
					return
				}
				for range cmds {
					if v, err := servertest.ReadValue(r); err != nil || v.Str != "4" {
						errs <- fmt.Errorf("publisher %d: PUBLISH reply %+v %v", p, v, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
