package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// load writes keys keys of mixed types, the same on every server: by
// i%10, 0-4 strings of 40-60 bytes (one in 100 with an EX far ahead), 5
// an integer string, 6 a hash, 7 a list, 8 a set (integers when i%20 is
// 8), 9 a sorted set; collections have 8 elements, except one key in
// 1000 of each type with 1000 (past the listpack and intset limits, so
// every encoding is in the snapshot).
func load(s *harness.Server, keys int) time.Duration {
	start := time.Now()
	const conns = 4
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := s.Dial()
			args := make([]string, 0, 2002)
			for i := c; i < keys; i += conns {
				key := "key:" + strconv.Itoa(i)
				n := 8
				if (i/10)%1000 == 0 {
					n = 1000
				}
				is := strconv.Itoa(i)
				switch t := i % 10; {
				case t < 5:
					v := "value:" + is + ":" + strings.Repeat("x", 34+i%20)
					if i%100 == 0 {
						conn.Send("SET", key, v, "EX", "1000000")
					} else {
						conn.Send("SET", key, v)
					}
				case t == 5:
					conn.Send("SET", key, strconv.Itoa(i*7))
				default:
					cmd := [...]string{6: "HSET", 7: "RPUSH", 8: "SADD", 9: "ZADD"}[t]
					args = append(args[:0], cmd, key)
					for j := 0; j < n; j++ {
						js := strconv.Itoa(j)
						switch {
						case t == 6:
							args = append(args, "field"+js, "v"+is+"-"+js)
						case t == 8 && i%20 == 8:
							args = append(args, strconv.Itoa(i+j*3))
						case t == 9:
							args = append(args, strconv.Itoa(j*10+i%7), "m"+js+"-"+is)
						default:
							args = append(args, "e"+js+"-"+is)
						}
					}
					conn.Send(args...)
				}
			}
			conn.Close()
		}(c)
	}
	wg.Wait()
	return time.Since(start)
}

type syncResult struct {
	secs                   float64
	rssBefore, pssBefore   int64
	peakRSS, peakPSS       int64
	primaryCPU, replicaCPU float64 // seconds
	replicaRSS             int64
	replicaPeak            int64 // the replica's peak RSS during the sync
	redisCOW               int64 // rdb_last_cow_size
	writes                 float64
	ok                     string
}

// syncMode is one kind of full sync: diskless or from a file, with or
// without SETs paced at writes per second on the primary meanwhile.
type syncMode struct {
	diskless bool
	writes   int
}

func (m syncMode) String() string {
	s := map[bool]string{true: "diskless", false: "disk"}[m.diskless]
	if m.writes > 0 {
		s += fmt.Sprintf(", %dk SET/s", m.writes/1000)
	}
	return s
}

