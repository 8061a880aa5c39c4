package engine

// PrefetchBatch touches the memory that the keys of a batch of pipelined
// commands will need (keyspace.DB.Prefetch), so that their cache misses
// overlap instead of following one another. The commands' arguments are
// in argv, the first starting at start and command i ending at ends[i].
// Only keys at fixed positions are taken; the database is the session's
// current one. It is called with the server lock held, before the
// commands run, and returns scratch (the keys gathered) for reuse.
func (e *Env) PrefetchBatch(s *Session, argv [][]byte, start int, ends []int, scratch [][]byte) [][]byte {
	keys := scratch[:0]
	for _, end := range ends {
		args := argv[start:end]
		start = end
		cmd := s.lookupFor(args[0])
		if cmd == nil || cmd.Keys != nil || !cmd.ArityOK(len(args)) {
			continue
		}
		first, last := cmd.fixedKeys(len(args))
		for i := first; i <= last; i += cmd.Step {
			keys = append(keys, args[i])
		}
	}
	if len(keys) > 1 && s.DB < len(e.KS.DBs) {
		e.KS.DBs[s.DB].Prefetch(keys, 1)
	}
	return keys
}
