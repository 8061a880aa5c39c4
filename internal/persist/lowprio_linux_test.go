package persist

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRunLowKeepsItsThreads: the work runs under SCHED_IDLE at
// encoderNice, the workers
// are reused, and no thread ends: children started with a parent-death
// signal from any of the process's threads survive many saves' workers.
func TestRunLowKeepsItsThreads(t *testing.T) {
	var kids []*exec.Cmd
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command("sleep", "30")
			c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := c.Start(); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			kids = append(kids, c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range 4 {
		var nices, policies sync.Map
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runLow(func() {
					p, _ := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
					nices.Store(i, 20-p)
					a, err := unix.SchedGetAttr(0, 0)
					if err != nil {
						t.Error(err)
						return
					}
					policies.Store(i, a.Policy)
				})
			}()
		}
		wg.Wait()
		nices.Range(func(_, v any) bool {
			if v.(int) < encoderNice {
				t.Fatalf("work ran at nice %d, want %d", v, encoderNice)
			}
			return true
		})
		policies.Range(func(_, v any) bool {
			if v.(uint32) != unix.SCHED_IDLE {
				t.Fatalf("work ran under scheduling policy %d, want SCHED_IDLE (%d)", v, unix.SCHED_IDLE)
			}
			return true
		})
	}
	lowWorkers.mu.Lock()
	idle := len(lowWorkers.idle)
	lowWorkers.mu.Unlock()
	if idle == 0 || idle > 32 {
		t.Fatalf("%d idle workers after 32 runs of at most 8 at once", idle)
	}
	time.Sleep(50 * time.Millisecond) // the signal of a thread's end, if any, is delivered
	for _, c := range kids {
		// A killed child stays a zombie (state Z) until waited for.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) < 3 || f[2] != "S" && f[2] != "R" {
			t.Fatalf("a child started from one of the threads is gone: %q", b)
		}
	}
}

// TestBellIsAnEventfd: on Linux the encoder sleeps in read(2) on an
// eventfd, so that the loop's ring does not queue the encoder's
// goroutine on the loop's processor.
func TestBellIsAnEventfd(t *testing.T) {
	b := newBell()
	defer b.close()
	if b.fd < 0 || b.ch != nil {
		t.Fatalf("bell fd %d, channel %v: want an eventfd", b.fd, b.ch != nil)
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", b.fd))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(link, "eventfd") {
		t.Fatalf("bell fd is %q, want an eventfd", link)
	}
}
