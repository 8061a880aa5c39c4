package metrics_test

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/servertest"
)

// BenchmarkTimeSeriesSnapshot: SAVE and loading (DEBUG RELOAD NOSAVE) of
// 1,000,000 samples in 10 series, 5 counters and 5 gauges, a sample every
// 10 s: "noisy", with a few ms of jitter, counters growing by random
// amounts and gauges a random walk with one decimal (the worst case for
// the compression); "regular", exact intervals, counters growing by one
// and gauges changing every tenth sample. ns/op is per million samples;
// rdb-B/sample is the snapshot's size per sample and mem-B/sample what
// MEMORY USAGE reports for the series.
func BenchmarkTimeSeriesSnapshot(b *testing.B) {
	for _, shape := range []string{"noisy", "regular"} {
		b.Run(shape, func(b *testing.B) { benchSnapshot(b, shape == "noisy") })
	}
}

func benchSnapshot(b *testing.B, noisy bool) {
	dir := b.TempDir()
	inst := servertest.Start(b, servertest.WithConfig("dir", dir, "enable-debug-command", "yes"))
	c := inst.Raw(b)
	const series, per = 10, 100_000
	rng := rand.New(rand.NewSource(1))
	mem := 0
	for k := 0; k < series; k++ {
		s := ts.New()
		t, v := int64(1_700_000_000_000), 0.0
		for i := 0; i < per; i++ {
			switch {
			case noisy && k%2 == 0: // a counter
				t += 10_000 + rng.Int63n(5)
				v += float64(rng.Intn(50))
			case noisy: // a gauge, one decimal
				t += 10_000 + rng.Int63n(5)
				v = math.Round((v+rng.NormFloat64())*10) / 10
			case k%2 == 0:
				t += 10_000
				v++
			default:
				t += 10_000
				if i%10 == 0 {
					v = float64(rng.Intn(100))
				}
			}
			s.Add(t, v, ts.PolicyLast)
		}
		p, err := rdb.Dump(keyspace.NewValue(keyspace.TypeTimeSeries, s), rdb.EncodeOptions{Compress: true})
		if err != nil {
			b.Fatal(err)
		}
		key := "series:" + strconv.Itoa(k)
		if r := c.Do("RESTORE", key, "0", string(p)); r != "+OK\r\n" {
			b.Fatalf("RESTORE: %q", r)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(c.Do("MEMORY", "USAGE", key)[1:]))
		mem += n
	}
	if r := c.Do("SAVE"); r != "+OK\r\n" {
		b.Fatalf("SAVE: %q", r)
	}
	st, err := os.Stat(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		b.Fatal(err)
	}
	const samples = series * per
	report := func(b *testing.B) {
		b.ReportMetric(float64(st.Size())/samples, "rdb-B/sample")
		b.ReportMetric(float64(mem)/samples, "mem-B/sample")
	}
	b.Run("save", func(b *testing.B) {
		for b.Loop() {
			if r := c.Do("SAVE"); r != "+OK\r\n" {
				b.Fatalf("SAVE: %q", r)
			}
		}
		report(b)
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if r := c.Do("DEBUG", "RELOAD", "NOSAVE"); r != "+OK\r\n" {
				b.Fatalf("DEBUG RELOAD: %q", r)
			}
		}
		report(b)
	})
}
