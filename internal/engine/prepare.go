package engine

import "github.com/abacusdb/abacus/internal/keyspace"

// Work done ahead, without the server lock. Some commands with very many
// arguments spend nearly all their time on work that depends only on the
// arguments and on a small state of one key (a 1,000,000-value RPUSH
// packs its values into list nodes), and under the lock that time stalls
// every other client. Such a command's Prepare says how to do that work
// ahead: the connection, on the client's own goroutine, takes the state
// under the lock (Peek, O(1)), does the work without it (Build), and then
// runs the command as usual, its handler finding the result through
// Ctx.Prepared. The handler checks that the key is still in the state the
// work assumed and does the work itself otherwise, so the command's
// effects, errors, notifications and propagation are those of the plain
// command: only where the time is spent changes.

// PrepareArgs is the least argument count for which a command is
// prepared ahead: below it the work takes well under a millisecond.
const PrepareArgs = 16384

// Args is a command's arguments read a range at a time, so that a
// command of a million arguments need not be a million slices on the heap
// while its work is done ahead (resp.Args reads them where they lie in
// the connection's input); ArgSlice is Args over a [][]byte.
type Args interface {
	Len() int
	// AppendRange appends arguments [from, to) to dst and returns it.
	AppendRange(dst [][]byte, from, to int) [][]byte
}

// ArgSlice is Args over a slice.
type ArgSlice [][]byte

func (a ArgSlice) Len() int { return len(a) }

func (a ArgSlice) AppendRange(dst [][]byte, from, to int) [][]byte {
	return append(dst, a[from:to]...)
}

// Prepare is a command's work done ahead (see above).
type Prepare struct {
	// Peek runs under the server lock, in the session's database, and
	// returns the state Build needs (nil: nothing to prepare). It must
	// not change the dataset and should take O(1).
	Peek func(e *Env, db *keyspace.DB, args Args) any
	// Build runs without the lock and returns what the handler takes
	// (nil: nothing). It may read args and must keep no reference to
	// them.
	Build func(state any, args Args) any
}

// prepared is a result of Prepare.Build waiting for its command.
type prepared struct {
	first *[]byte // &args[0] of the command it was made for (BindPrepared)
	n     int
	val   any
}

// PrepareWanted reports whether args, a command s has not run yet, is
// worth preparing ahead: not inside MULTI, where it is only queued. Safe
// without the server lock.
func (s *Session) PrepareWanted(args Args) bool {
	n := args.Len()
	if n < PrepareArgs || s.tx.multi {
		return false
	}
	var name [1][]byte
	cmd := Lookup(args.AppendRange(name[:0], 0, 1)[0])
	return cmd != nil && cmd.Prepare != nil && cmd.ArityOK(n)
}

// PeekPrepare is the first step of preparing args for s: it runs the
// command's Peek. The caller holds the server lock.
func (e *Env) PeekPrepare(s *Session, args Args) any {
	var name [1][]byte
	cmd := Lookup(args.AppendRange(name[:0], 0, 1)[0])
	if cmd == nil || cmd.Prepare == nil || s.DB < 0 || s.DB >= len(e.KS.DBs) {
		return nil
	}
	return cmd.Prepare.Peek(e, e.KS.DBs[s.DB], args)
}

// BuildPrepared is the second step, without the server lock: the
// command's Build from the state PeekPrepare returned, kept until
// DropPrepared for the handler of that very command, once BindPrepared
// has named its arguments.
func (s *Session) BuildPrepared(args Args, state any) {
	s.prep = prepared{}
	if state == nil {
		return
	}
	var name [1][]byte
	cmd := Lookup(args.AppendRange(name[:0], 0, 1)[0])
	if v := cmd.Prepare.Build(state, args); v != nil {
		s.prep = prepared{n: args.Len(), val: v}
	}
}

// BindPrepared names the arguments, as the command will run with them,
// that BuildPrepared's result is for: the same arguments it was built from.
func (s *Session) BindPrepared(args [][]byte) {
	if s.prep.val != nil && len(args) == s.prep.n {
		s.prep.first = &args[0]
	}
}

// DropPrepared forgets what was prepared (the command has run).
func (s *Session) DropPrepared() { s.prep = prepared{} }

// Prepared returns what was prepared ahead for this command, or nil; it
// is handed out once.
func (c *Ctx) Prepared() any {
	p := &c.S.prep
	if p.val == nil || len(c.Args) != p.n || &c.Args[0] != p.first {
		return nil
	}
	v := p.val
	*p = prepared{}
	return v
}
