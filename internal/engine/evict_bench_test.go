package engine_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkSetAtLimit is bench/evictbench's SET at the limit without the
// network: maxmemory 32 MB under allkeys-lru, full, then SETs of new keys
// (random of 10M, 3-byte values, as redis-benchmark's), each evicting.
// Its CPU profile shows where the time goes: the collector, the key
// table's sampling, the used-memory estimate.
// atLimitEnv is an engine with maxmemory set under allkeys-lru, and the
// function that takes maxmemory off again.
func atLimitEnv(maxmemory string) (*engine.Env, *engine.Session, *resp.Writer, func()) {
	env, s, _ := txBenchEnv()
	w := &resp.Writer{Proto: 2}
	do := func(args ...string) {
		a := make([][]byte, len(args))
		for i, x := range args {
			a[i] = []byte(x)
		}
		env.Execute(s, a, w)
		w.Reset()
	}
	do("CONFIG", "SET", "maxmemory", maxmemory, "maxmemory-policy", "allkeys-lru")
	return env, s, w, func() { do("CONFIG", "SET", "maxmemory", "0") }
}

func BenchmarkSetAtLimit(b *testing.B) {
	env, s, w, done := atLimitEnv("32mb")
	defer done()
	r := rand.New(rand.NewPCG(1, 2))
	set := [][]byte{[]byte("SET"), nil, []byte("xxx")}
	key := make([]byte, 0, 32)
	one := func() {
		key = append(key[:0], "key:"...)
		key = strconv.AppendInt(key, int64(r.IntN(10_000_000)), 10)
		set[1] = key
		env.Execute(s, set, w)
		w.Reset()
	}
	for range 1_000_000 {
		one()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		one()
	}
}

// BenchmarkChurnAtLimit is bench/evictbench's churn in process: SETs of
// random sizes from 100 B to 16 KB over a million keys at 64 MB under
// allkeys-lru, and a DEL of a random key after every other SET.
func BenchmarkChurnAtLimit(b *testing.B) {
	env, s, w, done := atLimitEnv("64mb")
	defer done()
	r := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 16<<10)
	set := [][]byte{[]byte("SET"), nil, nil}
	del := [][]byte{[]byte("DEL"), nil}
	key := make([]byte, 0, 32)
	one := func(i int) {
		key = append(key[:0], "key:"...)
		key = strconv.AppendInt(key, int64(r.IntN(1_000_000)), 10)
		if i%2 == 1 {
			del[1] = key
			env.Execute(s, del, w)
		} else {
			set[1], set[2] = key, val[:100+r.IntN(16<<10-100)]
			env.Execute(s, set, w)
		}
		w.Reset()
	}
	for i := range 200_000 {
		one(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		one(i)
	}
}
