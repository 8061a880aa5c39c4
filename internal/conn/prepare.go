package conn

import "github.com/abacusdb/abacus/internal/engine"

// Commands of very many arguments. The loop reads every client a little
// at a time, but a command of hundreds of thousands of arguments still
// costs the loop its parse, the pass that collects its arguments once it
// is whole, and its run: a 1,000,000-value RPUSH held every other client
// for tens of milliseconds. So a loop client whose command announces
// engine.PrepareArgs arguments or more is handed to a goroutine of its
// own (handoffLarge) before the command is whole, and that goroutine
// reads and parses it. Before such a command runs, the goroutine does
// the part of its work that needs no lock ahead (engine.Prepare: a
// push's packing into list nodes), so that the server lock, which the
// loop needs too, is held only for what remains (the splice of the
// prepared nodes).

// largeAnnounced reports whether the command the loop client is reading
// is large enough to be read off the loop.
func (c *client) largeAnnounced() bool {
	return c.inLoop && c.reader.Announced() >= engine.PrepareArgs
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
	return c.prepFor != i+1 && c.sess.PrepareWanted(c.batchArgs(i))
}

// prepare does command i's work ahead: its state under the server lock,
// the work without it. The next runLocked runs the command with it.
func (c *client) prepare(i int) {
	s := c.srv
	args := c.batchArgs(i)
	s.mu.Lock()
	state := s.Env.PeekPrepare(c.sess, args)
	s.mu.Unlock()
	c.sess.BuildPrepared(args, state)
	c.prepFor = i + 1
}

// dropPrepared forgets the work done ahead once its command has had its turn.
func (c *client) dropPrepared() {
	if c.prepFor != 0 {
		c.prepFor = 0
		c.sess.DropPrepared()
	}
}
