package engine

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Under LFU, of keys with equal decayed counters the one with the lower
// undecayed counter (read less before it decayed) is evicted first; a
// higher decayed counter still outranks it.
func TestEvictLFUTieBreak(t *testing.T) {
	e := NewEnv(keyspace.New(1), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	p, _ := config.Lookup("maxmemory-policy")
	if err := e.Cfg.Set(p, "allkeys-lfu"); err != nil {
		t.Fatal(err)
	}
	// Ten samples a refill (Redis's advice for a closer approximation):
	// with five, the pool runs out of never-read keys in about one run in
	// twenty-five as they thin out, and that chance is not the tie-break.
	samples, _ := config.Lookup("maxmemory-samples")
	if err := e.Cfg.Set(samples, "10"); err != nil {
		t.Fatal(err)
	}
	e.KS.Access = keyspace.Access{LFU: true, LFULogFactor: 10, LFUDecayTime: 1}
	db := e.KS.DBs[0]
	const t0 = 1_700_000_040_000
	store := func(prefix string, n int) {
		for i := range n {
			db.StoreString(nil, []byte(prefix+strconv.Itoa(i)), []byte("v"), 0, false)
		}
	}
	e.KS.Now = t0
	store("read:", 500)
	for i := range 500 {
		db.Touch(db.Peek("read:" + strconv.Itoa(i))) // 5 to 6: the first read always counts
	}
	store("hot:", 1)
	for range 3 {
		db.Touch(db.Peek("hot:0"))
	}
	e.KS.Now = t0 + 60_000 // one decay period: the read keys' counters are 5 again
	store("new:", 500)
	if c := e.KS.LFUCounter(db.Peek("read:0")); c != 5 {
		t.Fatalf("decayed counter %d, want 5", c)
	}
	evicted := map[string]int{}
	for range 300 {
		db, key := e.evictionCandidate(AllKeysLFU)
		if db == nil {
			t.Fatal("no candidate")
		}
		evicted[key[:strings.IndexByte(key, ':')]]++
		db.DeleteEvicted(key)
	}
	// The pool runs out of never-read keys only when the refills bring
	// fewer of them than are evicted: with ten samples a refill and at
	// least two keys in five never read, a key read once goes in rare
	// runs (2 in 1,000), one or two at most. Without the tie-break about
	// half the evicted keys are read ones.
	if evicted["read"] > 3 || evicted["hot"] > 0 {
		t.Fatalf("evicted %v: keys read once went before keys never read", evicted)
	}
}
