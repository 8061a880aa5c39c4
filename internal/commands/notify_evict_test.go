package commands_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Eviction publishes evicted for each key it removes, when it lands.
func TestNotifyEvicted(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	sub := inst.Raw(t)
	sub.Do("SUBSCRIBE", "__keyevent@0__:evicted")
	c.Do("CONFIG", "SET", "notify-keyspace-events", "Ee")
	c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	val := strings.Repeat("x", 1000)
	for i := 0; i < 100; i++ {
		c.Do("SET", "ev:"+itoaT(i), val)
	}
	// A limit no dataset fits under: the next write evicts (and, with
	// nothing left to evict, may be refused).
	c.Do("CONFIG", "SET", "maxmemory", "1")
	c.Do("SET", "ev:last", val)
	evicted := servertest.InfoField(c.Do("INFO", "stats"), "evicted_keys")
	c.Do("CONFIG", "SET", "maxmemory", "0")
	if evicted == "0" || evicted == "" {
		t.Fatalf("nothing evicted (evicted_keys %q)", evicted)
	}
	got := sub.Read()
	if !strings.Contains(got, "__keyevent@0__:evicted") || !strings.Contains(got, "ev:") {
		t.Fatalf("no evicted event: %q", got)
	}
}

func itoaT(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
