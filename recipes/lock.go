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
type Lock struct {
	c    redis.UniversalClient
	key  string
	ttl  time.Duration
	opts Options
	mode modeOf
}

// NewLock returns the lock named key (its token counter is key:fence).
func NewLock(c redis.UniversalClient, key string, ttl time.Duration, opts Options) *Lock {
	return &Lock{c: c, key: oneSlot(key, c), ttl: ttl, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (l *Lock) Mode(ctx context.Context) (Mode, error) { return l.mode.get(ctx, l.c, l.opts.Mode) }

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
		_, err := l.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			set = p.SetArgs(ctx, l.key, owner, redis.SetArgs{Mode: "NX", TTL: time.Duration(ms) * time.Millisecond})
			tok = p.Incr(ctx, l.key+":fence")
			return nil
		})
		if err != nil && !isNil(err) {
			return nil, false, err
		}
		if set.Err() != nil || set.Val() != "OK" {
			return nil, false, nil
		}
		return &Lease{Token: tok.Val(), owner: owner, l: l}, true, nil
	}
	tok, err := lockAcquireScript.Run(ctx, l.c, []string{l.key, l.key + ":fence"}, owner, ms).Int64()
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
	if m == Native {
		err := s.l.c.Do(ctx, "SET", s.l.key, s.owner, "IFEQ", s.owner, "PX", ms).Err()
		if isNil(err) {
			return false, nil
		}
		return err == nil, err
	}
	n, err := lockExtendScript.Run(ctx, s.l.c, []string{s.l.key}, s.owner, ms).Int64()
	return n == 1, err
}

// Release frees the lock if it is still this lease's; false means it was
// lost already.
func (s *Lease) Release(ctx context.Context) (bool, error) {
	m, err := s.l.Mode(ctx)
	if err != nil {
		return false, err
	}
	var n int64
	if m == Native {
		n, err = s.l.c.Do(ctx, "DELIFEQ", s.l.key, s.owner).Int64()
	} else {
		n, err = lockReleaseScript.Run(ctx, s.l.c, []string{s.l.key}, s.owner).Int64()
	}
	return n == 1, err
}
