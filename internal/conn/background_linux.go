package conn

// background runs the engine's background steps (a save's encoding of the
// snapshot) after a round, under the server lock, for a bounded time
// (engine.Env.RunBackground). It does not wait for the lock: a client
// goroutine or a busy script holding it means a later round tries again,
// and the loop keeps its epoll set for the busy watcher meanwhile.
func (l *eventLoop) background() {
	if !l.s.mu.TryLock() {
		return
	}
	l.s.Env.RunBackground()
	l.s.mu.Unlock()
}
