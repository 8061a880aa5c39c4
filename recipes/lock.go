package recipes

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	lockAcquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false`)
	lockExtendScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	lockReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
)

// Lock is a lease with a time to live and a fencing token: a number that
// grows with every acquisition, to be sent with every write the lock
// protects so that the storage can refuse writes from a holder that
// paused past its TTL while another took over (keep the largest token
// seen, refuse smaller ones).
//
// Native: MULTI SET NX PX + INCR to acquire, SET IFEQ PX to extend,
// DELIFEQ to release. Fallback: the same steps as scripts. Natively the
// token is drawn on every attempt, taken or not, so the two paths number
// differently; on both, holders' tokens increase in the order they took
// the lock.
//
// Calls made at the same time through one client share round trips
// (combine.go): natively, acquisitions, extensions and releases go in one
// MULTI (each acquisition's SET and INCR still with nothing between
// them); the fallback's scripts go in one pipeline.
type Lock struct {
	c    redis.UniversalClient
	key  string
	ttl  time.Duration
	opts Options
	mode modeOf
	// the client's combiners: the native calls', and the fallback's
	multi, pipe combinerRef
}

// NewLock returns the lock named key (its token counter is key:fence).
func NewLock(c redis.UniversalClient, key string, ttl time.Duration, opts Options) *Lock {
	return &Lock{c: c, key: oneSlot(key, c), ttl: ttl, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (l *Lock) Mode(ctx context.Context) (Mode, error) { return l.mode.get(ctx, l.c, l.opts.Mode) }

// one sends the command that queue makes through the lock's combiner for
// path m: the native calls' MULTI, or the fallback's pipeline.
func (l *Lock) one(ctx context.Context, m Mode, queue func(ctx context.Context, p redis.Pipeliner) *redis.Cmd) (*redis.Cmd, error) {
	if m == Native {
		return oneIn(ctx, l.c, &l.multi, kindMulti, sendMulti, queue)
	}
	return pipeOne(ctx, l.c, &l.pipe, queue)
}

// Lease is a held lock.
type Lease struct {
	Token int64
	owner string
	l     *Lock
}

// Acquire takes the lock if nobody holds it; ok is false if somebody
// does.
func (l *Lock) Acquire(ctx context.Context) (lease *Lease, ok bool, err error) {
	m, err := l.Mode(ctx)
	if err != nil {
		return nil, false, err
	}
	owner := randomID()
	ms := max(l.ttl.Milliseconds(), 1)
	if m == Native {
		var set *redis.StatusCmd
		var tok *redis.IntCmd
		_, err := combined(ctx, l.c, &l.multi, kindMulti, sendMulti, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
			set = p.SetArgs(ctx, l.key, owner, redis.SetArgs{Mode: "NX", TTL: time.Duration(ms) * time.Millisecond})
			tok = p.Incr(ctx, l.key+":fence")
			return func() error {
				if err := set.Err(); err != nil && !isNil(err) {
					return err
				}
				return tok.Err()
			}
		}))
		if err != nil {
			return nil, false, err
		}
		if set.Err() != nil || set.Val() != "OK" {
			return nil, false, nil
		}
		return &Lease{Token: tok.Val(), owner: owner, l: l}, true, nil
	}
	cmd, err := l.one(ctx, m, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		return lockAcquireScript.EvalSha(ctx, p, []string{l.key, l.key + ":fence"}, owner, ms)
	})
	var tok int64
	if err == nil {
		tok, err = cmd.Int64()
	}
	if isNil(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &Lease{Token: tok, owner: owner, l: l}, true, nil
}

// Extend sets the lease's TTL to ttl from now if it is still held; false
// means it was lost (expired, and perhaps taken by another).
func (s *Lease) Extend(ctx context.Context, ttl time.Duration) (bool, error) {
	m, err := s.l.Mode(ctx)
	if err != nil {
		return false, err
	}
	ms := max(ttl.Milliseconds(), 1)
	cmd, err := s.l.one(ctx, m, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		if m == Native {
			return p.Do(ctx, "SET", s.l.key, s.owner, "IFEQ", s.owner, "PX", ms)
		}
		return lockExtendScript.EvalSha(ctx, p, []string{s.l.key}, s.owner, ms)
	})
	if m == Native {
		if isNil(err) {
			return false, nil
		}
		return err == nil, err
	}
	if err != nil {
		return false, err
	}
	n, err := cmd.Int64()
	return n == 1, err
}

// Release frees the lock if it is still this lease's; false means it was
// lost already.
func (s *Lease) Release(ctx context.Context) (bool, error) {
	m, err := s.l.Mode(ctx)
	if err != nil {
		return false, err
	}
	cmd, err := s.l.one(ctx, m, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		if m == Native {
			return p.Do(ctx, "DELIFEQ", s.l.key, s.owner)
		}
		return lockReleaseScript.EvalSha(ctx, p, []string{s.l.key}, s.owner)
	})
	if err != nil {
		return false, err
	}
	n, err := cmd.Int64()
	return n == 1, err
}
