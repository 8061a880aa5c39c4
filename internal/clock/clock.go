// Package clock is the server's one source of time, in unix milliseconds.
// Expiry, TIME and time series read it; tests replace it with a Manual clock
// to move time without sleeping.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock returns the current time in unix milliseconds.
type Clock interface {
	NowMs() int64
	NowUs() int64
}

// Real is the wall clock.
type Real struct{}

// NowMs is time.Now in milliseconds.
func (Real) NowMs() int64 { return time.Now().UnixMilli() }

// NowUs is time.Now in microseconds.
func (Real) NowUs() int64 { return time.Now().UnixMicro() }

// Manual is a clock that moves only when told to. Safe for concurrent use.
type Manual struct{ us atomic.Int64 }

// NewManual starts a manual clock at ms.
func NewManual(ms int64) *Manual {
	m := &Manual{}
	m.us.Store(ms * 1000)
	return m
}

// NowMs returns the clock's time.
func (m *Manual) NowMs() int64 { return m.us.Load() / 1000 }

// NowUs returns the clock's time in microseconds.
func (m *Manual) NowUs() int64 { return m.us.Load() }

// Set moves the clock to ms.
func (m *Manual) Set(ms int64) { m.us.Store(ms * 1000) }

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) { m.us.Add(d.Microseconds()) }
