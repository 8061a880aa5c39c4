package conn_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// exchange opens a connection to addr, sends data (in writes of at most
// chunk bytes; 0 means one write), half-closes the connection and returns
// every byte the server sends until it closes. Both Redis and Abacus run
// what is complete and then close on the end of input, so the exchange is
// deterministic: no timing decides what is compared.
func exchange(t testing.TB, addr string, data []byte, chunk int) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tc := conn.(*net.TCPConn)
	tc.SetNoDelay(true)
	go func() {
		// The server may close first (a protocol error): write errors
		// are expected then and ignored.
		if chunk <= 0 {
			chunk = len(data) + 1
		}
		for p := data; len(p) > 0; {
			n := min(chunk, len(p))
			if _, err := tc.Write(p[:n]); err != nil {
				return
			}
			p = p[n:]
		}
		tc.CloseWrite()
	}()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	out, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s did not close the connection; read %q", addr, trim(out))
	}
	return out
}

func trim(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}

var ping = []byte("*1\r\n$4\r\nPING\r\n")

// diffRaw sends the same bytes to Abacus and to Redis and requires the
// same bytes back, first as they are and then followed by a PING, which
// shows whether the connection was still open after them.
func diffRaw(t *testing.T, abacus, redis, name string, data []byte, chunk int) {
	t.Helper()
	for _, d := range [][]byte{data, append(data[:len(data):len(data)], ping...)} {
		a := exchange(t, abacus, d, chunk)
		r := exchange(t, redis, d, chunk)
		if !bytes.Equal(a, r) {
			t.Errorf("%s (%d bytes sent):\n abacus: %q\n  redis: %q", name, len(d), trim(a), trim(r))
			return
		}
	}
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// protocolCases are requests that exercise the parser's edges: malformed
// lengths, quoting, NUL bytes, limits. Each is compared with Redis.
var protocolCases = []struct{ name, data string }{
	{"multibulk", "*1\r\n$4\r\nPING\r\n"},
	{"null count then ping", "*-1\r\nPING\r\n"},
	{"zero count then ping", "*0\r\nPING\r\n"},
	{"bad count", "*a\r\n"},
	{"count over INT_MAX", "*3000000000\r\n"},
	{"count plus sign", "*+1\r\n$4\r\nPING\r\n"},
	{"count leading zero", "*01\r\n$4\r\nPING\r\n"},
	{"count space", "* 1\r\n"},
	{"count LF only", "*1\n$4\nPING\r\n"},
	{"bad bulk length", "*1\r\n$a\r\n"},
	{"negative bulk length", "*1\r\n$-1\r\n"},
	{"bulk plus sign", "*1\r\n$+4\r\nPING\r\n"},
	{"bulk leading zero", "*1\r\n$04\r\nPING\r\n"},
	{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n"},
	{"bulk far over", "*1\r\n$1000000000\r\n"},
	{"expected dollar", "*1\r\nx\r\n"},
	{"expected dollar high byte", "*1\r\n\xff\r\n"},
	{"expected dollar CR", "*1\r\n\r\n"},
	{"expected dollar LF", "*1\r\n\n\r\n"},
	{"second arg not dollar", "*1\r\n$3\r\nfoo\r\n*2\r\n$3\r\nget\r\n\r\n"},
	{"error after replies", "PING\r\nPING\r\n*1\r\n\x80x\r\nPING\r\n"},
	{"trailing bytes skipped", "*1\r\n$4\r\nPINGxx\r\n"},
	{"partial bulk", "*1\r\n$4\r\nPING"},
	{"partial header", "*2\r\n$4\r\nECHO\r\n$1"},
	{"NUL hides bulk header", "*1\r\n$\x004\r\nPING\r\n"},
	{"NUL hides count", "*\x001\r\n"},
	{"NUL in bulk", "*1\r\n$4\r\nPI\x00G\r\n"},
	{"NUL in unknown command args", "*3\r\n$4\r\nPI\x00G\r\n$3\r\na\x00b\r\n$1\r\nc\r\n"},
	{"NUL in subcommand", "*2\r\n$6\r\nCLIENT\r\n$4\r\nfo\x00o\r\n"},
	{"inline NUL hides newline", "PING\x00\r\n"},
	{"inline", "PING\r\nECHO hello\r\n"},
	{"inline LF only", "PING\nPING\n"},
	{"inline empty lines", "\r\n\r\n   \r\nPING\r\n"},
	{"inline unbalanced", "PING\r\nECHO \"x\r\nPING\r\n"},
	{"inline quote glued", "ECHO \"a\"b\r\n"},
	{"inline single unbalanced", "ECHO 'a\r\n"},
	{"inline single glued", "ECHO a'b\r\n"},
	{"inline escapes", "ECHO \"\\x41\\x4g\\q\\n\\t\"\r\n"},
	{"inline single escape", "ECHO 'a\\'b\\x41'\r\n"},
	{"inline single escaped quote", "ECHO '\\''\r\n"},
	{"inline backslash quote", "ECHO \"\\\"\r\n"},
	{"inline trailing backslash", "ECHO \"a\\\r\n"},
	{"inline empty quotes", "ECHO \"\"\r\nECHO ''\r\n"},
	{"inline vertical tab", "ECHO \"a\"\vb\r\nECHO\vx\r\n"},
	{"inline CR inside", "ECHO x\ry\r\nECHO \"x\r\"\r\n"},
	{"inline CR CR LF", "ECHO x\r\r\n"},
	{"inline quoted name", "\"ECHO\" x\r\n"},
	{"inline hex", "ECHO \"\\xZZ\" \"\\x4\"\r\n"},
	{"unknown command", "NOSUCH a b\r\n"},
	{"unknown command long args", "*4\r\n$6\r\nnosuch\r\n$120\r\n" + rep("a", 120) + "\r\n$20\r\n" + rep("b", 20) + "\r\n$1\r\nc\r\n"},
	{"unknown command newline arg", "*2\r\n$6\r\nnosuch\r\n$4\r\na\r\nb\r\n"},
	{"inline too big", rep("x", 70000)},
	{"inline too big after reply", "*1\r\n$4\r\nPING\r\n" + rep("x", 70000)},
	{"inline 60k line", "ECHO " + rep("x", 60000) + "\r\n"},
	{"count line too big", "*" + rep("1", 70000)},
	{"bulk line too big", "*1\r\n$" + rep("1", 70000)},
	{"bulk junk too big", "*1\r\n" + rep("x", 70000)},
	{"second bulk too big", "*2\r\n$4\r\nPING\r\n" + rep("y", 70000)},
	{"bulk length line of zeros", "*1\r\n$" + rep("0", 66000) + "4\r\nPING\r\n"},
	{"big argument", "*2\r\n$4\r\nECHO\r\n$200000\r\n" + rep("z", 200000) + "\r\n"},
}

func TestProtocolDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	for _, tc := range protocolCases {
		diffRaw(t, inst.Addr, r.Addr, tc.name, []byte(tc.data), 0)
	}
}

// TestProtocolDiffByteByByte sends each case one byte per write: how the
// bytes are cut must not change anything.
func TestProtocolDiffByteByByte(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	for _, tc := range protocolCases {
		if len(tc.data) > 2000 {
			continue
		}
		diffRaw(t, inst.Addr, r.Addr, tc.name+" byte by byte", []byte(tc.data), 1)
	}
	// A pipeline of mixed requests, cut at every byte.
	var b []byte
	for i := 0; i < 20; i++ {
		b = append(b, servertest.Encode("SET", fmt.Sprint("k", i), rep("v\r\n", i))...)
		b = append(b, fmt.Sprintf("GET k%d\r\n", i)...)
		b = append(b, servertest.Encode("ECHO", "")...)
	}
	diffRaw(t, inst.Addr, r.Addr, "pipeline byte by byte", b, 1)
}

// randomStream builds n requests of mixed forms with known replies on both
// servers, sometimes ending with a malformed request.
func randomStream(rng *rand.Rand, n int) []byte {
	var b []byte
	randArg := func() string {
		l := rng.IntN(12)
		if rng.IntN(20) == 0 {
			l = rng.IntN(3000)
		}
		p := make([]byte, l)
		for i := range p {
			if rng.IntN(3) == 0 {
				p[i] = byte(rng.IntN(256))
			} else {
				p[i] = "abc xyz\"'\\\r\n"[rng.IntN(12)]
			}
		}
		return string(p)
	}
	quote := func(s string) string {
		var q []byte
		q = append(q, '"')
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"' || c == '\\':
				q = append(q, '\\', c)
			case c >= ' ' && c <= '~':
				q = append(q, c)
			default:
				q = append(q, fmt.Sprintf("\\x%02x", c)...)
			}
		}
		return string(append(q, '"'))
	}
	for i := 0; i < n; i++ {
		switch rng.IntN(12) {
		case 0:
			b = append(b, servertest.Encode("PING")...)
		case 1:
			b = append(b, servertest.Encode("PING", randArg())...)
		case 2:
			b = append(b, servertest.Encode("ECHO", randArg())...)
		case 3:
			b = append(b, "ECHO "+quote(randArg())+"\r\n"...)
		case 4:
			b = append(b, servertest.Encode("SET", fmt.Sprint("key", rng.IntN(20)), randArg())...)
		case 5:
			b = append(b, fmt.Sprintf("GET key%d\r\n", rng.IntN(20))...)
		case 6:
			b = append(b, []string{"\r\n", "*0\r\n", "*-1\r\n", "   \n"}[rng.IntN(4)]...)
		case 7:
			b = append(b, servertest.Encode("NOSUCH", randArg())...)
		case 8:
			b = append(b, servertest.Encode("ECHO")...)
		case 9:
			b = append(b, servertest.Encode("SELECT", fmt.Sprint(rng.IntN(20)-2))...)
		case 10:
			b = append(b, "PING "+quote(randArg())+" extra\r\n"...)
		case 11:
			b = append(b, servertest.Encode("CLIENT", "GETNAME")...)
		}
	}
	if rng.IntN(2) == 0 {
		bad := []string{"*x\r\n", "*1\r\n$y\r\n", "*1\r\n+z\r\n", "ECHO \"open\r\n", "*2\r\n$3\r\nGET\r\n:1\r\n"}
		b = append(b, bad[rng.IntN(len(bad))]...)
		b = append(b, servertest.Encode("PING")...)
	}
	return b
}

