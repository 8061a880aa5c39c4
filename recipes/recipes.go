package recipes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Mode says which commands a recipe sends.
type Mode int

const (
	// Auto asks the server once, on first use, whether it is Abacus
	// (INFO server reports abacus_version) and picks Native or Fallback.
	Auto Mode = iota
	// Native uses Abacus's commands (TS.*, CL.THROTTLE, RATELIMIT.SLIDING,
	// INCREX, SET IFEQ, DELIFEQ, HPEXPIREAT).
	Native
	// Fallback uses what redis-server 7 has: sorted sets, hashes and Lua.
	Fallback
)

func (m Mode) String() string {
	switch m {
	case Native:
		return "native"
	case Fallback:
		return "fallback"
	}
	return "auto"
}

// Options are shared by every recipe. The zero value detects the server
// and reads the local clock.
type Options struct {
	// Mode forces a path; Auto detects it.
	Mode Mode
	// Now is the clock that timestamps events, slices and windows; nil
	// means time.Now. GCRA on Abacus (CL.THROTTLE) and key expiry always
	// run on the server's clock, so the two must agree to the millisecond
	// for Native and Fallback to answer alike.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o Options) nowMs() int64 { return o.now().UnixMilli() }

// Detect reports whether c is connected to Abacus: INFO server names an
// abacus_version there and nowhere else.
func Detect(ctx context.Context, c redis.UniversalClient) (bool, error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return false, err
	}
	return strings.Contains(info, "abacus_version:"), nil
}

// modeOf resolves Auto for one client, once; the answer is kept even
// when detection failed so that a recipe does not probe on every call
// (the error is returned every time instead).
type modeOf struct {
	once sync.Once
	mode Mode
	err  error
}

func (m *modeOf) get(ctx context.Context, c redis.UniversalClient, want Mode) (Mode, error) {
	if want != Auto {
		return want, nil
	}
	m.once.Do(func() {
		var native bool
		native, m.err = Detect(ctx, c)
		m.mode = Fallback
		if native {
			m.mode = Native
		}
	})
	return m.mode, m.err
}

// Point is one slice or bucket of a series: its start and its value.
type Point struct {
	T time.Time
	V float64
}

// randomID is 16 random hex digits: an owner of a lock, a unique member.
func randomID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ignoreErr drops an error whose text contains one of the given parts,
// for idempotent setup commands ("key already exists").
func ignoreErr(err error, parts ...string) error {
	if err == nil {
		return nil
	}
	for _, p := range parts {
		if strings.Contains(err.Error(), p) {
			return nil
		}
	}
	return err
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }

// setupOnce runs f until it first succeeds; later calls return nil
// without running it.
type setupOnce struct {
	mu   sync.Mutex
	done bool
}

func (s *setupOnce) do(f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	s.done = true
	return nil
}

// reset makes the next do run f again.
func (s *setupOnce) reset() {
	s.mu.Lock()
	s.done = false
	s.mu.Unlock()
}
