package conn

// The memory of clients' input: what INFO reports of it. Large input
// buffers that go free are reported to ReleaseMemory (outlimit.go), which
// gives memory back to the system.

// closeRelease: a closing client's input counts when it is this large.
const closeRelease = 1 << 20

// foldInputPeaks records the clients' input memory peaks in the current
// second's slot (the cron calls it).
func (s *Server) foldInputPeaks() {
	var top int64
	s.clientsMu.Lock()
	for _, c := range s.clients {
		top = max(top, c.inPeak.Swap(c.inNow.Load()))
	}
	s.clientsMu.Unlock()
	s.inPeak.note(s.Env.Clock.NowMs()/1000, top)
}

// RecentMaxBuffers implements engine.Host for INFO's
// client_recent_max_input_buffer and client_recent_max_output_buffer.
func (s *Server) RecentMaxBuffers() (in, out int64) {
	return s.RecentMaxInputBuffer(), s.RecentMaxOutputBuffer()
}

// RecentMaxInputBuffer is INFO's client_recent_max_input_buffer: the most
// memory one client's input (its query buffer and the command being
// received) held in the last 8 seconds, as Redis samples it.
func (s *Server) RecentMaxInputBuffer() int64 {
	return s.inPeak.max(s.Env.Clock.NowMs() / 1000)
}