// TestProtocolDiffRandom compares randomized pipelines (fixed seeds),
// each sent in one write and in random small pieces.
func TestProtocolDiffRandom(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	total := 0
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		n := 100 + rng.IntN(400)
		total += n
		stream := randomStream(rng, n)
		diffRaw(t, inst.Addr, r.Addr, fmt.Sprintf("seed %d", seed), stream, 0)
		diffRaw(t, inst.Addr, r.Addr, fmt.Sprintf("seed %d in pieces", seed), stream, 1+rng.IntN(50))
	}
	t.Logf("%d random requests compared", total)
}

// TestPipelineThousands sends ten thousand commands in one write: every
// one runs, in order, and the replies come back complete.
func TestPipelineThousands(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	var b []byte
	for i := 0; i < 10000; i++ {
		switch i % 3 {
		case 0:
			b = append(b, servertest.Encode("SET", fmt.Sprint("p", i%50), fmt.Sprint(i))...)
		case 1:
			b = append(b, fmt.Sprintf("GET p%d\r\n", (i-1)%50)...)
		default:
			b = append(b, servertest.Encode("ECHO", fmt.Sprint(i))...)
		}
	}
	a := exchange(t, inst.Addr, b, 0)
	rr := exchange(t, r.Addr, b, 0)
	if !bytes.Equal(a, rr) {
		t.Fatalf("10000 pipelined commands differ: abacus %d bytes, redis %d bytes", len(a), len(rr))
	}
	if n := bytes.Count(a, []byte("\r\n")); n < 10000 {
		t.Fatalf("only %d reply lines", n)
	}
}

