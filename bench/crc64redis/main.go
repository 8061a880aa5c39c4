// Command crc64redis measures redis-server's CRC-64 next to internal/crc64 in
// one run. redis-server computes the checksum of a DUMP payload before
// anything else in RESTORE (after the version check); a payload with a wrong
// checksum makes RESTORE fail right after that pass, so the command's
// SLOWLOG duration is Redis's crc64 over the payload. The same bytes are
// then checksummed by crc64.Checksum and by hash/crc64, alternating, and the
// medians are printed.
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
	"time"

	"github.com/redis/go-redis/v9"

	abcrc "github.com/abacusdb/abacus/internal/crc64"
	"github.com/abacusdb/abacus/internal/servertest"
)

func main() {
	sizes := flag.String("sizes", "65536,1048576,67108864", "payload sizes in bytes")
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

	fmt.Printf("%-10s %14s %14s %14s %10s %10s\n", "size", "redis GB/s", "abacus GB/s", "hash/crc64", "ab/redis", "ab/hash")
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

		var red, ab, gostd []float64
		for range *rounds {
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
			ab = append(ab, gbps(len(body), timeIt(func() { sink ^= abcrc.Checksum(body) })))
			gostd = append(gostd, gbps(len(body), timeIt(func() { sink ^= crc64.Checksum(body, goTable) })))
		}
		mr, ma, mg := median(red), median(ab), median(gostd)
		fmt.Printf("%-10d %14.2f %14.2f %14.2f %9.1fx %9.1fx\n", n, mr, ma, mg, ma/mr, ma/mg)
	}
}

var sink uint64

// timeIt runs f enough times to take at least 20 ms and returns the time of
// one run (the loop hides timer resolution on the small sizes).
func timeIt(f func()) time.Duration {
	start := time.Now()
	runs := 0
	for time.Since(start) < 20*time.Millisecond {
		f()
		runs++
	}
	return time.Since(start) / time.Duration(runs)
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
