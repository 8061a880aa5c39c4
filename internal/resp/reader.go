// Package resp reads client requests and writes replies in the Redis
// serialization protocol (RESP2 and RESP3), including the inline form that
// telnet and nc send.
//
// A connection's input is a Reader: the bytes read and not yet run, and
// the parse of the command they begin with, which resumes where the last
// read stopped. Next returns one command or says that more bytes are
// needed. It never blocks and never copies argument bytes (arguments alias
// the input until the caller discards them), which lets the server parse
// every command of a pipelined read and run them as one batch. Parser
// parses a whole buffer the same way.
package resp

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/abacusdb/abacus/internal/num"
)

// Limits mirror Redis's protocol limits.
const (
	// InlineMaxSize is PROTO_INLINE_MAX_SIZE: the longest inline request or
	// length line that is buffered while waiting for its newline.
	InlineMaxSize = 64 * 1024
	// UnauthMaxArgs and UnauthMaxBulk are what an unauthenticated client may
	// send before it is cut off (Redis 7 behaviour).
	UnauthMaxArgs = 10
	UnauthMaxBulk = 16384
	maxMultibulk  = 1<<31 - 1
)

// ErrIncomplete means the buffer holds only part of a command.
var ErrIncomplete = errors.New("incomplete command")

// ProtocolError is a malformed request. Its text is what Redis replies
// (without the "ERR " prefix); the connection is closed after the reply.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// Parser parses one command from a buffer that holds it from its first
// byte, keeping nothing between calls: the form for whole buffers. A
// connection, whose commands arrive in pieces, uses a Reader, which
// resumes where the last read left off.
type Parser struct {
	MaxBulk       int64 // proto-max-bulk-len
	Authenticated bool  // false: the stricter unauthenticated limits apply

	// When Parse returns ErrIncomplete it records what it waits for:
	// Pending is the offset in buf of the element not yet complete (Redis
	// has consumed everything before it), and PendingBulk is the length
	// of the bulk string whose body is awaited, or -1 when a line (inline
	// request or length header) is awaited.
	Pending     int
	PendingBulk int64

	st partial
}

// Parse reads one command from buf. It returns the arguments (aliasing buf),
// the number of bytes consumed, and an error: ErrIncomplete when buf holds
// only a prefix, or a *ProtocolError. A consumed count > 0 with no args is an
// empty request (an empty inline line or "*0"), which the caller skips.
//
// It reaches the same verdicts as Redis's incremental parser on the same
// bytes, including its quirks (see lineScan.find).
func (p *Parser) Parse(buf []byte, args [][]byte) ([][]byte, int, error) {
	args, n, err := p.st.parse(buf, args, p.MaxBulk, p.Authenticated, nil)
	p.Pending, p.PendingBulk = 0, -1
	if err == ErrIncomplete {
		p.Pending = p.st.off
		if p.st.inBody {
			p.PendingBulk = p.st.bulk
		}
	}
	p.st.reset()
	return args, n, err
}

// partial is the progress through one command, kept between calls so
// that a command arriving in many reads is parsed once, not from its
// first byte on each read: the parse cost is linear in the command's size
// however it is split. Offsets are relative to the command's first byte.
type partial struct {
	multi bool  // the multibulk count has been read
	n     int64 // the count
	off   int   // where the next element starts (a body's, with inBody)
	// inBody: the header of a bulk of length bulk ends at off.
	inBody bool
	bulk   int64
	line   lineScan
	// got counts the complete arguments. Where they lie is not kept: the
	// command's bytes are walked again once it is whole (collect).
	got int64
}

func (st *partial) reset() { *st = partial{} }

// lineScan remembers how far the search for the end of the current line
// went, so that a line arriving byte by byte is scanned once.
type lineScan struct {
	from int  // bytes before from hold neither the byte sought nor a NUL
	nul  bool // a NUL came first: Redis never sees the line end
}

// find returns the offset in b of the first c at or after start, the way
// Redis's strchr over its NUL-terminated query buffer finds it: a NUL
// byte before c hides c, so Redis keeps waiting (and eventually reports
// a too big request) rather than seeing the line. -1: not (yet) there.
func (ls *lineScan) find(b []byte, start int, c byte) int {
	if ls.nul {
		return -1
	}
	from := max(ls.from, start)
	i := bytes.IndexByte(b[from:], c)
	end := len(b)
	if i >= 0 {
		end = from + i
	}
	if bytes.IndexByte(b[from:end], 0) >= 0 {
		ls.nul = true
		return -1
	}
	if i < 0 {
		ls.from = len(b)
		return -1
	}
	ls.from = end // found: looked at again if the line waits for its LF
	return end
}