// TestProtocolLimits compares the configurable limits with a Redis
// configured the same way.
func TestProtocolLimits(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis("--proto-max-bulk-len", "1mb", "--client-query-buffer-limit", "1mb")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	inst := servertest.Start(t, servertest.WithConfig("proto-max-bulk-len", "1mb", "client-query-buffer-limit", "1mb"))
	set := func(n int) []byte {
		return []byte(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n", n, rep("v", n)))
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"bulk at proto-max-bulk-len", []byte("*1\r\n$1048576\r\n")},
		{"bulk over proto-max-bulk-len", []byte("*1\r\n$1048577\r\n")},
		{"query buffer under the limit", set(1048574)},
		{"query buffer a little under", set(1048476)},
	}
	for _, tc := range cases {
		diffRaw(t, inst.Addr, rs.Addr, tc.name, tc.data, 0)
	}
	// Over client-query-buffer-limit Redis closes the connection without a
	// reply (often with a reset, since input is left unread): compare
	// only that nothing but replies to earlier commands came back.
	for _, n := range []int{1048575, 1048576} {
		for _, addr := range []string{inst.Addr, rs.Addr} {
			out := exchangeLenient(t, addr, set(n))
			if len(out) != 0 {
				t.Errorf("%s: SET of %d bytes over the query buffer limit answered %q", addr, n, trim(out))
			}
		}
	}
}

