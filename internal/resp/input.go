package resp

import "sort"

// BigArg is Redis's PROTO_MBULK_BIG_ARG: a bulk string at least this long
// that has not fully arrived when its header is parsed is read into a
// buffer of its own.
const BigArg = 32 * 1024

const (
	// readChunk is the smallest input buffer, and half of it the least
	// room offered to a read.
	readChunk = 16 * 1024
	// bigFirst is the first size of a big body's buffer (at most the
	// body's length): it doubles as bytes arrive, never past the length
	// the header claims.
	bigFirst = 64 * 1024
)

// Reader is a connection's input: the bytes read and not yet consumed,
// and the parse of the command they begin with, kept between reads, so
// that a command costs time linear in its size however it is split.
//
// The bytes live in one buffer, except the bodies of big bulk strings
// (BigArg bytes or more) that had not fully arrived when their header was
// parsed: each of those is read straight into a buffer of its own, as
// Redis does, so a command of large arguments takes about its own size in
// memory and is not copied as it grows. Every buffer grows as bytes
// arrive, doubling, never past what its header claims: a header alone
// costs nothing.
//
// Use: ReadBuf and Filled around each read; Next for each command (its
// arguments alias the buffers until Discard); Discard once the commands
// returned so far have run. Pos and Rewind let a caller parse a batch of
// commands ahead and come back to the first one it did not run.
type Reader struct {
	MaxBulk       int64 // proto-max-bulk-len
	Authenticated bool  // false: the stricter unauthenticated limits apply

	buf  []byte
	pos  int       // the next command starts at buf[pos]
	st   partial   // the parse of that command so far
	bigs []bigBody // ordered by at
	// freed counts the bytes of large buffers dropped since TakeFreed.
	freed int
	// idleBig counts the Discards in a row that found buf large and
	// under a quarter used (Discard's shrink).
	idleBig int
}

// bigBody is the body of a big bulk string, kept out of Reader.buf.
type bigBody struct {
	at int    // where in buf the body would be: just after its header
	n  int64  // the body's length
	b  []byte // the body and its CRLF as read so far; cap(b) <= n+2
}

func (bb *bigBody) complete() bool { return int64(len(bb.b)) == bb.n+2 }

// reading returns the big body that reads go to, or nil. Only the last
// one can be incomplete: reads fill it before anything after it.
func (r *Reader) reading() *bigBody {
	if len(r.bigs) == 0 {
		return nil
	}
	bb := &r.bigs[len(r.bigs)-1]
	if bb.complete() {
		return nil
	}
	return bb
}

// ReadBuf returns where the next read goes, at most max bytes (max <= 0:
// no bound): the free end of the buffer, or of the big body being read,
// which a read never passes. It grows that buffer when it is nearly full.
func (r *Reader) ReadBuf(max int) []byte {
	var room []byte
	if bb := r.reading(); bb != nil {
		if len(bb.b) == cap(bb.b) {
			nb := make([]byte, len(bb.b), bigGrow(cap(bb.b), bb.n+2))
			copy(nb, bb.b)
			r.dropped(cap(bb.b))
			bb.b = nb
		}
		room = bb.b[len(bb.b):cap(bb.b)]
	} else {
		if cap(r.buf)-len(r.buf) < readChunk/2 {
			nb := make([]byte, len(r.buf), 2*cap(r.buf)+readChunk)
			copy(nb, r.buf)
			r.dropped(cap(r.buf))
			r.buf = nb
		}
		room = r.buf[len(r.buf):cap(r.buf)]
	}
	if max > 0 && len(room) > max {
		room = room[:max]
	}
	return room
}

// Filled records that a read put n bytes at the start of ReadBuf's slice.
func (r *Reader) Filled(n int) {
	if bb := r.reading(); bb != nil {
		bb.b = bb.b[:len(bb.b)+n]
		return
	}
	r.buf = r.buf[:len(r.buf)+n]
}

// Next parses the command at the cursor and moves the cursor past it. It
// appends the command's arguments to args; an empty request (an empty
// inline line, "*0") appends none. The error is ErrIncomplete when more
// bytes are needed (what was parsed is kept: the next call goes on from
// there), or a *ProtocolError (the cursor stays; a call with other
// limits judges the same element again).
func (r *Reader) Next(args [][]byte) ([][]byte, error) {
	args, n, err := r.st.parse(r.buf[r.pos:], args, r.MaxBulk, r.Authenticated, r)
	if err != nil {
		return args, err
	}
	r.pos += n
	r.st.reset()
	return args, nil
}

