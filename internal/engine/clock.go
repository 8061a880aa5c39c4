package engine

import (
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
)

// Reading the wall clock (time.Now) costs two vDSO clock reads, wall and
// monotonic; a command used to cost three (time.Now at its start,
// time.Since at its end), and a pipeline-1 request three more for the
// connection's idle stamps. On a virtual machine each read is tens of
// nanoseconds. Abacus reads only the monotonic clock and derives wall time
// from it, resynchronising with the wall clock every wallResync, so a step
// of the system clock shows within that time (Redis itself caches the time
// per event-loop iteration).

// wallResync is how often the derived wall time is checked against the
// wall clock.
const wallResync = int64(100 * time.Millisecond)

var (
	// wallOff is wall-clock nanoseconds minus the monotonic reading (since
	// monoBase), taken at wallSynced; the two are read separately, and
	// each value written is valid on its own.
	wallOff    atomic.Int64
	wallSynced atomic.Int64
)

func init() { resyncWall() }

func resyncWall() {
	t := time.Now()
	m := int64(t.Sub(monoBase))
	wallOff.Store(t.UnixNano() - m)
	wallSynced.Store(m)
}

// wallMsAt is the unix time in ms at monotonic reading mono.
func wallMsAt(mono time.Duration) int64 {
	if int64(mono)-wallSynced.Load() > wallResync {
		resyncWall()
	}
	return (int64(mono) + wallOff.Load()) / int64(time.Millisecond)
}

// nowAt is the command's time for a monotonic reading: derived from it on
// the wall clock, the configured clock's reading otherwise.
func (e *Env) nowAt(mono time.Duration) int64 {
	if _, real := e.Clock.(clock.Real); real {
		return wallMsAt(mono)
	}
	return e.Clock.NowMs()
}

// NowMs is the server's time in unix ms, as Clock gives it, for one
// monotonic clock read on the wall clock. The connection layer stamps its
// reads and writes with it. Safe for concurrent use.
func (e *Env) NowMs() int64 {
	if _, real := e.Clock.(clock.Real); real {
		return wallMsAt(time.Since(monoBase))
	}
	return e.Clock.NowMs()
}
