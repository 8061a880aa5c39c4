package recipes

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/redis/go-redis/v9"
)

// Combining: at one round trip per call, a recipe's cost on both ends is
// the round trip's (a read and a write on each side, a few µs), not the
// command's (well under a µs). Calls that goroutines make at the same time
// through one client are therefore sent together: the first caller sends
// its call at once, alone; the calls made while a round trip is out queue
// up and leave together, in one round trip, as soon as it is back. No call
// waits for a timer, and none waits for more than the round trip ahead of
// it and its own. Each call's arguments (its key, its clock reading) are
// its own, taken when it was made, so its answer is the one it would have
// had alone; a combined call is sent a little later, which is no different
// from a slower network.
//
// A combiner sends through a *redis.Client only: a cluster or ring client
// routes each command by its key, and the calls are then sent one by one.

// call is one queued operation. in is what the combiner's send reads; n
// and err are its answer. wake receives true when the call's goroutine is
// to send the next round trip, false when its answer is ready.
type call struct {
	in   any
	n    int64
	err  error
	wake chan bool
}

// combiner queues calls and sends them in round trips, one at a time.
type combiner struct {
	mu      sync.Mutex
	pending []*call
	busy    bool // a round trip is out, or its sender is being woken
	send    sendFunc
}

var callPool = sync.Pool{New: func() any { return &call{wake: make(chan bool, 1)} }}

// do runs in through the combiner and returns its answer. A call whose
// context is done is not sent; once queued, it waits for its answer.
func (b *combiner) do(ctx context.Context, c *redis.Client, in any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cl := callPool.Get().(*call)
	cl.in, cl.n, cl.err = in, 0, nil
	b.mu.Lock()
	b.pending = append(b.pending, cl)
	lead := !b.busy
	b.busy = true
	b.mu.Unlock()
	if lead || <-cl.wake {
		b.round(ctx, c)
	}
	n, err := cl.n, cl.err
	cl.in = nil
	callPool.Put(cl)
	return n, err
}

// round sends what is pending, answers it, and hands the next round trip
// to the first call that queued meanwhile. The round trip does not stop
// when the sender's context does: the calls of other goroutines ride on
// it (go-redis's timeouts still bound it).
func (b *combiner) round(ctx context.Context, c *redis.Client) {
	b.mu.Lock()
	calls := b.pending
	b.pending = nil
	b.mu.Unlock()
	b.send(context.WithoutCancel(ctx), c, calls)
	// The sender's call is the first: it queued alone (nothing was out)
	// or was the first to queue behind the last round trip.
	for _, cl := range calls[1:] {
		cl.wake <- false
	}
	b.mu.Lock()
	var next *call
	if len(b.pending) > 0 {
		next = b.pending[0]
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	if next != nil {
		next.wake <- true
	}
}

// combiners holds the combiners of the clients in use, one per kind of
// call. A client's entries go when the client is collected (the entries
// hold it weakly).
var combiners sync.Map // combinerKey -> *combiner

type combinerKey struct {
	c    weak.Pointer[redis.Client]
	kind string
}

// combinerOf returns c's combiner for kind, made with send on first use.
func combinerOf(c *redis.Client, kind string, send sendFunc) *combiner {
	k := combinerKey{weak.Make(c), kind}
	if b, ok := combiners.Load(k); ok {
		return b.(*combiner)
	}
	b, loaded := combiners.LoadOrStore(k, &combiner{send: send})
	if !loaded {
		runtime.AddCleanup(c, func(k combinerKey) { combiners.Delete(k) }, k)
	}
	return b.(*combiner)
}

// sendFunc makes one round trip of calls through c and sets each one's
// answer.
type sendFunc func(ctx context.Context, c redis.UniversalClient, calls []*call)

// combinerRef is a recipe's handle on its client's combiner for one
// kind of call, looked up on first use (the lookup's weak pointer costs
// more than a call's combining).
type combinerRef struct{ p atomic.Pointer[combiner] }

// combined runs in through c's combiner for kind (each kind has one send,
// for every caller), or alone where c cannot combine. ref is the caller's
// handle, always on c.
func combined(ctx context.Context, c redis.UniversalClient, ref *combinerRef, kind string, send sendFunc, in any) (int64, error) {
	if rc, ok := c.(*redis.Client); ok {
		b := ref.p.Load()
		if b == nil {
			b = combinerOf(rc, kind, send)
			ref.p.Store(b)
		}
		return b.do(ctx, rc, in)
	}
	cl := &call{in: in}
	send(ctx, c, []*call{cl})
	return cl.n, cl.err
}

// answerAll gives every call err.
func answerAll(calls []*call, err error) {
	for _, cl := range calls {
		cl.err = err
	}
}

// answerPairs gives each call the first error of its two commands, cmds
// holding two per call in the calls' order.
func answerPairs(calls []*call, cmds []redis.Cmder) {
	for i, cl := range calls {
		if cl.err = cmds[2*i].Err(); cl.err == nil {
			cl.err = cmds[2*i+1].Err()
		}
	}
}
