package metrics_test

import (
	"io"
	"log/slog"
	"math/rand"
	"sort"
	"strconv"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkTSWindowCount is the engine's cost of counting an hour of
// 100,000 events (random milliseconds) as recipes.Events does, one
// TS.RANGE with a single sum bucket spanning the window, against ZCOUNT
// over the same events in a sorted set, and TS.SUM (the same sum, one
// value in the reply): the commands alone, without network.
//
//	go test ./internal/metrics -run '^$' -bench TSWindowCount -cpuprofile cpu.out
func BenchmarkTSWindowCount(b *testing.B) {
	const now, hour = 1_700_003_600_000, 3_600_000
	env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
	w := resp.Writer{Proto: 2}
	run := func(args ...string) {
		w.Reset()
		env.Execute(sess, enginetest.Argv(args), &w)
		if len(w.Buf) > 0 && w.Buf[0] == '-' {
			b.Fatalf("%v: %q", args, w.Buf)
		}
	}
	sizes := []string{"64", "128", "256", "512"}
	for _, cs := range sizes {
		run("TS.CREATE", "ev"+cs, "RETENTION", strconv.Itoa(hour), "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", cs)
	}
	rng := rand.New(rand.NewSource(1))
	ts := make([]int, 100_000)
	for i := range ts {
		ts[i] = now - 60_000 - rng.Intn(hour-60_000)
		t := strconv.Itoa(ts[i])
		run("ZADD", "z", t, t+":"+strconv.Itoa(i))
	}
	// Out of order, as recipesbench's 50 recorders of random past times
	// write: chunks split as inserts fill them.
	run("TS.CREATE", "evooo", "RETENTION", strconv.Itoa(hour), "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", "128")
	for _, t := range ts {
		run("TS.ADD", "evooo", strconv.Itoa(t), "1")
	}
	sort.Ints(ts) // in order, as events arrive
	for _, t := range ts {
		for _, cs := range sizes {
			run("TS.ADD", "ev"+cs, strconv.Itoa(t), "1")
		}
	}
	type row struct {
		name string
		args []string
	}
	var rows []row
	for _, win := range []int{hour, 600_000} {
		from := strconv.Itoa(now - win + 1)
		for _, cs := range sizes {
			rows = append(rows, row{"TS.RANGE " + strconv.Itoa(win/60_000) + "min CHUNK_SIZE " + cs,
				[]string{"TS.RANGE", "ev" + cs, from, strconv.Itoa(now), "AGGREGATION", "sum", strconv.Itoa(win), "ALIGN", "-"}})
		}
		rows = append(rows, row{"TS.RANGE " + strconv.Itoa(win/60_000) + "min CHUNK_SIZE 128 out of order",
			[]string{"TS.RANGE", "evooo", from, strconv.Itoa(now), "AGGREGATION", "sum", strconv.Itoa(win), "ALIGN", "-"}})
		// The form recipes.Events sends: one bucket from 0, no ALIGN.
		rows = append(rows, row{"TS.RANGE " + strconv.Itoa(win/60_000) + "min one bucket from 0 out of order",
			[]string{"TS.RANGE", "evooo", from, strconv.Itoa(now), "AGGREGATION", "sum", "4611686018427387904"}})
		// What recipes.Events sends now: the sum as one value.
		rows = append(rows, row{"TS.SUM " + strconv.Itoa(win/60_000) + "min out of order",
			[]string{"TS.SUM", "evooo", from, strconv.Itoa(now)}})
		rows = append(rows, row{"ZCOUNT " + strconv.Itoa(win/60_000) + "min", []string{"ZCOUNT", "z", from, strconv.Itoa(now)}})
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			argv := enginetest.Argv(row.args)
			b.ReportAllocs()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < b.N; i++ {
				w.Reset()
				env.Execute(sess, argv, &w)
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
		})
	}
}
