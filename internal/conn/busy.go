package conn

// scriptStarted is Env.ScriptStarted: it wakes the loops' busy watchers
// (loop_linux.go). It runs under the server lock as each script starts.
func (s *Server) scriptStarted() {
	if s.current != nil {
		// Clients answered on the busy path find in their queues what
		// was pushed to them before the script (pushround.go).
		s.flushPushes(s.current.roundWakes)
	}
	for _, l := range s.loops {
		l.armBusy()
	}
}

// busyCommand answers command i of the batch without the server lock
// while a script holds it: Env.ExecuteBusy waits until the script ends or
// passes busy-reply-threshold, then replies BUSY or runs SCRIPT KILL,
// FUNCTION KILL, FUNCTION STATS or SHUTDOWN NOSAVE. It reports whether it
// answered the command, and whether the connection must close.
func (c *client) busyCommand(i int) (answered, quit bool) {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	args := c.argv[start:c.ends[i]]
	mark := len(c.w.Buf)
	if !c.srv.Env.ExecuteBusy(c.sess, args, &c.w) {
		return false, false
	}
	c.applyReplyMode(mark)
	c.flushUnlocked()
	return true, c.sess.CloseAfterReply || c.sess.Killed.Load()
}

// flushUnlocked writes the buffered replies without the server lock:
// through the pushed-output queue when the client has one, directly
// otherwise. A push (the script's, under the lock) may create the queue
// meanwhile; stage's compare-and-swap on wown orders the two.
func (c *client) flushUnlocked() {
	c.unlocked.Store(true)
	defer c.unlocked.Store(false)
	c.finish(c.stage())
}
