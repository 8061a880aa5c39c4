package conn_test

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// One subscriber stops reading while a publisher sends 100 MB on its
// channel: with Redis's default pubsub limit (32mb 8mb 60) it is closed
// at the hard limit, the server's memory stays near that limit, and the
// subscribers that read get every message in order. The same attack on
// redis-server closes its slow subscriber too.
func TestSlowSubscriber(t *testing.T) {
	const msgs, size = 1000, 100 << 10
	attack := func(t *testing.T, addr, pid string) (grew int64) {
		slow := servertest.Dial(t, addr)
		if r := slow.Do("SUBSCRIBE", "feed"); !strings.HasPrefix(r, "*3") {
			t.Fatalf("SUBSCRIBE: %q", r)
		}
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i := range counts {
			c := servertest.Dial(t, addr)
			if r := c.Do("SUBSCRIBE", "feed"); !strings.HasPrefix(r, "*3") {
				t.Fatalf("SUBSCRIBE: %q", r)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReaderSize(c.C, 1<<20)
				c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
				for counts[i] < msgs {
					v, err := servertest.ReadValue(r)
					if err != nil {
						return
					}
					if len(v.Items) != 3 || v.Items[0].Str != "message" || len(v.Items[2].Str) != size || v.Items[2].Str[:8] != msgTag(counts[i]) {
						return // out of order or torn: the count stops short
					}
					counts[i]++
				}
			}()
		}
		base := resetPeak(t, pid)
		pub := servertest.Dial(t, addr)
		payload := make([]byte, size)
		for i := 0; i < msgs; i++ {
			copy(payload, msgTag(i))
			if r := pub.Do("PUBLISH", "feed", string(payload)); r != ":3\r\n" && r != ":2\r\n" {
				t.Fatalf("PUBLISH %d: %q", i, r)
			}
		}
		wg.Wait()
		for i, n := range counts {
			if n != msgs {
				t.Errorf("reading subscriber %d got %d of %d messages in order", i, n, msgs)
			}
		}
		// The slow subscriber was closed: it reads what the kernel held,
		// then the end of the connection, well short of 100 MB.
		slow.C.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := io.Copy(io.Discard, slow.R)
		if err != nil {
			t.Errorf("the slow subscriber was not closed: %v after %d bytes", err, n)
		}
		if n >= int64(msgs*size) {
			t.Errorf("the slow subscriber received all %d bytes: not closed at its limit", n)
		}
		return procKB(t, pid, "VmHWM") - base
	}
	t.Run("redis", func(t *testing.T) {
		r := servertest.PrivateRedis(t)
		t.Logf("redis-server: peak resident size grew %d MB", attack(t, r.Addr, itoa(r.Pid()))>>20)
	})
	inst := servertest.Start(t)
	grew := attack(t, inst.Addr, "self")
	t.Logf("abacus (and the test's clients): peak resident size grew %d MB", grew>>20)
	// Without the limit the slow subscriber's queue alone would hold
	// 100 MB; with it, at most 32 MB plus a message, beside the test's own
	// readers' buffers and garbage the collector has not yet reclaimed.
	if grew > 200<<20 {
		t.Errorf("peak resident size grew %d MB", grew>>20)
	}
	if !strings.Contains(inst.Logs.String(), "scheduled to be closed ASAP for overcoming of output buffer limits.") {
		t.Errorf("no log line for the closed subscriber")
	}
	admin := inst.Raw(t)
	info := admin.Do("INFO", "stats")
	if !strings.Contains(info, "client_output_buffer_limit_disconnections:1\r\n") {
		t.Errorf("INFO stats does not count the disconnection:\n%s", info)
	}
}

// msgTag is the first 8 bytes of message i.
func msgTag(i int) string {
	s := "m" + itoa(i)
	return s + strings.Repeat(".", 8-len(s))
}
