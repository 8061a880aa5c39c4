// Package resp reads client requests and writes replies in the Redis
// serialization protocol (RESP2 and RESP3), including the inline form that
// telnet and nc send.
//
// The reader works on a byte buffer owned by the connection: Parse looks at
// the buffered bytes and returns one command, how many bytes it used, or that
// more bytes are needed. It never blocks and never copies argument bytes
// (arguments alias the buffer until the caller compacts it), which lets the
// server parse every command of a pipelined read and run them as one batch.
package resp

import (
	"bytes"
	"errors"
	"fmt"

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

// Parser holds the per-connection settings that decide what is acceptable.
type Parser struct {
	MaxBulk       int64 // proto-max-bulk-len
	Authenticated bool  // false: the stricter unauthenticated limits apply

	// When Parse returns ErrIncomplete it records what it waits for, so
	// that the connection can size its reads and apply Redis's query
	// buffer accounting: Pending is the offset in buf of the element not
	// yet complete (Redis has consumed everything before it), and
	// PendingBulk is the length of the bulk string whose body is awaited,
	// or -1 when a line (inline request or length header) is awaited.
	Pending     int
	PendingBulk int64
}

// Parse reads one command from buf. It returns the arguments (aliasing buf),
// the number of bytes consumed, and an error: ErrIncomplete when buf holds
// only a prefix, or a *ProtocolError. A consumed count > 0 with no args is an
// empty request (an empty inline line or "*0"), which the caller skips.
//
// Parse is stateless: it reads the command from its first byte every time,
// and reaches the same verdicts as Redis's incremental parser on the same
// bytes, including its quirks (see indexC).
func (p *Parser) Parse(buf []byte, args [][]byte) ([][]byte, int, error) {
	p.Pending, p.PendingBulk = 0, -1
	if len(buf) == 0 {
		return args, 0, ErrIncomplete
	}
	if buf[0] == '*' {
		return p.parseMultibulk(buf, args)
	}
	return parseInline(buf, args)
}

// indexC finds c the way Redis's strchr over its NUL-terminated query
// buffer does: a NUL byte before c hides c, so Redis keeps waiting (and
// eventually reports a too big request) rather than seeing the line.
func indexC(b []byte, c byte) int {
	i := bytes.IndexByte(b, c)
	if i > 0 && bytes.IndexByte(b[:i], 0) >= 0 {
		return -1
	}
	return i
}

func parseInline(buf []byte, args [][]byte) ([][]byte, int, error) {
	nl := indexC(buf, '\n')
	if nl < 0 {
		if len(buf) > InlineMaxSize {
			return args, 0, protoErr("too big inline request")
		}
		return args, 0, ErrIncomplete
	}
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	out, ok := SplitArgs(line, args)
	if !ok {
		return args, 0, protoErr("unbalanced quotes in request")
	}
	return out, nl + 1, nil
}

func (p *Parser) parseMultibulk(buf []byte, args [][]byte) ([][]byte, int, error) {
	cr := indexC(buf, '\r')
	if cr < 0 {
		if len(buf) > InlineMaxSize {
			return args, 0, protoErr("too big mbulk count string")
		}
		return args, 0, ErrIncomplete
	}
	// Redis looks for '\r' and skips two bytes; it needs the '\n' present.
	if cr+1 >= len(buf) {
		return args, 0, ErrIncomplete
	}
	n, ok := num.ParseInt(buf[1:cr])
	if !ok || n > maxMultibulk {
		return args, 0, protoErr("invalid multibulk length")
	}
	if !p.Authenticated && n > UnauthMaxArgs {
		return args, 0, protoErr("unauthenticated multibulk length")
	}
	pos := cr + 2
	if n <= 0 {
		return args, pos, nil
	}
	first := len(args)
	for i := int64(0); i < n; i++ {
		rest := buf[pos:]
		cr := indexC(rest, '\r')
		if cr < 0 {
			if len(rest) > InlineMaxSize {
				return args[:first], 0, protoErr("too big bulk count string")
			}
			p.Pending = pos
			return args[:first], 0, ErrIncomplete
		}
		if cr+1 >= len(rest) {
			p.Pending = pos
			return args[:first], 0, ErrIncomplete
		}
		if rest[0] != '$' {
			// The byte as it is (Go's %c would UTF-8 encode bytes >= 0x80).
			return args[:first], 0, &ProtocolError{Msg: "expected '$', got '" + string(rest[:1]) + "'"}
		}
		l, ok := num.ParseInt(rest[1:cr])
		if !ok || l < 0 || l > p.MaxBulk {
			return args[:first], 0, protoErr("invalid bulk length")
		}
		if !p.Authenticated && l > UnauthMaxBulk {
			return args[:first], 0, protoErr("unauthenticated bulk length")
		}
		start := pos + cr + 2
		if int64(len(buf)-start) < l+2 {
			p.Pending, p.PendingBulk = start, l
			return args[:first], 0, ErrIncomplete
		}
		end := start + int(l)
		args = append(args, buf[start:end:end])
		pos = end + 2 // Redis does not check that these two bytes are CRLF.
	}
	return args, pos, nil
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
