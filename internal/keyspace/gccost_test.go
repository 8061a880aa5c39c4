package keyspace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestGCCost measures what one full collection costs over a keyspace of
// string keys stored as SET stores them (key:N to value:N, durabench's
// load): heap objects and scanned bytes per key, and the wall and CPU
// time of runtime.GC. It runs only when ABACUS_GC_KEYS gives the number
// of keys:
//
//	ABACUS_GC_KEYS=10000000 GOMAXPROCS=1 go test -run TestGCCost -v ./internal/keyspace/
//
// With one P the process CPU around runtime.GC is the mark's and sweep's
// own work; with more, idle Ps run mark workers that also count the time
// they spin looking for work.
func TestGCCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ABACUS_GC_KEYS"))
	if n <= 0 {
		t.Skip("set ABACUS_GC_KEYS to the number of keys")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	before := gcSample()
	ks := New(1)
	db := ks.DBs[0]
	var kb, vb []byte
	for i := range n {
		kb = strconv.AppendInt(append(kb[:0], "key:"...), int64(i), 10)
		vb = strconv.AppendInt(append(vb[:0], "value:"...), int64(i), 10)
		db.StoreString(nil, kb, vb, 0, false)
	}
	runtime.GC()
	built := gcSample()
	t.Logf("%d keys: %.2f heap objects, %.1f live heap bytes, %.1f scannable heap bytes per key",
		n, float64(built.objects-before.objects)/float64(n), float64(built.live-before.live)/float64(n),
		float64(built.scan-before.scan)/float64(n))
	for range 5 {
		s0, c0 := gcSample(), processCPU()
		t0 := time.Now()
		runtime.GC()
		wall := time.Since(t0)
		s1, c1 := gcSample(), processCPU()
		t.Logf("runtime.GC: %v wall, %v of process CPU (%.0f ns per key), %.0f ms of GC CPU by runtime/metrics, GOMAXPROCS %d",
			wall.Round(time.Millisecond), (c1 - c0).Round(time.Millisecond), float64(c1-c0)/float64(n),
			(s1.cpu-s0.cpu)*1e3, runtime.GOMAXPROCS(0))
	}
	if db.Len() != n {
		t.Fatalf("%d keys stored, want %d", db.Len(), n)
	}
	runtime.KeepAlive(ks)
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type gcStats struct {
	objects, live, scan uint64
	cpu                 float64
}

func gcSample() gcStats {
	s := []metrics.Sample{
		{Name: "/gc/heap/objects:objects"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/heap:bytes"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
	}
	metrics.Read(s)
	return gcStats{s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Float64()}
}