// Whole returns the arguments of the multibulk command at the cursor
// when it is all there (whether or not Next has looked at it yet) and it
// has at least min arguments; else false (a protocol error is left for
// Next to report). Next then returns the same command as usual, without
// parsing it again.
//
// The arguments are read where they lie in the input, a range at a time,
// without a slice header each: a caller that has work to do over the
// arguments of a command of a million before it runs (list.Prepare)
// does not keep a million pointers on the heap meanwhile, which the
// collector would mark in every cycle that overlaps the work.
func (r *Reader) Whole(min int64) (*Args, bool) {
	if r.Count() < min || min <= 0 {
		return nil, false
	}
	b := r.buf[r.pos:]
	if r.st.parseMultibulk(b, r.MaxBulk, r.Authenticated, r) != nil {
		return nil, false
	}
	return &Args{n: int(r.st.n), walk: firstArg(b, r, r.pos)}, true
}

// Args is the arguments of a command at a Reader's cursor (Whole), valid
// until the Reader's next Discard, like those Next returns.
type Args struct {
	n    int
	i    int // the argument walk is at
	walk argWalk
}

// Len is the argument count.
func (a *Args) Len() int { return a.n }

// AppendRange appends the arguments [from, to) to dst, aliasing the
// input. Ranges asked for in increasing order cost one walk in all.
func (a *Args) AppendRange(dst [][]byte, from, to int) [][]byte {
	if from < a.i {
		a.i, a.walk = 0, firstArg(a.walk.b, a.walk.r, a.walk.base)
	}
	for ; a.i < from; a.i++ {
		a.walk.next()
	}
	for ; a.i < to; a.i++ {
		dst = append(dst, a.walk.next())
	}
	return dst
}

// Announced is the argument count of the command at the cursor when its
// multibulk header has been parsed and the command is not complete yet,
// else 0.
func (r *Reader) Announced() int64 {
	if !r.st.multi {
		return 0
	}
	return r.st.n
}

// Count is the argument count that the multibulk command at the cursor
// announces once its count line is in the input, whether or not Next has
// looked at it; 0 for an inline command, a count line not all there, and
// one that Next would refuse (Next reports it). It looks at a count
// line's bytes only, however much input follows.
func (r *Reader) Count() int64 {
	if r.st.multi {
		return r.st.n
	}
	b := r.buf[r.pos:]
	if len(b) == 0 || b[0] != '*' {
		return 0
	}
	// Asked before every command: plain digits are read here (a few ns),
	// anything else by countLine, which decides what Next accepts.
	n := int64(0)
	for i := 1; i < min(len(b), countLineMax); i++ {
		c := b[i]
		if c >= '0' && c <= '9' {
			if n = n*10 + int64(c-'0'); n > maxMultibulk {
				return 0 // refused by countLine too; and no overflow
			}
			continue
		}
		if c != '\r' || i+1 >= len(b) {
			return 0
		}
		if i == 1 || b[1] == '0' && i > 2 {
			// No digits, or leading zeros.
			v, err := countLine(b[:i], r.Authenticated)
			if err != nil {
				return 0
			}
			return v
		}
		if !r.Authenticated && n > UnauthMaxArgs {
			return 0
		}
		return n
	}
	return 0
}

// countLineMax bounds the bytes Count looks at: "*" and a count of up to
// 20 characters ("-9223372036854775808"), then CRLF.
const countLineMax = 24

// Pos is the cursor: where the next command starts.
func (r *Reader) Pos() int { return r.pos }

// Rewind moves the cursor back to pos, a value of Pos since the last
// Discard, to parse again from there.
func (r *Reader) Rewind(pos int) {
	if pos != r.pos {
		r.pos = pos
		r.st.reset()
	}
}

// Reset forgets the parse of the command at the cursor, so that it is
// judged again from its first byte (the limits changed).
func (r *Reader) Reset() { r.st.reset() }

// Discard drops the bytes before the cursor: the commands Next returned,
// whose arguments are invalid from now on.
func (r *Reader) Discard() {
	if r.pos == 0 {
		return
	}
	// The big bodies before the cursor belong to those commands (a body
	// at the cursor too: its header ends there, so the next command
	// starts after it).
	k := 0
	for k < len(r.bigs) && r.bigs[k].at <= r.pos {
		r.dropped(cap(r.bigs[k].b))
		k++
	}
	n := copy(r.bigs, r.bigs[k:])
	clear(r.bigs[n:])
	r.bigs = r.bigs[:n]
	for i := range r.bigs {
		r.bigs[i].at -= r.pos
	}
	// What is left is a command's beginning, small unless that command is
	// large: then it is moved once, as the commands before it are gone.
	used := len(r.buf)
	rest := copy(r.buf, r.buf[r.pos:])
	r.buf = r.buf[:rest]
	r.pos = 0
	if cap(r.buf) > 4*readChunk && rest < readChunk && r.shrinkDue(used) {
		// Large requests have been served: give the memory back.
		nb := make([]byte, rest, readChunk)
		copy(nb, r.buf)
		r.dropped(cap(r.buf))
		r.buf = nb
	}
}

