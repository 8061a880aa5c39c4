package commands_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// rueidis connects with its defaults (RESP3, CLIENT TRACKING ON OPTIN,
// client-side caching), caches a GET, and drops it when another client
// changes the key.
func TestRueidisClientSideCaching(t *testing.T) {
	inst := servertest.Start(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{inst.Addr}, DisableRetry: true})
	if err != nil {
		t.Fatalf("rueidis connects with its default options: %v", err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Do(ctx, c.B().Set().Key("csc").Value("1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	get := func() (string, bool) {
		r := c.DoCache(ctx, c.B().Get().Key("csc").Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil {
			t.Fatal(err)
		}
		return v, r.IsCacheHit()
	}
	if v, hit := get(); v != "1" || hit {
		t.Fatalf("first GET: %q hit=%v, want 1 from the server", v, hit)
	}
	if v, hit := get(); v != "1" || !hit {
		t.Fatalf("second GET: %q hit=%v, want 1 from the cache", v, hit)
	}
	other := inst.Client(t)
	if err := other.Set(ctx, "csc", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The invalidation arrives asynchronously: the cache must drop the key
	// and the next read see the new value.
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := get()
		if v == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cached value %q never invalidated", v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// go-redis's Subscribe and PSubscribe channels, unchanged.
func TestGoRedisPubSub(t *testing.T) {
	inst := servertest.Start(t)
	ctx := context.Background()
	c := inst.Client(t)
	sub := c.Subscribe(ctx, "news")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}
	psub := c.PSubscribe(ctx, "n*")
	defer psub.Close()
	if _, err := psub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{"a", "b", "c"} {
		n, err := c.Publish(ctx, "news", msg).Result()
		if err != nil || n != 2 {
			t.Fatalf("publish %d: %d receivers, %v; want 2", i, n, err)
		}
	}
	for _, want := range []string{"a", "b", "c"} {
		select {
		case m := <-sub.Channel():
			if m.Channel != "news" || m.Payload != want {
				t.Fatalf("Subscribe channel got %+v, want %q", m, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no message on the Subscribe channel")
		}
		select {
		case m := <-psub.Channel():
			if m.Pattern != "n*" || m.Channel != "news" || m.Payload != want {
				t.Fatalf("PSubscribe channel got %+v, want %q", m, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no message on the PSubscribe channel")
		}
	}
	if n, err := c.PubSubNumSub(ctx, "news").Result(); err != nil || n["news"] != 1 {
		t.Fatalf("PUBSUB NUMSUB: %v %v", n, err)
	}
}

// redis-py's pubsub(): get_message, listen and psubscribe with a handler,
// run by Debian's python3-redis (CI installs it).
func TestRedisPyPubSub(t *testing.T) {
	py := testenv.PythonRedis(t)
	inst := servertest.Start(t)
	_, port, _ := strings.Cut(inst.Addr, ":")
	script := `
import sys, time, threading, redis
r = redis.Redis(port=int(sys.argv[1]), decode_responses=True)
p = r.pubsub()
p.subscribe("alerts")
assert p.get_message(timeout=5)["type"] == "subscribe"
seen = []
p.psubscribe(**{"metric.*": lambda m: seen.append((m["pattern"], m["channel"], m["data"]))})
assert r.publish("alerts", "high") == 1
m = p.get_message(timeout=5)
assert m["type"] == "psubscribe", m
m = p.get_message(timeout=5)
assert (m["type"], m["channel"], m["data"]) == ("message", "alerts", "high"), m
assert r.publish("metric.cpu", "97") == 1
p.get_message(timeout=5)  # runs the handler
assert seen == [("metric.*", "metric.cpu", "97")], seen
def later():
    time.sleep(0.2)
    r.publish("alerts", "done")
threading.Thread(target=later).start()
for m in p.listen():
    if m["type"] == "message":
        assert m["data"] == "done", m
        break
p.close()
print("ok")
`
	out, err := exec.Command(py, "-c", script, port).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py pubsub: %v\n%s", err, out)
	}
}
