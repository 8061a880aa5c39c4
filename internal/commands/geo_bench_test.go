package commands

import (
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/ds/geohash"
	"github.com/abacusdb/abacus/internal/ds/zset"
)

// BenchmarkGeoCollect is the search of geobench without the server: 1M
// points uniform over 10 by 10 degrees, a 5 km radius around a random
// center (about 90 matches).
func BenchmarkGeoCollect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := zset.New(zset.DefaultLimits())
	for i := 0; i < 1000000; i++ {
		s.Add("p:"+strconv.Itoa(i), float64(geohash.Encode(rng.Float64()*10, 40+rng.Float64()*10)))
	}
	b.ResetTimer()
	// CPU time too: on a shared machine the wall time per op says little.
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	found := 0
	for i := 0; i < b.N; i++ {
		shape := geohash.Shape{Longitude: 5 + rng.Float64(), Latitude: 45 + rng.Float64(), Radius: 5, Conversion: 1000}
		found += len(geoCollect(s, &shape, 0, true, false, new(geoScratch)))
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(found)/float64(b.N), "matches/op")
}
