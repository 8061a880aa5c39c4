package commands_test

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// bigPush is a push command of n values: integers, short and long strings,
// so that the nodes mix listpack encodings.
func bigPush(cmd, key string, n, seed int) []string {
	args := []string{cmd, key}
	for i := 0; i < n; i++ {
		switch (i + seed) % 7 {
		case 0:
			args = append(args, strings.Repeat("v", 300+i%50))
		case 1, 2:
			args = append(args, "s"+strconv.Itoa(i))
		default:
			args = append(args, strconv.Itoa(i*(seed+1)-5000))
		}
	}
	return args
}

// Pushes of engine.PrepareArgs values or more are packed ahead, off the
// event loop (engine.Prepare). Their replies, the lists they leave, their
// errors and their notifications are redis-server's, from every state of
// the pushed end (list.TestPushPreparedRefusedAfterChange has the end
// changing between the preparing and the run); and each list is,
// node for node (DUMP), the one the same values pushed in small commands
// make.
func TestLargePushAsRedis(t *testing.T) {
	testenv.NeedRedis(t)
	d, inst := lsDiff(t)
	a := inst.Raw(t)
	n := engine.PrepareArgs + 1000
	// push runs a large push through the pair, and the same values in
	// commands too small to be prepared on key-ref in Abacus.
	push := func(cmd, key string, seed int) {
		t.Helper()
		args := bigPush(cmd, key, n, seed)
		d.Do(args...)
		for i := 2; i < len(args); i += 1000 {
			a.Do(append([]string{cmd, key + "-ref"}, args[i:min(i+1000, len(args))]...)...)
		}
	}
	sameDump := func(key string) {
		t.Helper()
		if x, y := a.Do("DUMP", key), a.Do("DUMP", key+"-ref"); x != y {
			t.Errorf("%s: DUMP differs from the small pushes' (%d and %d bytes)", key, len(x), len(y))
		}
	}
	for _, fill := range []string{"-2", "5"} {
		d.Do("CONFIG", "SET", "list-max-listpack-size", fill)
		d.Do("DEL", "l", "m", "s", "q")
		a.Do("DEL", "l-ref", "m-ref")
		push("RPUSH", "l", 0) // new key
		push("LPUSH", "l", 1) // quicklist head
		push("RPUSH", "l", 2) // quicklist tail
		d.Do("RPUSH", "m", "a", "1", "b")
		a.Do("RPUSH", "m-ref", "a", "1", "b")
		push("LPUSH", "m", 3)  // packed, converted
		push("RPUSHX", "m", 5) // existing
		sameDump("l")
		sameDump("m")
		d.Do(bigPush("LPUSHX", "nokey", n, 4)...)
		d.Do("SET", "s", "x")
		d.Do(bigPush("RPUSH", "s", n, 6)...) // WRONGTYPE
		d.Do("MULTI")
		d.Do(bigPush("RPUSH", "q", n, 7)...)
		d.Do("EXEC")
		for _, k := range []string{"l", "m", "q", "nokey", "s"} {
			d.Do("LLEN", k)
			d.Do("LRANGE", k, "0", "-1")
		}
	}
	// A pipeline whose first command changes the key: the large push is
	// prepared once it has run.
	d.Do("CONFIG", "SET", "list-max-listpack-size", "-2")
	d.Do("DEL", "p")
	big := bigPush("RPUSH", "p", n, 8)
	req := append(servertest.Encode("RPUSH", "p", "first"), servertest.Encode(big...)...)
	d.A.Write(req)
	d.R.Write(req)
	for i := 0; i < 2; i++ {
		if x, y := d.A.Read(), d.R.Read(); x != y {
			t.Errorf("pipelined push %d: abacus %q, redis %q", i, x, y)
		}
	}
	d.Do("LRANGE", "p", "0", "-1")

	sub := inst.Notifications(t, "KEA")
	a.Do(bigPush("RPUSH", "e", n, 9)...)
	a.Do(bigPush("LPUSH", "e", n, 9)...)
	servertest.ExpectEvents(t, sub, servertest.EventList("rpush", "e", "lpush", "e")...)
}

// The replication stream of prepared pushes is redis-server's, argument
// for argument: preparing changes where the time is spent, not what is
// propagated.
func TestLargePushPropagatedAsRedis(t *testing.T) {
	testenv.NeedRedis(t)
	r := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0")
	inst := servertest.Start(t)
	n := engine.PrepareArgs + 100
	streams := map[string]func() [][][]byte{}
	for name, addr := range map[string]string{"abacus": inst.Addr, "redis": r.Addr} {
		stream := servertest.AttachReplica(t, addr)
		c := servertest.Dial(t, addr)
		c.Do("RPUSH", "m", "a", "b")
		c.Do(bigPush("RPUSH", "l", n, 0)...)
		c.Do(bigPush("LPUSH", "l", n, 1)...)
		c.Do(bigPush("RPUSHX", "m", n, 2)...)
		c.Do(bigPush("LPUSHX", "none", n, 3)...)
		c.Do("SET", "sentinel", "x")
		streams[name] = func() [][][]byte {
			var cmds [][][]byte
			for {
				argv := stream.Next(10 * time.Second)
				if len(argv) == 3 && string(argv[1]) == "sentinel" {
					return cmds
				}
				cmds = append(cmds, argv)
			}
		}
	}
	a, b := streams["abacus"](), streams["redis"]()
	if len(a) != len(b) || len(a) < 4 {
		t.Fatalf("abacus propagated %d commands, redis %d (at least the four pushes expected)", len(a), len(b))
	}
	for i := range a {
		if !slices.EqualFunc(a[i], b[i], bytes.Equal) {
			t.Errorf("command %d differs: abacus %q..., redis %q...", i, a[i][:min(3, len(a[i]))], b[i][:min(3, len(b[i]))])
		}
	}
}
