package conn_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A browser tricked into posting to the server sends HTTP lines that would
// run as inline commands: "POST" or "Host:" as a command closes the
// connection before anything after it runs, authenticated or not, in
// MULTI or not, and the warning is logged, as in redis-server.
func TestCrossProtocolScripting(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	cases := []string{
		"POST / HTTP/1.1\r\nHost: x\r\n\r\nSET xss_pwned 1\r\n",
		"Host: x\r\nSET xss_pwned 1\r\n",
		"host:\r\nSET xss_pwned 1\r\n",
		"post\r\nSET xss_pwned 1\r\n",
		"*1\r\n$4\r\nPOST\r\n*3\r\n$3\r\nSET\r\n$9\r\nxss_pwned\r\n$1\r\n1\r\n",
		"*2\r\n$5\r\nHost:\r\n$1\r\na\r\n",
	}
	for _, c := range cases {
		diffRaw(t, inst.Addr, r.Addr, c, []byte(c), 0)
		diffRaw(t, inst.Addr, r.Addr, c+" (trickled)", []byte(c), 3)
	}
	// After a command in the same read, its reply is dropped with the
	// connection (trickled, whether MULTI's +OK left before POST arrived
	// is a matter of timing on both servers).
	c := "MULTI\r\nPOST\r\nSET xss_pwned 1\r\nEXEC\r\n"
	diffRaw(t, inst.Addr, r.Addr, c, []byte(c), 0)
	for name, addr := range map[string]string{"abacus": inst.Addr, "redis": r.Addr} {
		if got := servertest.Dial(t, addr).Do("EXISTS", "xss_pwned"); got != ":0\r\n" {
			t.Errorf("%s: EXISTS xss_pwned = %q", name, got)
		}
	}
	if !strings.Contains(inst.Logs.String(), "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis.") {
		t.Errorf("no warning in the log:\n%s", inst.Logs.String())
	}
	if n := strings.Count(inst.Logs.String(), "Possible SECURITY ATTACK"); n != 1 {
		t.Errorf("warning logged %d times, want once a minute at most", n)
	}
}

// With a password set the guard still comes first: the client is closed,
// not answered NOAUTH.
func TestCrossProtocolBeforeAuth(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "pw"))
	got := exchange(t, inst.Addr, []byte("POST / HTTP/1.1\r\nAUTH pw\r\nSET xss_pwned 1\r\n"), 0)
	if len(got) != 0 {
		t.Errorf("reply %q, want a close without one", got)
	}
}
