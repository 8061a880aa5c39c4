package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// pidOf asks the server for its process id (INFO server process_id), so
// that its children (redis-server's fork) can be found under /proc.
func pidOf(s *harness.Server) int {
	c := s.Dial()
	defer c.Close()
	pid, _ := strconv.Atoi(field(c.Do("INFO", "server"), "process_id"))
	if pid == 0 {
		harness.Fatal("%s: no process_id in INFO", s.Name)
	}
	return pid
}

// field returns the value of name in an INFO reply ("" when absent).
func field(info, name string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	return ""
}

func fieldInt(info, name string) int64 {
	v, _ := strconv.ParseInt(field(info, name), 10, 64)
	return v
}

// tree is pid and its descendants, from /proc/<pid>/task/*/children.
func tree(pid int) []int {
	out := []int{pid}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, tree(c)...)
			}
		}
	}
	return out
}

// kbField reads a "Name:   N kB" line of a /proc file, in bytes.
func kbField(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// treeMem is the RSS and the PSS (proportional set size: a page shared by
// n processes counts 1/n to each) summed over pid and its children. For
// redis-server during a fork the RSS sum counts every page the child
// still shares with its parent twice; the PSS sum is the physical memory
// the two hold, the parent's plus the child's copy-on-write copies.
func treeMem(pid int, withPSS bool) (rss, pss int64) {
	for _, p := range tree(pid) {
		rss += kbField(fmt.Sprintf("/proc/%d/status", p), "VmRSS")
		if withPSS {
			pss += kbField(fmt.Sprintf("/proc/%d/smaps_rollup", p), "Pss")
		}
	}
	return rss, pss
}

// cpuTicks is the process's user+system CPU time in clock ticks (1/100
// s), including the children it has reaped (redis-server's fork).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var t int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		v, _ := strconv.ParseInt(f[i], 10, 64)
		t += v
	}
	return t
}

// memSampler records the peak RSS (every 10 ms) and PSS (every 50 ms:
// reading smaps_rollup walks the page tables) of a process tree.
type memSampler struct {
	stop             chan struct{}
	done             sync.WaitGroup
	peakRSS, peakPSS int64
	samples          int
}

func sampleMem(pid int) *memSampler {
	m := &memSampler{stop: make(chan struct{})}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			rss, pss := treeMem(pid, i%5 == 0)
			m.peakRSS = max(m.peakRSS, rss)
			m.peakPSS = max(m.peakPSS, pss)
			m.samples++
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memSampler) end() {
	close(m.stop)
	m.done.Wait()
}
