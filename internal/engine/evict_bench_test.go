package engine_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkSetAtLimit is bench/evictbench's SET at the limit without the
// network: maxmemory 32 MB under allkeys-lru, full, then SETs of new keys
// (random of 10M, 3-byte values, as redis-benchmark's), each evicting.
// Its CPU profile shows where the time goes: the collector, the key
// table's sampling, the used-memory estimate.
func BenchmarkSetAtLimit(b *testing.B) {
	env, s, _ := txBenchEnv()
	w := resp.Writer{Proto: 2}
	do := func(args ...string) {
		a := make([][]byte, len(args))
		for i, x := range args {
			a[i] = []byte(x)
		}
		env.Execute(s, a, &w)
		w.Reset()
	}
	do("CONFIG", "SET", "maxmemory", "32mb", "maxmemory-policy", "allkeys-lru")
	defer do("CONFIG", "SET", "maxmemory", "0")
	r := rand.New(rand.NewPCG(1, 2))
	set := [][]byte{[]byte("SET"), nil, []byte("xxx")}
	key := make([]byte, 0, 32)
	one := func() {
		key = append(key[:0], "key:"...)
		key = strconv.AppendInt(key, int64(r.IntN(10_000_000)), 10)
		set[1] = key
		env.Execute(s, set, &w)
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
