package conn

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"unsafe"

	"github.com/abacusdb/abacus/internal/engine"
)

// Commands of very many arguments. The loop reads every client a little
// at a time, but a command of hundreds of thousands of arguments still
// costs its parse, the pass that collects its arguments as slices, and
// its run: a 1,000,000-value RPUSH held every other client for tens of
// milliseconds. So such a command (engine.PrepareArgs arguments or more,
// as its count line announces: largeNext) is never parsed on the loop:
// the loop hands its client to a goroutine of its own (handoffLarge) as
// soon as the count line is read, and that goroutine reads and parses
// it. It is the first command of its batch, whether it arrived in
// pieces, whole in one read, or behind other commands of a pipeline
// (the batch before it ends there). Before it runs, the goroutine does
// the part of its work that needs no lock ahead (engine.Prepare: a
// push's packing into list nodes), reading the arguments where they lie
// in the input, before they are collected as slices (prepareWhole), so
// that the server lock, which the loop needs too, is held only for what
// remains (the splice of the prepared nodes), and no collection runs
// while a million argument slices are live (collectBeforeArgs).

// largeNext reports whether the command at the input's cursor announces
// engine.PrepareArgs arguments or more.
func (c *client) largeNext() bool {
	return c.reader.Count() >= engine.PrepareArgs
}

// largeAnnounced reports whether the command the loop client is reading
// is large enough to be read off the loop.
func (c *client) largeAnnounced() bool {
	return c.inLoop && c.largeNext()
}

// batchArgs returns the arguments of the parsed command i of the batch.
func (c *client) batchArgs(i int) [][]byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.argv[start:c.ends[i]]
}

// wantsPrepare reports whether command i of the batch is to be prepared
// ahead and has not been.
func (c *client) wantsPrepare(i int) bool {
	args := c.batchArgs(i)
	return len(args) >= engine.PrepareArgs && c.prepFor != i+1 && c.sess.PrepareWanted(engine.ArgSlice(args))
}

// prepare does command i's work ahead: its state under the server lock,
// the work without it. The next runLocked runs the command with it.
func (c *client) prepare(i int) {
	args := c.batchArgs(i)
	c.prepareArgs(engine.ArgSlice(args))
	c.sess.BindPrepared(args)
	c.prepFor = i + 1
}

// prepareArgs does the work ahead of the command of args.
func (c *client) prepareArgs(args engine.Args) {
	s := c.srv
	s.mu.Lock()
	state := s.Env.PeekPrepare(c.sess, args)
	s.mu.Unlock()
	c.sess.BuildPrepared(args, state)
}

// prepareWhole does the work ahead of the command at the input's cursor,
// when it is whole and is to be prepared, before Next collects its
// arguments: the work then reads them where they lie in the input, and
// the collector finds no slice per argument to mark while it runs (a
// million for a 1,000,000-value RPUSH, whose marking held the loop's
// clients for tens of milliseconds). It reports whether it did; the
// command is then the next that Next returns, to be bound
// (BindPrepared) as the batch's first.
func (c *client) prepareWhole() bool {
	args, ok := c.reader.Whole(engine.PrepareArgs)
	if !ok || !c.sess.PrepareWanted(args) || c.srv.Env.ScriptRunning() {
		// A script holds the lock: the command is answered BUSY (busy.go).
		return false
	}
	c.prepareArgs(args)
	wholePrepared.Add(1)
	c.prepFor = 1
	collectBeforeArgs(args.Len())
	return true
}

// wholePrepared counts the commands prepared from the input in place
// (prepareWhole), for the tests.
var wholePrepared atomic.Int64

// collectBeforeArgs runs the collection that collecting n arguments as
// slices would start, before they are collected: when their slice
// headers (a pointer each) would take the heap past the collector's goal,
// a cycle is due while they are live, and its mark of a million pointers
// held the loop's clients for tens of milliseconds on two cores. Run now,
// on the client's own goroutine, it marks no argument, and its new goal
// has room for them. It runs no cycle that the heap's growth had not made
// due: a client cannot make the server collect more often than its
// allocations would.
func collectBeforeArgs(n int) {
	sample := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	goal, heap := sample[0].Value.Uint64(), sample[1].Value.Uint64()
	if heap+uint64(n)*uint64(unsafe.Sizeof([]byte(nil))) >= goal {
		runtime.GC()
	}
}

// dropPrepared forgets the work done ahead once its command has had its turn.
func (c *client) dropPrepared() {
	if c.prepFor != 0 {
		c.prepFor = 0
		c.sess.DropPrepared()
	}
}