// exchangeLenient is exchange for cases where the server resets the
// connection: a reset ends the read like a close.
func exchangeLenient(t testing.TB, addr string, data []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		conn.Write(data)
		conn.(*net.TCPConn).CloseWrite()
	}()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	out, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s did not close the connection", addr)
	}
	return out
}

// TestUnauthenticatedLimits: with requirepass, a client that has not
// authenticated may send only small requests; AUTH lifts the limits within
// the same pipeline and RESET brings them back.
func TestUnauthenticatedLimits(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis("--requirepass", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "secret"))
	enc := servertest.Encode
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	eleven := enc("ECHO", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"count 11", []byte("*11\r\n")},
		{"count 10", []byte("*10\r\n$4\r\nECHO\r\n")},
		{"bulk 16385", []byte("*10\r\n$16385\r\n")},
		{"bulk 16384", []byte("*1\r\n$16384\r\n")},
		{"noauth", enc("GET", "k")},
		{"inline has no limit", []byte("ECHO " + rep("x", 20000) + "\r\n")},
		{"auth lifts in pipeline", cat(enc("AUTH", "secret"), eleven)},
		{"reset restores in pipeline", cat(enc("AUTH", "secret"), enc("RESET"), eleven)},
		{"reset restores bulk limit", cat(enc("AUTH", "secret"), enc("RESET"), enc("ECHO", rep("x", 16385)))},
		{"wrong password keeps limits", cat(enc("AUTH", "nope"), eleven)},
		{"two-argument auth lifts", cat(enc("AUTH", "default", "secret"), eleven)},
	} {
		diffRaw(t, inst.Addr, rs.Addr, tc.name, tc.data, 0)
	}
}

// TestOthersUnaffected: clients sending garbage, disconnecting mid-command
// and hitting limits do not disturb a client working at the same time.
func TestOthersUnaffected(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("client-query-buffer-limit", "1mb"))
	rdb := inst.Client(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := [][]byte{
		[]byte("*a\r\n"),
		[]byte("*1\r\n$-5\r\n"),
		[]byte("ECHO \"x\r\n"),
		[]byte(rep("x", 70000)),
		[]byte("*3\r\n$3\r\nSET\r\n$1\r\nz\r\n$2000000\r\n" + rep("v", 2000000)),
		[]byte("*3\r\n$3\r\nSET\r\n$1\r\nz\r\n$5\r\nab"),
	}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				conn, err := net.Dial("tcp", inst.Addr)
				if err != nil {
					return
				}
				conn.Write(bad[(i+w)%len(bad)])
				// Half-close and wait for the server to close: each bad
				// client is served to the end before the next one comes,
				// rather than an unbounded flood that only measures how
				// the scheduler shares the CPU.
				conn.(*net.TCPConn).CloseWrite()
				conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, conn)
				conn.Close()
			}
		}(w)
	}
	for i := 0; i < 500; i++ {
		key := fmt.Sprint("ok", i%10)
		if err := rdb.Set(servertest.Ctx, key, i, 0).Err(); err != nil {
			t.Fatalf("SET: %v", err)
		}
		if v, err := rdb.Get(servertest.Ctx, key).Int(); err != nil || v != i {
			t.Fatalf("GET = %d, %v; want %d", v, err, i)
		}
	}
	close(stop)
	wg.Wait()
	if n := rdb.Exists(servertest.Ctx, "z").Val(); n != 0 {
		t.Fatalf("a partial or refused SET ran: EXISTS z = %d", n)
	}
}