// Span calls fn, in order, with the bytes that arrived between from and
// to, values of Pos since the last Discard: the buffer's bytes and the big
// bodies kept out of it (each with its CRLF) where they belong. A proxy
// that passes commands on as they came (a replica's own stream) uses it.
func (r *Reader) Span(from, to int, fn func([]byte)) {
	for _, bb := range r.bigs {
		if bb.at <= from {
			continue
		}
		if bb.at > to {
			break
		}
		if bb.at > from {
			fn(r.buf[from:bb.at])
		}
		fn(bb.b)
		from = bb.at
	}
	if to > from {
		fn(r.buf[from:to])
	}
}

// keepInput is the largest input buffer kept from one batch of commands
// to the next (a client's reply buffer is kept up to the same size).
const keepInput = 1 << 20

// shrinkDue reports whether a large buffer, that held used bytes in the
// batch just served, is to be let go. One over keepInput always is; a
// smaller one once idleShrink batches in a row have used under a quarter
// of it. A client pipelining batches of a few hundred KB (SETs of large
// values) would otherwise grow the buffer from readChunk by doubling and
// drop it again for every batch: a few times the batch's size in garbage,
// and the collections it causes, for each one.
func (r *Reader) shrinkDue(used int) bool {
	if cap(r.buf) > keepInput {
		return true
	}
	if used > cap(r.buf)/4 {
		r.idleBig = 0
		return false
	}
	r.idleBig++
	if r.idleBig < idleShrink {
		return false
	}
	r.idleBig = 0
	return true
}

// idleShrink is how many batches in a row must leave a large buffer
// mostly unused before it is let go.
const idleShrink = 8

// Buffered reports whether input is held that the cursor has not passed.
func (r *Reader) Buffered() bool { return len(r.buf) > r.pos || len(r.bigs) > 0 }

// QueryBuf is the length Redis's query buffer would have: the bytes from
// the element being parsed on (Redis has moved the complete arguments
// before it out of its buffer), counting the big body it waits at.
func (r *Reader) QueryBuf() int {
	body, from := r.queryStart()
	return len(body) + len(r.buf) - from
}

// QueryHead returns up to n bytes from the start of the query buffer (as
// QueryBuf counts it), for log lines.
func (r *Reader) QueryHead(n int) []byte {
	body, from := r.queryStart()
	if len(body) > 0 {
		return body[:min(n, len(body))]
	}
	return r.buf[from:min(from+n, len(r.buf))]
}

// queryStart returns where Redis's query buffer starts: in buf at from,
// after the big body that the parse waits at, if any.
func (r *Reader) queryStart() (body []byte, from int) {
	from = r.pos
	if r.st.multi {
		from += r.st.off
	}
	if bb := r.reading(); bb != nil {
		return bb.b, len(r.buf) // Redis reads nothing past a big body
	}
	if n := len(r.bigs); r.st.inBody && n > 0 && r.bigs[n-1].at == from {
		return r.bigs[n-1].b, from // read, not parsed yet
	}
	return nil, from
}

// Mem is the memory the input holds: its buffers and the parse state.
func (r *Reader) Mem() int {
	n := cap(r.buf)
	for _, bb := range r.bigs {
		n += cap(bb.b)
	}
	return n
}

// TakeFreed returns the bytes of the large buffers (BigArg or more) that
// the reader has dropped since the last call, for a caller that returns
// memory to the system after large frees.
func (r *Reader) TakeFreed() int {
	n := r.freed
	r.freed = 0
	return n
}

func (r *Reader) dropped(n int) {
	if n >= BigArg {
		r.freed += n
	}
}

// bigGrow is the next size of a big body's buffer of size c: double, but
// the whole body (need bytes) when that is not much more, rather than a
// last step for a small tail (a body of 2^k bytes and its CRLF).
func bigGrow(c int, need int64) int {
	next := 2 * int64(c)
	if next+next/2 >= need {
		return int(need)
	}
	return int(next)
}

// findBig returns the body kept out of the buffer for the bulk whose
// header ends at offset at of the command at the cursor, if there is one,
// and whether it is complete.
func (r *Reader) findBig(at int) (body []byte, found, complete bool) {
	return r.findBigIn(r.pos + at)
}

// findBigIn is findBig for offset at of the buffer.
func (r *Reader) findBigIn(at int) (body []byte, found, complete bool) {
	i := sort.Search(len(r.bigs), func(i int) bool { return r.bigs[i].at >= at })
	if i == len(r.bigs) || r.bigs[i].at != at {
		return nil, false, false
	}
	bb := &r.bigs[i]
	return bb.b, true, bb.complete()
}

// startBig moves the body of n bytes that starts at offset at of the
// command at the cursor, incomplete (everything after at belongs to it),
// to a buffer of its own, which the next reads fill.
func (r *Reader) startBig(at int, n int64) {
	at += r.pos
	have := r.buf[at:]
	nb := make([]byte, len(have), bigGrow(max(len(have), bigFirst/2), n+2))
	copy(nb, have)
	r.buf = r.buf[:at]
	r.bigs = append(r.bigs, bigBody{at: at, n: n, b: nb})
}
