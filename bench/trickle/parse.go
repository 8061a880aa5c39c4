package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// The parse cost per byte (-parse): commands of one size, made of 16-byte
// arguments, sent back to back in 16 KB writes until total bytes have
// gone, then the server's CPU time per MB and the MB/s. The command is
// not one the server knows, so both servers parse it whole and answer
// with an error without running anything: what is measured is reading,
// parsing and freeing the arguments (and, for small commands, each
// command's lookup and error reply).

// parseCommand encodes an unknown command of about size bytes.
func parseCommand(size int) []byte {
	n := max(1, (size-20)/23) // "$16\r\n" + 16 + "\r\n"
	b := fmt.Appendf(nil, "*%d\r\n$7\r\nNOTACMD\r\n", n+1)
	for i := 0; i < n; i++ {
		b = fmt.Appendf(b, "$16\r\n%016d\r\n", i)
	}
	return b
}

// parseRun sends count copies of cmd and returns the wall time and the
// server's CPU time until the PING sent after them is answered.
func parseRun(s *harness.Server, cmd []byte, count int) (wall time.Duration, cpu int64) {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		// Replies are read as they come; the last is the PING's.
		buf := make([]byte, 1<<16)
		var tail []byte
		for {
			n, err := c.Read(buf)
			tail = append(tail, buf[:n]...)
			if len(tail) > 64 {
				tail = tail[len(tail)-64:]
			}
			if bytes.HasSuffix(tail, []byte("+PONG\r\n")) {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	cpu0, t0 := s.CPUNanos(), time.Now()
	for i := 0; i < count; i++ {
		for p := cmd; len(p) > 0; {
			k := min(len(p), 16<<10)
			if _, err := c.Write(p[:k]); err != nil {
				harness.Fatal("write: %v", err)
			}
			p = p[k:]
		}
	}
	c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	if err := <-done; err != nil && err != io.EOF {
		harness.Fatal("read: %v", err)
	}
	return time.Since(t0), s.CPUNanos() - cpu0
}

// parseBench runs the sizes on every server, A B A B, and prints the
// medians of MB/s and CPU ms per MB.
func parseBench(servers []*harness.Server, sizes []int, total, rounds int) {
	harness.Header(fmt.Sprintf("Unknown commands of 16-byte arguments, %d MB of them per run, in 16 KB writes; load average %s.", total>>20, harness.LoadAvg()))
	type fig struct{ mbs, cpuPerMB []float64 }
	res := map[string]*fig{}
	for r := 0; r < rounds; r++ {
		for _, size := range sizes {
			cmd := parseCommand(size)
			count := max(1, total/len(cmd))
			mb := float64(len(cmd)*count) / (1 << 20)
			for _, s := range servers {
				wall, cpu := parseRun(s, cmd, count)
				k := fmt.Sprintf("%s/%d", s.Name, size)
				if res[k] == nil {
					res[k] = &fig{}
				}
				res[k].mbs = append(res[k].mbs, mb/wall.Seconds())
				res[k].cpuPerMB = append(res[k].cpuPerMB, float64(cpu)/1e6/mb)
				fmt.Printf("round %d %-7s %9s x %-6d %7.1f MB/s  %6.2f ms CPU per MB\n", r+1, s.Name, sizeName(size), count, mb/wall.Seconds(), float64(cpu)/1e6/mb)
			}
		}
	}
	fmt.Printf("\nMedians of %d rounds:\n\n| command size |", rounds)
	for _, s := range servers {
		fmt.Printf(" %s MB/s | %s CPU ms/MB |", s.Name, s.Name)
	}
	fmt.Print("\n|---|")
	fmt.Print(strings.Repeat("---|---|", len(servers)))
	fmt.Println()
	for _, size := range sizes {
		fmt.Printf("| %s |", sizeName(size))
		for _, s := range servers {
			f := res[fmt.Sprintf("%s/%d", s.Name, size)]
			fmt.Printf(" %.1f | %.2f |", harness.Median(f.mbs), harness.Median(f.cpuPerMB))
		}
		fmt.Println()
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// parseSizes parses -parse ("1kb,1mb,100mb").
func parseSizes(list string) []int {
	var out []int
	for _, f := range strings.Split(strings.ToLower(list), ",") {
		mult := 1
		switch {
		case strings.HasSuffix(f, "kb"):
			mult, f = 1<<10, strings.TrimSuffix(f, "kb")
		case strings.HasSuffix(f, "mb"):
			mult, f = 1<<20, strings.TrimSuffix(f, "mb")
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			harness.Fatal("bad size %q", f)
		}
		out = append(out, v*mult)
	}
	return out
}
