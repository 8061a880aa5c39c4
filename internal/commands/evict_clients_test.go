package commands_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// maxmemory-clients: the client holding most memory is closed when the
// clients together pass the limit, unless it is CLIENT NO-EVICT.
func TestEvictClients(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("maxmemory-clients", "1mb"))
	ctl := inst.Raw(t)
	spared := inst.Raw(t)
	if r := spared.Do("CLIENT", "NO-EVICT", "ON"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	big := inst.Raw(t)
	// Half-sent commands of 2 MB each: their query buffers count.
	part := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4000000\r\n" + strings.Repeat("x", 2<<20)
	spared.Write([]byte(part))
	big.Write([]byte(part))
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatalf("no client evicted: %s", ctl.Do("CLIENT", "LIST"))
		}
		ctl.Do("PING")
		if memInfoInt(t, ctl, "stats", "evicted_clients") >= 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	big.ExpectClosed()
	list := ctl.Do("CLIENT", "LIST")
	if n := strings.Count(list, "flags=e"); n != 1 {
		t.Fatalf("the NO-EVICT client is gone: %s", list)
	}
}