// fullSync starts an empty replica of primary (same binary), sends it
// REPLICAOF and times it until its INFO says master_link_status:up and
// master_sync_in_progress:0, sampling the primary's memory (with its
// children) meanwhile. Afterwards it checks the replica's DBSIZE and
// DEBUG DIGEST against the primary's.
//
// With mode.writes, a writer SETs string keys of the load (so that the
// types stay as loaded) from just before REPLICAOF until the link is up:
// the writes a fork's copy-on-write pays for.
func fullSync(primary *harness.Server, ppid int, bin string, mode syncMode, keys int) syncResult {
	ctl := primary.Dial()
	defer ctl.Close()
	ctl.Do("CONFIG", "SET", "repl-diskless-sync", map[bool]string{true: "yes", false: "no"}[mode.diskless])
	dir, err := os.MkdirTemp("", "replbench-replica-")
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer os.RemoveAll(dir)
	rep := harness.Start(primary.Name+"-replica", bin, "--dir", dir, "--enable-debug-command", "yes")
	defer rep.Stop()
	rpid := pidOf(rep)
	rc := rep.Dial()
	defer rc.Close()

	var res syncResult
	res.rssBefore, res.pssBefore = treeMem(ppid, true)
	cpu0, rcpu0 := cpuTicks(ppid), cpuTicks(rpid)
	m := sampleMem(ppid)
	rm := sampleMem(rpid)
	var stop atomic.Bool
	sent := make(chan int64, 1)
	if mode.writes > 0 {
		stringKey := func(r *rand.Rand) string { return "key:" + strconv.Itoa(r.IntN(keys/10)*10+r.IntN(5)) }
		go func() { sent <- pacedWriter(primary, mode.writes, 2, stringKey, &stop) }()
	} else {
		sent <- 0
	}
	start := time.Now()
	if r := rc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(primary.Port)); r != "+OK" {
		harness.Fatal("REPLICAOF: %s", r)
	}
	linkUp(rc, primary.Name)
	res.secs = time.Since(start).Seconds()
	stop.Store(true)
	res.writes = float64(<-sent) / time.Since(start).Seconds()
	// redis-server's child ends after the replica has the payload; wait
	// for its parent to reap it so its CPU time is counted.
	for t := time.Now(); time.Since(t) < 30*time.Second; time.Sleep(20 * time.Millisecond) {
		if field(ctl.Do("INFO", "persistence"), "rdb_bgsave_in_progress") == "0" && len(tree(ppid)) == 1 {
			break
		}
	}
	m.end()
	rm.end()
	res.peakRSS, res.peakPSS = m.peakRSS, m.peakPSS
	res.replicaPeak = rm.peakRSS
	res.primaryCPU = float64(cpuTicks(ppid)-cpu0) / 100
	res.replicaCPU = float64(cpuTicks(rpid)-rcpu0) / 100
	res.replicaRSS, _ = treeMem(rpid, false)
	res.redisCOW = fieldInt(ctl.Do("INFO", "persistence"), "rdb_last_cow_size")

	for t := time.Now(); time.Since(t) < time.Minute; time.Sleep(20 * time.Millisecond) {
		po := fieldInt(ctl.Do("INFO", "replication"), "master_repl_offset")
		if fieldInt(rc.Do("INFO", "replication"), "slave_repl_offset") >= po {
			break
		}
	}
	pd, rd := ctl.Do("DEBUG", "DIGEST"), rc.Do("DEBUG", "DIGEST")
	pn, rn := ctl.Do("DBSIZE"), rc.Do("DBSIZE")
	switch {
	case pn != ":"+strconv.Itoa(keys):
		res.ok = "primary DBSIZE " + pn
	case rn != pn:
		res.ok = "replica DBSIZE " + rn
	case pd != rd:
		res.ok = "DIGEST differs"
	default:
		res.ok = "ok"
	}
	return res
}