// parse goes on with the command at the start of b, which holds at least
// the bytes parsed so far. On success it appends the arguments to args
// and returns the bytes the command used in b.
func (st *partial) parse(b []byte, args [][]byte, maxBulk int64, authed bool, r *Reader) ([][]byte, int, error) {
	if len(b) == 0 {
		return args, 0, ErrIncomplete
	}
	if b[0] != '*' {
		return st.parseInline(b, args)
	}
	if !st.multi && st.line.from == 0 && (r == nil || len(r.bigs) == 0) {
		// A command not looked at yet, usually whole in b: parsed in one
		// pass, its arguments appended as they come. Only when it is
		// not whole is it parsed again below, once, to keep its state.
		first := len(args)
		args, n, err := parseWhole(b, args, maxBulk, authed)
		if err == nil {
			return args, n, nil
		}
		args = args[:first]
		if err != ErrIncomplete {
			return args, 0, err
		}
	}
	if err := st.parseMultibulk(b, maxBulk, authed, r); err != nil {
		return args, 0, err
	}
	return st.collect(b, args, r), st.off, nil
}

// collect appends the arguments of the command that parseMultibulk has
// just read whole from b: a second walk over its headers, which
// parseMultibulk has checked, instead of a record of each argument kept
// as the command arrived, which for small arguments was as large as the
// command itself and grew by doubling. args grows once, to its final
// size: the command is all there, so its count is no mere claim.
func (st *partial) collect(b []byte, args [][]byte, r *Reader) [][]byte {
	args = slices.Grow(args, int(max(st.n, 0))) // "*-1" counts -1
	base := 0
	if r != nil {
		base = r.pos
	}
	w := firstArg(b, r, base)
	for i := int64(0); i < st.n; i++ {
		args = append(args, w.next())
	}
	return args
}

// argWalk goes through the arguments of a command read whole, whose
// headers parseMultibulk has checked, from the first.
type argWalk struct {
	b    []byte  // the command, from its first byte
	r    *Reader // the Reader whose buffer holds b, or nil
	base int     // where b starts in r's buffer
	pos  int     // where the next argument's header starts in b
}

// firstArg starts a walk over the command in b.
func firstArg(b []byte, r *Reader, base int) argWalk {
	// The count line ends at its first '\r': parseMultibulk found no NUL
	// before it (lineScan.find).
	return argWalk{b: b, r: r, base: base, pos: bytes.IndexByte(b, '\r') + 2}
}

// next returns the next argument (aliasing the input) and steps past it.
func (w *argWalk) next() []byte {
	b := w.b
	// "$<length>\r\n", which bulkLine has read: only digits.
	j, l := w.pos+1, 0
	for ; b[j] != '\r'; j++ {
		l = l*10 + int(b[j]-'0')
	}
	start := j + 2
	if w.r != nil && l >= BigArg {
		if body, found, _ := w.r.findBigIn(w.base + start); found {
			// Kept out of b: the next header follows at start.
			w.pos = start
			return body[:l:l]
		}
	}
	end := start + l
	w.pos = end + 2
	return b[start:end:end]
}

