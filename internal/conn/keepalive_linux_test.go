package conn_test

import (
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/abacusdb/abacus/internal/servertest"
)

// tcp-keepalive sets SO_KEEPALIVE on accepted sockets, and 0 turns it off
// (Go's listener would leave it on). The test reads the option from the
// server's own descriptor (CLIENT INFO fd=), in this same process.
func TestTCPKeepalive(t *testing.T) {
	for _, tc := range []struct {
		ka, loop string
		want     int
	}{{"0", "yes", 0}, {"300", "yes", 1}, {"0", "no", 0}, {"300", "no", 1}} {
		inst := servertest.Start(t, servertest.WithConfig("tcp-keepalive", tc.ka, "io-event-loop", tc.loop))
		c := inst.Raw(t)
		m := regexp.MustCompile(` fd=(\d+) `).FindStringSubmatch(c.Do("CLIENT", "INFO"))
		if m == nil {
			t.Fatal("no fd= in CLIENT INFO")
		}
		fd, _ := strconv.Atoi(m[1])
		got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		if err != nil {
			t.Fatalf("getsockopt: %v", err)
		}
		if got != tc.want {
			t.Errorf("tcp-keepalive %s (io-event-loop %s): SO_KEEPALIVE %d, want %d", tc.ka, tc.loop, got, tc.want)
		}
	}
}
