package persist

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// goDrive is an Options.Drive that steps on a goroutine of its own,
// taking lock for each step, as engine.Env.RunInBackground does without
// an event loop.
func goDrive(lock sync.Locker) func(step func(time.Time) Step) func() {
	return func(step func(time.Time) Step) func() {
		kick := make(chan struct{}, 1)
		go func() {
			for {
				lock.Lock()
				r := step(time.Now().Add(100 * time.Microsecond))
				lock.Unlock()
				switch r {
				case StepDone:
					return
				case StepBlocked:
					<-kick
				}
			}
		}()
		return func() {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}
}

// failAfter takes n bytes, then fails every write.
type failAfter struct {
	n      int
	writes int
}

var errFull = errors.New("no space left")

func (w *failAfter) Write(p []byte) (int, error) {
	w.writes++
	if len(p) > w.n {
		return 0, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// A driven save to a file has the encoder write the chunks itself: a
// write error there cancels the save, and Run reports it, as a writer
// goroutine's error does.
func TestDirectWriteErrorCancelsTheSave(t *testing.T) {
	for _, okBytes := range []int{0, 300 << 10} {
		t.Run(fmt.Sprint(okBytes), func(t *testing.T) {
			ks := keyspace.New(1)
			for i := range 50000 {
				ks.DBs[0].Set(fmt.Sprintf("key:%d", i), keyspace.NewString([]byte(fmt.Sprintf("value-%030d", i))), false)
			}
			var mu sync.Mutex
			mu.Lock()
			b := StartBackground(ks, &mu, Options{Drive: goDrive(&mu)})
			mu.Unlock()
			w := &failAfter{n: okBytes}
			err := b.stream(w, true)
			if !errors.Is(err, errFull) {
				t.Fatalf("stream: %v, want %v", err, errFull)
			}
			mu.Lock()
			defer mu.Unlock()
			if ks.SnapshotOpen() {
				t.Fatal("the snapshot is still open")
			}
			if w.writes == 0 {
				t.Fatal("nothing written")
			}
		})
	}
}

// Without errors the encoder's own writes give the same bytes as the
// writer goroutine's.
func TestDirectWriteSameBytes(t *testing.T) {
	ks := keyspace.New(2)
	for i := range 20000 {
		ks.DBs[i%2].Set(fmt.Sprintf("key:%d", i), keyspace.NewString([]byte(fmt.Sprintf("value-%030d", i))), false)
	}
	save := func(direct bool) []byte {
		var mu sync.Mutex
		mu.Lock()
		b := StartBackground(ks, &mu, Options{Drive: goDrive(&mu)})
		mu.Unlock()
		var out bytesWriter
		if err := b.stream(&out, direct); err != nil {
			t.Fatal(err)
		}
		return out.b
	}
	a, d := save(false), save(true)
	if string(a) != string(d) || len(a) < 20000*20 {
		t.Fatalf("direct save differs: %d bytes against %d", len(d), len(a))
	}
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var _ io.Writer = (*bytesWriter)(nil)

// A driven save runs with one processor more, and leaves GOMAXPROCS as
// it found it.
func TestDrivenSaveRestoresGOMAXPROCS(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	ks := keyspace.New(1)
	for i := range 1000 {
		ks.DBs[0].Set(fmt.Sprintf("key:%d", i), keyspace.NewString([]byte("v")), false)
	}
	var mu sync.Mutex
	during := 0
	drive := goDrive(&mu)
	mu.Lock()
	b := StartBackground(ks, &mu, Options{Drive: func(step func(time.Time) Step) func() {
		during = runtime.GOMAXPROCS(0)
		return drive(step)
	}})
	mu.Unlock()
	if err := b.stream(&bytesWriter{}, true); err != nil {
		t.Fatal(err)
	}
	if during != before+1 {
		t.Errorf("GOMAXPROCS during the save %d, want %d", during, before+1)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS after the save %d, want %d", after, before)
	}
}
