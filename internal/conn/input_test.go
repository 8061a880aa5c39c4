package conn_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

var qbufRe = regexp.MustCompile(`qbuf=(\d+)`)

// qbufOf returns the qbuf field of the CLIENT LIST line of the client
// connected from addr, waiting (up to 10 s) until it is want: the server
// reads what a client sent when it gets to it.
func qbufOf(t *testing.T, list *servertest.Conn, addr, want string) string {
	t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		got = ""
		for _, line := range strings.Split(list.Do("CLIENT", "LIST"), "\n") {
			if strings.Contains(line, " addr="+addr+" ") {
				if m := qbufRe.FindStringSubmatch(line); m != nil {
					got = m[1]
				}
			}
		}
		if got == want {
			break
		}
	}
	return got
}

// TestQueryBufAsRedis: CLIENT LIST's qbuf is Redis's query buffer: the
// bytes from the element being received (the arguments before it are
// out of it), a big argument's bytes as they arrive, and for the client
// running CLIENT LIST the whole read.
func TestQueryBufAsRedis(t *testing.T) {
	testenv.NeedRedis(t)
	rs := servertest.Redis(t)
	inst := servertest.Start(t)
	for _, tc := range []struct {
		name string
		sent []byte
		want string
	}{
		{"small argument begun", []byte("*2\r\n$3\r\nGET\r\n$3\r\nke"), "2"},
		{"header begun", []byte("*2\r\n$3\r\nGET\r\n$3"), "2"},
		{"count only", []byte("*2\r\n"), "0"},
		{"big argument begun", append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40000\r\n"), bytes.Repeat([]byte("x"), 100)...), "100"},
		{"inline begun", []byte("ECHO abc"), "8"},
	} {
		for _, addr := range []string{inst.Addr, rs.Addr} {
			c := servertest.Dial(t, addr)
			c.Write(tc.sent)
			list := servertest.Dial(t, addr)
			if got := qbufOf(t, list, c.C.LocalAddr().String(), tc.want); got != tc.want {
				t.Errorf("%s on %s: qbuf=%s, want %s", tc.name, addr, got, tc.want)
			}
			self := qbufOf(t, list, list.C.LocalAddr().String(), "26")
			if self != "26" {
				t.Errorf("%s on %s: CLIENT LIST's own qbuf=%s, want 26", tc.name, addr, self)
			}
			c.C.Close()
			list.C.Close()
		}
	}
}

// TestQueryBufferLimitLog: a client past client-query-buffer-limit is
// closed without a reply and the server logs Redis's line.
func TestQueryBufferLimitLog(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("client-query-buffer-limit", "1mb"))
	c := inst.Raw(t)
	c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n"))
	c.Write(bytes.Repeat([]byte("\x01y"), 524289))
	c.ExpectClosed()
	want := `Closing client that reached max query buffer length: id=`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(inst.Logs.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", want, inst.Logs.String())
		}
	}
	if !strings.Contains(inst.Logs.String(), `qbuf initial bytes: \"\\x01y\\x01y`) {
		t.Fatalf("log line without Redis's qbuf initial bytes:\n%s", inst.Logs.String())
	}
}

// TestUnauthenticatedLimitsSplit: the unauthenticated limits, and AUTH
// and RESET changing them within a pipeline, hold however the bytes are
// cut (the parse resumes across reads), as in redis-server.
func TestUnauthenticatedLimitsSplit(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis("--requirepass", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "secret"))
	enc := servertest.Encode
	eleven := enc("ECHO", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
	big := rep("x", 40000)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"count 11", []byte("*11\r\n")},
		{"bulk 16385", []byte("*2\r\n$4\r\nECHO\r\n$16385\r\n")},
		{"auth then 11 arguments", bytes.Join([][]byte{enc("AUTH", "secret"), eleven}, nil)},
		{"auth then a big bulk", bytes.Join([][]byte{enc("AUTH", "secret"), enc("ECHO", big), enc("PING")}, nil)},
		{"reset then a big bulk", bytes.Join([][]byte{enc("AUTH", "secret"), enc("RESET"), enc("ECHO", big)}, nil)},
	} {
		for _, chunk := range []int{1, 7, 1000} {
			diffRaw(t, inst.Addr, rs.Addr, tc.name+" in pieces of "+strconv.Itoa(chunk), tc.data, chunk)
		}
	}
}

// TestRecentMaxInputBuffer: a client holding a large command in the
// making shows in the server's recent input peak.
func TestRecentMaxInputBuffer(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4000000\r\n"))
	c.Write(bytes.Repeat([]byte("v"), 2<<20))
	for deadline := time.Now().Add(20 * time.Second); inst.Srv.RecentMaxInputBuffer() < 2<<20; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recent max input buffer %d with 2 MB of a value received", inst.Srv.RecentMaxInputBuffer())
		}
	}
}
