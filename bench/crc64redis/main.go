// Command crc64redis measures redis-server's CRC-64 next to internal/crc64 in
// one run. redis-server computes the checksum of a DUMP payload before
// anything else in RESTORE (after the version check); a payload with a wrong
// checksum makes RESTORE fail right after that pass. Two measures of Redis's
// crc64 over the payload come out of that:
//
//   - wall: the command's SLOWLOG duration (1 µs resolution);
//   - CPU: redis-server's CPU time (/proc/PID/stat) over a batch of such
//     RESTOREs minus the same batch with a payload whose version is too new
//     (refused before the checksum): what is left is the checksum alone.
//     This one holds up on a loaded machine, where the wall clock also
//     counts time spent descheduled.
//
// The same bytes are checksummed by crc64.Checksum and by hash/crc64 (wall
// time and this process's CPU time), rounds alternating, and the medians
// printed in GB/s.
//
//	go run ./bench/crc64redis
//	go run ./bench/crc64redis -sizes 1048576,67108864 -rounds 7
//
// Only loopback addresses are used.
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	abcrc "github.com/abacusdb/abacus/internal/crc64"
	"github.com/abacusdb/abacus/internal/servertest"
)

func main() {
	sizes := flag.String("sizes", "65536,1048576,67108864", "payload sizes in bytes (SLOWLOG's 1 µs resolution makes wall times under ~64 KiB meaningless)")
	rounds := flag.Int("rounds", 5, "measurements per size and implementation")
	flag.Parse()

	srv, err := servertest.StartRedis()
	if err != nil {
		fail("%v", err)
	}
	defer srv.Stop()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer c.Close()
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		fail("CONFIG SET: %v", err)
	}
	goTable := crc64.MakeTable(abcrc.Poly)

	pid, err := c.InfoMap(ctx, "server").Result()
	if err != nil {
		fail("INFO: %v", err)
	}
	redisPID, _ := strconv.Atoi(pid["Server"]["process_id"])
	if redisPID == 0 {
		fail("no process_id in INFO")
	}

	fmt.Printf("GB/s, median of %d rounds; wall = elapsed time, cpu = CPU time\n", *rounds)
	fmt.Printf("%-10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "size",
		"redis", "redis", "abacus", "abacus", "hash/crc", "hash/crc", "ab/redis", "ab/hash")
	fmt.Printf("%-10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "",
		"wall", "cpu", "wall", "cpu", "wall", "cpu", "cpu", "cpu")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 16 {
			fail("bad size %q", s)
		}
		payload := make([]byte, n)
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for i := range payload {
			payload[i] = byte(r.Uint32())
		}
		// Footer: RDB version 10, then a checksum that is wrong.
		payload[n-10], payload[n-9] = 10, 0
		body := payload[:n-8]
		bad := abcrc.Checksum(body) ^ 1
		for i := range 8 {
			payload[n-8+i] = byte(bad >> (8 * i))
		}
		tooNew := slices.Clone(payload)
		tooNew[n-10], tooNew[n-9] = 0xff, 0xff
		batch := max(1, (256<<20)/n)

		var red, redCPU, ab, abCPU, gostd, gostdCPU []float64
		for range *rounds {
			withCRC := redisCPU(redisPID, func() { restoreBatch(ctx, c, payload, batch) })
			without := redisCPU(redisPID, func() { restoreBatch(ctx, c, tooNew, batch) })
			if d := (withCRC - without) / time.Duration(batch); d > 0 {
				redCPU = append(redCPU, gbps(len(body), d))
			}

			c.SlowLogReset(ctx)
			err := c.Do(ctx, "RESTORE", "k", 0, payload).Err()
			if err == nil || !strings.Contains(err.Error(), "checksum are wrong") {
				fail("RESTORE with a bad checksum: %v", err)
			}
			logs, err := c.SlowLogGet(ctx, 10).Result()
			if err != nil {
				fail("SLOWLOG GET: %v", err)
			}
			found := false
			for _, l := range logs {
				if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "restore") {
					red = append(red, gbps(len(body), l.Duration))
					found = true
				}
			}
			if !found {
				fail("no RESTORE in SLOWLOG")
			}
			w, cpu := timeIt(func() { sink ^= abcrc.Checksum(body) })
			ab, abCPU = append(ab, gbps(len(body), w)), append(abCPU, gbps(len(body), cpu))
			w, cpu = timeIt(func() { sink ^= crc64.Checksum(body, goTable) })
			gostd, gostdCPU = append(gostd, gbps(len(body), w)), append(gostdCPU, gbps(len(body), cpu))
		}
		fmt.Printf("%-10d %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.1fx %9.1fx\n", n,
			median(red), median(redCPU), median(ab), median(abCPU), median(gostd), median(gostdCPU),
			median(abCPU)/median(redCPU), median(abCPU)/median(gostdCPU))
	}
}

var sink uint64

// timeIt runs f enough times to take at least 200 ms and returns the wall
// and CPU time of one run.
func timeIt(f func()) (wall, cpu time.Duration) {
	start, c0 := time.Now(), selfCPU()
	runs := 0
	for time.Since(start) < 200*time.Millisecond {
		f()
		runs++
	}
	return time.Since(start) / time.Duration(runs), (selfCPU() - c0) / time.Duration(runs)
}

// restoreBatch sends RESTORE with payload n times; each must fail with
// Redis's checksum error.
func restoreBatch(ctx context.Context, c *redis.Client, payload []byte, n int) {
	for range n {
		err := c.Do(ctx, "RESTORE", "k", 0, payload).Err()
		if err == nil || !strings.Contains(err.Error(), "checksum are wrong") {
			fail("RESTORE with a bad payload: %v", err)
		}
	}
}

// redisCPU returns the CPU time process pid spent while f ran.
func redisCPU(pid int, f func()) time.Duration {
	before := procCPU(pid)
	f()
	return procCPU(pid) - before
}

// procCPU reads utime+stime of a process from /proc/PID/stat (clock ticks,
// 100 per second on Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		fail("%v", err)
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime 14 and stime 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func gbps(n int, d time.Duration) float64 {
	if d <= 0 {
		d = time.Microsecond // SLOWLOG's resolution
	}
	return float64(n) / d.Seconds() / 1e9
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crc64redis: "+format+"\n", args...)
	os.Exit(1)
}
