package recipes

import (
	"context"
	"fmt"
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

// The kinds of call that several recipes share, each with its one send.
// Calls of different recipes through one client may share a round trip:
// each call's commands and answer are its own.
const (
	kindMadd  = "ts.madd" // sendMadd: samples of any series, one TS.MADD
	kindPipe  = "pipe"    // sendPiped: each call's commands, one pipeline
	kindMulti = "multi"   // sendMulti: each call's commands, one MULTI
)

// maddIn is one call's samples for a shared TS.MADD: key, timestamp and
// value, three arguments a sample. After a send that failed some of them
// it holds only those: a retry adds them and not the others again.
type maddIn struct{ samples []any }

// sendMadd adds the calls' samples with one TS.MADD, whatever their
// series. The reply has an element per sample, an error for a sample
// whose series is missing; a call fails with the first of its samples'
// errors and keeps only its failed samples, and the other calls' samples
// are unaffected. One command, so each call's samples are added together,
// as when it was sent alone.
func sendMadd(ctx context.Context, c redis.UniversalClient, calls []*call) {
	n := 0
	for _, cl := range calls {
		n += len(cl.in.(*maddIn).samples)
	}
	args := make([]any, 1, 1+n)
	args[0] = "TS.MADD"
	for _, cl := range calls {
		args = append(args, cl.in.(*maddIn).samples...)
	}
	r, err := c.Do(ctx, args...).Slice()
	if err == nil && len(r) != n/3 {
		err = fmt.Errorf("recipes: TS.MADD of %d samples answered %d", n/3, len(r))
	}
	if err != nil {
		answerAll(calls, err)
		return
	}
	for _, cl := range calls {
		in := cl.in.(*maddIn)
		k := len(in.samples) / 3
		failed := in.samples[:0]
		for i, x := range r[:k] {
			if e, ok := x.(error); ok {
				if cl.err == nil {
					cl.err = e
				}
				failed = append(failed, in.samples[3*i:3*i+3]...)
			}
		}
		if cl.err != nil {
			in.samples = failed
		}
		r = r[k:]
	}
}

// piped is one call's commands for a shared pipeline or MULTI: it queues
// them on p and returns how to read the call's answer once they have run
// (the reader stores the call's results where its caller will look).
type piped func(ctx context.Context, p redis.Pipeliner) (answer func() error)

// sendPiped sends the calls' commands in one pipeline, each call's in its
// order. A call sees the same replies as alone; a script's EVALSHA that
// the server does not know (restarted, SCRIPT FLUSH) is sent again once
// the package's scripts are loaded.
func sendPiped(ctx context.Context, c redis.UniversalClient, calls []*call) {
	if again := sendPipe(ctx, c, calls, false); len(again) > 0 {
		for _, s := range scripts {
			if err := s.Load(ctx, c).Err(); err != nil {
				answerAll(again, err)
				return
			}
		}
		sendPipe(ctx, c, again, false)
	}
}

// scripts are the package's scripts that calls send by EVALSHA in a
// shared pipeline.
var scripts = []*redis.Script{fixedScript, slidingScript, gcraScript, timeboxScript,
	lockAcquireScript, lockExtendScript, lockReleaseScript}

// sendMulti sends the calls' commands in one MULTI/EXEC, each call's in
// its order: each call's commands run with nothing else between them, as
// in a MULTI of their own.
func sendMulti(ctx context.Context, c redis.UniversalClient, calls []*call) {
	sendPipe(ctx, c, calls, true)
}

// sendPipe sends the calls' commands in one pipeline, or one MULTI if tx,
// answers them, and returns the calls that failed on NOSCRIPT.
func sendPipe(ctx context.Context, c redis.UniversalClient, calls []*call, tx bool) (noScript []*call) {
	answers := make([]func() error, len(calls))
	queue := func(p redis.Pipeliner) error {
		for i, cl := range calls {
			answers[i] = cl.in.(piped)(ctx, p)
		}
		return nil
	}
	// Each command's reply (or the round trip's error) is in its Cmd,
	// which the answers read.
	if tx {
		_, _ = c.TxPipelined(ctx, queue)
	} else {
		_, _ = c.Pipelined(ctx, queue)
	}
	for i, cl := range calls {
		cl.err = answers[i]()
		if cl.err != nil && redis.HasErrorPrefix(cl.err, "NOSCRIPT") {
			noScript = append(noScript, cl)
		}
	}
	return noScript
}

// pipeOne sends the command that queue makes through c's shared
// pipeline and returns it, run. Its error, if any, is returned too.
func pipeOne[C redis.Cmder](ctx context.Context, c redis.UniversalClient, ref *combinerRef, queue func(ctx context.Context, p redis.Pipeliner) C) (C, error) {
	return oneIn(ctx, c, ref, kindPipe, sendPiped, queue)
}

// oneIn sends the command that queue makes through c's combiner for kind
// (kindPipe or kindMulti, with its send) and returns it, run. Its error,
// if any, is returned too.
func oneIn[C redis.Cmder](ctx context.Context, c redis.UniversalClient, ref *combinerRef, kind string, send sendFunc, queue func(ctx context.Context, p redis.Pipeliner) C) (C, error) {
	var cmd C
	_, err := combined(ctx, c, ref, kind, send, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
		cmd = queue(ctx, p)
		return cmd.Err
	}))
	return cmd, err
}

// firstErr is the first of cmds' errors.
func firstErr(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}
