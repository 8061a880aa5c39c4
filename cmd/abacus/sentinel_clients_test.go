package main

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/testenv"
)

// ackWriter is a client writing k:0, k:1 ... through Sentinel, each
// followed by WAIT 1 1000; it records the keys a replica acknowledged.
type ackWriter struct {
	name  string
	mu    sync.Mutex
	acked []string
	stop  func()
}

func (w *ackWriter) ack(key string) {
	w.mu.Lock()
	w.acked = append(w.acked, key)
	w.mu.Unlock()
}

// snapshot returns the keys acknowledged so far.
func (w *ackWriter) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// value is what writer key k:n holds: n.
func ackedValue(key string) string { return key[strings.LastIndexByte(key, ':')+1:] }

// goFailoverWriter writes through go-redis's NewFailoverClient, retrying
// after errors (the primary gone, READONLY from a demoted one) as an
// application would.
func goFailoverWriter(t *testing.T, sentinels []string) *ackWriter {
	w := &ackWriter{name: "go-redis"}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: sentinels,
		DialTimeout: time.Second, ReadTimeout: 3 * time.Second, MaxRetries: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; {
			key := "go:" + strconv.Itoa(i)
			if err := c.Set(ctx, key, i, 0).Err(); err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			i++
			if n, err := c.Do(ctx, "WAIT", 1, 1000).Int(); err == nil && n >= 1 {
				w.ack(key)
			} else if err != nil && !errors.Is(err, context.Canceled) {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	w.stop = func() { cancel(); <-done; c.Close() }
	t.Cleanup(w.stop)
	return w
}

// pyWriter is a redis-py client on Sentinel.master_for doing the same.
const pyWriter = `
import sys, time, redis
from redis.sentinel import Sentinel
addrs = [(a.rsplit(':', 1)[0], int(a.rsplit(':', 1)[1])) for a in sys.argv[1:]]
m = Sentinel(addrs, socket_timeout=2).master_for('m', socket_timeout=3, socket_connect_timeout=1)
i = 0
while True:
    k = 'py:%d' % i
    try:
        m.set(k, i)
        i += 1
        if m.execute_command('WAIT', 1, 1000) >= 1:
            print('ACK', k, flush=True)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ResponseError) as e:
        print('ERR', type(e).__name__, e, flush=True)
        time.sleep(0.1)
`

func pyFailoverWriter(t *testing.T, sentinels []string) *ackWriter {
	py := testenv.PythonRedis(t)
	w := &ackWriter{name: "redis-py"}
	cmd := exec.Command(py, append([]string{"-c", pyWriter}, sentinels...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
				w.ack(k)
			}
		}
	}()
	var once sync.Once
	w.stop = func() {
		once.Do(func() {
			// Lines already written stay readable after the kill.
			cmd.Process.Kill()
			<-read
			cmd.Wait()
			if strings.Contains(stderr.String(), "Traceback") {
				t.Errorf("redis-py writer failed:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(w.stop)
	return w
}
