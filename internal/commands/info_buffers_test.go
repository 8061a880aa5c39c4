package commands_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// infoInt waits until INFO clients' field reaches at least min (the
// connection layer folds the clients' peaks into it once per cron tick)
// and returns it.
func infoInt(t *testing.T, c *servertest.Conn, field string, min int64) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := strconv.ParseInt(servertest.InfoField(servertest.BulkBody(t, c.Do("INFO", "clients")), field), 10, 64)
		if v >= min || time.Now().After(deadline) {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestInfoRecentMaxBuffers: client_recent_max_input_buffer follows a
// command still being received, client_recent_max_output_buffer the
// replies a client does not read, as Redis's peaks of the last seconds do.
func TestInfoRecentMaxBuffers(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	if v := infoInt(t, c, "client_recent_max_input_buffer", 0); v > 64<<10 {
		t.Fatalf("quiet server: client_recent_max_input_buffer %d", v)
	}

	in := inst.Raw(t)
	in.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n" + strings.Repeat("x", 1_000_000)))
	if v := infoInt(t, c, "client_recent_max_input_buffer", 1_000_000); v < 1_000_000 {
		t.Fatalf("client_recent_max_input_buffer %d with 1 MB of a command received", v)
	}

	for i := 0; i < 20; i++ {
		args := []string{"RPUSH", "big"}
		for j := 0; j < 1000; j++ {
			args = append(args, strings.Repeat("v", 100))
		}
		c.Do(args...)
	}
	out := inst.Raw(t)
	var pipe []byte
	for i := 0; i < 20; i++ {
		pipe = append(pipe, servertest.Encode("LRANGE", "big", "0", "-1")...)
	}
	out.Write(pipe) // about 40 MB of replies, never read
	if v := infoInt(t, c, "client_recent_max_output_buffer", 1<<20); v < 1<<20 {
		t.Fatalf("client_recent_max_output_buffer %d with megabytes of replies unread", v)
	}
}