func (st *partial) parseInline(b []byte, args [][]byte) ([][]byte, int, error) {
	nl := st.line.find(b, 0, '\n')
	if nl < 0 {
		if len(b) > InlineMaxSize {
			return args, 0, protoErr("too big inline request")
		}
		return args, 0, ErrIncomplete
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	out, ok := SplitArgs(line, args)
	if !ok {
		return args, 0, protoErr("unbalanced quotes in request")
	}
	return out, nl + 1, nil
}

// countLine reads the multibulk count of b[:cr] ("*<n>").
func countLine(b []byte, authed bool) (int64, error) {
	n, ok := num.ParseInt(b[1:])
	if !ok || n > maxMultibulk {
		return 0, protoErr("invalid multibulk length")
	}
	if !authed && n > UnauthMaxArgs {
		return 0, protoErr("unauthenticated multibulk length")
	}
	return n, nil
}

// bulkLine reads the length of a bulk header b ("$<n>\r").
func bulkLine(b []byte, maxBulk int64, authed bool) (int64, error) {
	if b[0] != '$' {
		// The byte as it is (Go's %c would UTF-8 encode bytes >= 0x80).
		return 0, &ProtocolError{Msg: "expected '$', got '" + string(b[:1]) + "'"}
	}
	l, ok := num.ParseInt(b[1 : len(b)-1])
	if !ok || l < 0 || l > maxBulk {
		return 0, protoErr("invalid bulk length")
	}
	if !authed && l > UnauthMaxBulk {
		return 0, protoErr("unauthenticated bulk length")
	}
	return l, nil
}

// indexC is lineScan.find for one look at b from its start.
func indexC(b []byte, c byte) int {
	i := bytes.IndexByte(b, c)
	if i > 0 && bytes.IndexByte(b[:i], 0) >= 0 {
		return -1
	}
	return i
}

// parseWhole parses a multibulk command in one pass, keeping nothing:
// ErrIncomplete (with args possibly appended to) when b does not hold it
// whole, else what partial.parse returns.
func parseWhole(b []byte, args [][]byte, maxBulk int64, authed bool) ([][]byte, int, error) {
	cr := indexC(b, '\r')
	if cr < 0 || cr+1 >= len(b) {
		return args, 0, ErrIncomplete // including the too big cases
	}
	n, err := countLine(b[:cr], authed)
	if err != nil {
		return args, 0, err
	}
	pos := cr + 2
	for i := int64(0); i < n; i++ {
		rest := b[pos:]
		cr := indexC(rest, '\r')
		if cr < 0 || cr+1 >= len(rest) {
			return args, 0, ErrIncomplete
		}
		l, err := bulkLine(rest[:cr+1], maxBulk, authed)
		if err != nil {
			return args, 0, err
		}
		start := pos + cr + 2
		if int64(len(b)-start) < l+2 {
			return args, 0, ErrIncomplete
		}
		end := start + int(l)
		args = append(args, b[start:end:end])
		pos = end + 2 // Redis does not check that these two bytes are CRLF.
	}
	return args, pos, nil
}

// parseMultibulk reads on until the command is complete (nil), more bytes
// are needed (ErrIncomplete) or a protocol error. After an error st still
// points at the element it could not read, so a later call with other
// limits (AUTH ran) judges that element again.
func (st *partial) parseMultibulk(b []byte, maxBulk int64, authed bool, r *Reader) error {
	if !st.multi {
		cr := st.line.find(b, 0, '\r')
		if cr < 0 {
			if len(b) > InlineMaxSize {
				return protoErr("too big mbulk count string")
			}
			return ErrIncomplete
		}
		// Redis looks for '\r' and skips two bytes; it needs the '\n' present.
		if cr+1 >= len(b) {
			return ErrIncomplete
		}
		n, err := countLine(b[:cr], authed)
		if err != nil {
			return err
		}
		st.multi, st.n, st.off, st.line = true, n, cr+2, lineScan{}
	}
	for st.got < st.n {
		if !st.inBody {
			cr := st.line.find(b, st.off, '\r')
			if cr < 0 {
				if len(b)-st.off > InlineMaxSize {
					return protoErr("too big bulk count string")
				}
				return ErrIncomplete
			}
			if cr+1 >= len(b) {
				return ErrIncomplete
			}
			l, err := bulkLine(b[st.off:cr+1], maxBulk, authed)
			if err != nil {
				return err
			}
			st.inBody, st.bulk, st.off, st.line = true, l, cr+2, lineScan{}
		}
		if r != nil && st.bulk >= BigArg {
			// A Reader keeps big bodies out of its buffer.
			if _, found, complete := r.findBig(st.off); found {
				if !complete {
					return ErrIncomplete
				}
				st.got++
				st.inBody = false
				continue
			}
		}
		if int64(len(b)-st.off) < st.bulk+2 {
			if r != nil && st.bulk >= BigArg {
				r.startBig(st.off, st.bulk)
			}
			return ErrIncomplete
		}
		end := st.off + int(st.bulk)
		st.got++
		st.off, st.inBody = end+2, false // Redis does not check that these two bytes are CRLF.
	}
	return nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// SplitArgs splits an inline request the way Redis's sdssplitargs does:
// whitespace separates arguments; "double quotes" accept \n \r \t \b \a \xHH
// and \<c> escapes; 'single quotes' accept \'; a closing quote must be
// followed by whitespace or the end. It reports false on unbalanced quotes.
func SplitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	// Redis splits a C string: a NUL byte ends the input.
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			if inq {
				if i >= len(line) {
					return args, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' {
					h, ok1 := hexVal(line[i+2])
					l, ok2 := hexVal(line[i+3])
					if ok1 && ok2 {
						cur = append(cur, h<<4|l)
						i += 4
						continue
					}
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[i]
					}
					cur = append(cur, c)
				} else if c == '"' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return args, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			} else if insq {
				if i >= len(line) {
					return args, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					i++
					cur = append(cur, '\'')
				} else if c == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return args, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			} else {
				if i >= len(line) {
					break
				}
				switch c := line[i]; c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}