// syncRows runs the full-sync rows: both primaries loaded with keys
// keys, then for each round, diskless then disk-based, Abacus then
// redis-server, a fresh replica of each.
func syncRows(abacus string, keys, rounds, writes int) {
	type key struct {
		mode   syncMode
		server string
	}
	modes := []syncMode{{diskless: true}, {diskless: false}}
	if writes > 0 {
		modes = append(modes, syncMode{true, writes}, syncMode{false, writes})
	}
	loaded, loadedPSS := map[string]int64{}, map[string]int64{}
	results := map[key][]syncResult{}
	var prim []*harness.Server
	pids := map[string]int{}
	for _, name := range []string{"abacus", "redis"} {
		dir, err := os.MkdirTemp("", "replbench-primary-")
		if err != nil {
			harness.Fatal("%v", err)
		}
		defer os.RemoveAll(dir)
		s := harness.Start(name, binOf(name, abacus), "--dir", dir, "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes")
		defer s.Stop()
		d := load(s, keys)
		pids[name] = pidOf(s)
		rss, pss := treeMem(pids[name], true)
		loaded[name], loadedPSS[name] = rss, pss
		fmt.Printf("%s: loaded %d keys in %.1f s, RSS %d MiB, PSS %d MiB\n", name, keys, d.Seconds(), rss>>20, pss>>20)
		prim = append(prim, s)
	}
	for r := 0; r < rounds; r++ {
		for _, mode := range modes {
			for _, s := range prim {
				res := fullSync(s, pids[s.Name], binOf(s.Name, abacus), mode, keys)
				fmt.Fprintf(os.Stderr, "round %d %s %s: %.2f s, peak RSS %d MiB (before %d), peak PSS %d MiB, CPU %.2f+%.2f s, replica peak RSS %d MiB, %s\n",
					r+1, mode, s.Name, res.secs, res.peakRSS>>20, res.rssBefore>>20, res.peakPSS>>20, res.primaryCPU, res.replicaCPU, res.replicaPeak>>20, res.ok)
				results[key{mode, s.Name}] = append(results[key{mode, s.Name}], res)
			}
		}
	}
	fmt.Printf("\n#### Full sync of %d keys of mixed types, primary to an empty replica (%d rounds, medians)\n\n", keys, rounds)
	fmt.Println("| sync | server | seconds | ratio | SET/s meanwhile | primary RSS after load MiB | RSS before MiB | peak RSS incl. child MiB | peak PSS incl. child MiB | PSS added MiB | peak PSS / PSS after load | rdb_last_cow_size MiB | primary CPU s | replica CPU s | replica RSS MiB | replica peak RSS MiB | rounds (s) | check |")
	fmt.Println("|" + strings.Repeat(" --- |", 18))
	for _, mode := range modes {
		redisSecs := med(results[key{mode, "redis"}], func(r syncResult) float64 { return r.secs })
		for _, name := range []string{"abacus", "redis"} {
			rs := results[key{mode, name}]
			secs := med(rs, func(r syncResult) float64 { return r.secs })
			var each []string
			checks := map[string]bool{}
			for _, r := range rs {
				each = append(each, fmt.Sprintf("%.1f", r.secs))
				checks[r.ok] = true
			}
			var cl []string
			for c := range checks {
				cl = append(cl, c)
			}
			ratio := ""
			if name == "abacus" {
				ratio = fmt.Sprintf("%.2fx", redisSecs/secs)
			}
			mib := func(f func(syncResult) int64) float64 {
				return med(rs, func(r syncResult) float64 { return float64(f(r)) / (1 << 20) })
			}
			fmt.Printf("| %s | %s | %.2f | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f | %.0f | %.0f | %s | %s |\n", mode, name, secs, ratio,
				med(rs, func(r syncResult) float64 { return r.writes }), float64(loaded[name])/(1<<20),
				mib(func(r syncResult) int64 { return r.rssBefore }), mib(func(r syncResult) int64 { return r.peakRSS }),
				mib(func(r syncResult) int64 { return r.peakPSS }), mib(func(r syncResult) int64 { return r.peakPSS - r.pssBefore }),
				mib(func(r syncResult) int64 { return r.peakPSS })/(float64(loadedPSS[name])/(1<<20)),
				mib(func(r syncResult) int64 { return r.redisCOW }),
				med(rs, func(r syncResult) float64 { return r.primaryCPU }), med(rs, func(r syncResult) float64 { return r.replicaCPU }),
				mib(func(r syncResult) int64 { return r.replicaRSS }), mib(func(r syncResult) int64 { return r.replicaPeak }), strings.Join(each, " "), strings.Join(cl, ", "))
		}
	}
	fmt.Println("\nratio: redis-server's seconds over Abacus's (above 1: Abacus faster). RSS before: the primary's at this sync's start (after the syncs before it).")
}

func med[T any](v []T, f func(T) float64) float64 {
	var x []float64
	for _, e := range v {
		x = append(x, f(e))
	}
	return harness.Median(x)
}

func binOf(name, abacus string) string {
	if name == "redis" {
		return "redis-server"
	}
	return abacus
}
