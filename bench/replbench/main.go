// Command replbench measures replication side by side, Abacus primary to
// Abacus replica against redis-server to redis-server, on loopback:
//
//	go run ./bench/replbench [-keys 1000000] [-rounds 3] [-only sync,lag,set]
//		[-sync-writes 20000] [-rate 100000] [-lag-time 15s] [-n 200000]
//		[-pipelines 1,16] [-replicas 2] [-lag-every 100ms]
//
// The rows:
//
//   - sync: both primaries hold -keys keys of mixed types (strings,
//     integers, hashes, lists, sets, sorted sets, a few with a TTL and a
//     few large enough for the non-compact encodings). Each round starts an
//     empty replica of each and times REPLICAOF until the replica's INFO
//     says master_link_status:up and master_sync_in_progress:0, diskless
//     (repl-diskless-sync yes, delay 0) and disk-based. Meanwhile the
//     primary's RSS and PSS are sampled every 10 and 50 ms, summed with its
//     children's (redis-server's fork: the RSS sum counts pages the child
//     shares twice, the PSS sum counts what the two hold in RAM, the
//     copy-on-write copies included). With -sync-writes, the same two
//     syncs again while SETs of the load's string keys are paced at that
//     rate on the primary (what a fork pays copy-on-write for). Primary
//     and replica CPU seconds, the children's included. Afterwards
//     DBSIZE and DEBUG DIGEST of the replica must equal the primary's.
//   - set: redis-benchmark -t set -c 50 -r 100000 at each pipeline depth
//     with 0, 1 and -replicas replicas attached; requests/s, the primary's
//     CPU per request and the replicas' (they run on the same cores).
//   - lag (with one replica attached): SETs paced at -rate per second;
//     every -lag-every the primary's master_repl_offset minus the replica's
//     slave_repl_offset, in bytes and in ms of the stream at its measured
//     rate: median, p99, max. At the default 100 ms a round has 150
//     samples, so its p99 is its second largest sample; 10ms gives 1,500.
//
// The machine may be shared: the load average is printed with the tables;
// CPU per request and the memory figures are the robust numbers.
package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	keys := flag.Int("keys", 1_000_000, "keys of the full-sync rows")
	rounds := flag.Int("rounds", 3, "rounds (A B A B) of every row")
	only := flag.String("only", "sync,set,lag", "rows to run")
	rate := flag.Int("rate", 100_000, "SET/s of the lag rows")
	lagTime := flag.Duration("lag-time", 15*time.Second, "length of one lag round (after 1 s of warm-up)")
	lagEvery := flag.Duration("lag-every", 100*time.Millisecond, "interval between the lag rows' samples")
	syncWrites := flag.Int("sync-writes", 20_000, "SET/s during the full syncs of the rows with writes (0: no such rows)")
	n := flag.Int("n", 200_000, "requests per redis-benchmark run")
	pipelines := flag.String("pipelines", "1,16", "pipeline depths of the SET rows")
	replicas := flag.Int("replicas", 2, "most replicas attached in the SET rows")
	bin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()
	abacus, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	want := map[string]bool{}
	for _, r := range strings.Split(*only, ",") {
		want[r] = true
	}
	harness.Header(fmt.Sprintf("replbench, load average %s", harness.LoadAvg()))
	if want["sync"] {
		syncRows(abacus, *keys, *rounds, *syncWrites)
		fmt.Printf("\nload average: %s\n", harness.LoadAvg())
	}
	if want["set"] || want["lag"] {
		var lag func([]*pair)
		if want["lag"] {
			lag = func(p []*pair) { lagRows(p, *rate, *lagTime, *lagEvery, *rounds) }
		}
		reps, r := *replicas, *rounds
		if !want["set"] {
			// Only the lag rows: attach one replica, no SET runs.
			reps, r = 1, 0
		}
		throughputRows(abacus, harness.Pipelines(*pipelines), reps, r, *n, lag, want["set"])
		fmt.Printf("\nload average: %s\n", harness.LoadAvg())
	}
}
