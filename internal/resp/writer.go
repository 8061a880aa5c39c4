package resp

import (
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/num"
)

// Writer appends replies to a buffer in the connection's protocol version.
// RESP3 types degrade to their RESP2 shapes the way Redis degrades them:
// maps become flat arrays, sets become arrays, doubles become bulk strings,
// booleans become integers, nulls become the null bulk or null array.
type Writer struct {
	Buf   []byte
	Proto int // 2 or 3
	// Limit, when not 0, is the length of Buf past which a bulk string
	// is appended only if Over allows it: an output buffer limit checked
	// as a reply grows, not once it is built. Over returns true to drop
	// the reply (Dropped is set and no more bulk strings are appended,
	// so that a reply larger than the limit is never built), or raises
	// Limit and returns false.
	Limit   int
	Over    func(n int) bool
	Dropped bool
	// Deferrer, when set, may take a Segment (Defer) to be encoded as
	// it is sent, after the bytes in Buf: it reports false to have it
	// encoded into Buf now. It must leave Buf holding what follows the
	// segment (empty, the bytes before having gone with it).
	Deferrer func(*Segment) bool
	// DeferFrom is the least number of elements of a reply offered to
	// Deferrer (0: any that its caller offers).
	DeferFrom int
}

// full reports whether a bulk string of n bytes must not be appended:
// Limit is passed and Over says to drop the reply.
func (w *Writer) full(n int) bool {
	if w.Dropped {
		return true
	}
	if w.Over == nil || !w.Over(len(w.Buf)+n) {
		return false
	}
	w.Dropped = true
	return true
}

// Reset empties the buffer, keeping its memory.
func (w *Writer) Reset() { w.Buf = w.Buf[:0] }

// Len is the number of buffered bytes.
func (w *Writer) Len() int { return len(w.Buf) }

func (w *Writer) line(prefix byte, n int64) {
	w.Buf = append(w.Buf, prefix)
	w.Buf = strconv.AppendInt(w.Buf, n, 10)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Simple writes a status reply: +OK.
func (w *Writer) Simple(s string) {
	w.Buf = append(w.Buf, '+')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// OK writes +OK.
func (w *Writer) OK() { w.Buf = append(w.Buf, "+OK\r\n"...) }

// Error writes an error reply. msg must carry its code ("ERR ...",
// "WRONGTYPE ..."); newlines are replaced by spaces as Redis does, so a
// reply can never break the protocol.
func (w *Writer) Error(msg string) {
	w.Buf = append(w.Buf, '-')
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.NewReplacer("\r", " ", "\n", " ").Replace(msg)
	}
	w.Buf = append(w.Buf, msg...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.line(':', n) }

// bulkHeaders holds "$N\r\n" for the short lengths most bulk strings have,
// so that a reply of many members appends each header with one copy
// instead of formatting it (Redis keeps shared headers for the same
// reason). Up to 1 KB: formatting the length of each 100-byte member
// took as long as the rest of a 1 MB LRANGE reply.
var bulkHeaders = func() (h [1024]string) {
	for n := range h {
		h[n] = "$" + strconv.Itoa(n) + "\r\n"
	}
	return h
}()

func (w *Writer) bulkHeader(n int) { w.Buf = AppendBulkHeader(w.Buf, n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	if w.Limit != 0 && len(w.Buf)+len(b) > w.Limit && w.full(len(b)) {
		return
	}
	w.bulkHeader(len(b))
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkString writes a bulk string from a Go string.
func (w *Writer) BulkString(s string) {
	if w.Limit != 0 && len(w.Buf)+len(s) > w.Limit && w.full(len(s)) {
		return
	}
	w.bulkHeader(len(s))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes the null value: RESP3 "_", RESP2 null bulk "$-1".
func (w *Writer) Null() {
	if w.Proto == 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "$-1\r\n"...)
}

// NullArray writes RESP2's null array "*-1" (RESP3 "_").
func (w *Writer) NullArray() {
	if w.Proto == 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "*-1\r\n"...)
}

// Array starts an array of n elements.
func (w *Writer) Array(n int) { w.line('*', int64(n)) }

// Map starts a map of n pairs (RESP2: an array of 2n elements).
func (w *Writer) Map(n int) {
	if w.Proto == 3 {
		w.line('%', int64(n))
		return
	}
	w.line('*', int64(2*n))
}

// Set starts a set of n elements (RESP2: an array).
func (w *Writer) Set(n int) {
	if w.Proto == 3 {
		w.line('~', int64(n))
		return
	}
	w.line('*', int64(n))
}

// Push starts an out-of-band push of n elements (RESP2: an array).
func (w *Writer) Push(n int) {
	if w.Proto == 3 {
		w.line('>', int64(n))
		return
	}
	w.line('*', int64(n))
}

// Double writes a double: RESP3 ",", RESP2 a bulk string in Redis's format.
func (w *Writer) Double(v float64) {
	var tmp [32]byte
	d := num.AppendDouble(tmp[:0], v)
	if w.Proto == 3 {
		w.Buf = append(w.Buf, ',')
		w.Buf = append(w.Buf, d...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.Bulk(d)
}

// Bool writes a boolean: RESP3 "#t"/"#f", RESP2 :1/:0.
func (w *Writer) Bool(b bool) {
	if w.Proto == 3 {
		if b {
			w.Buf = append(w.Buf, "#t\r\n"...)
		} else {
			w.Buf = append(w.Buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// BigNumber writes a big number: RESP3 "(", RESP2 a bulk string.
func (w *Writer) BigNumber(s string) {
	if w.Proto == 3 {
		w.Buf = append(w.Buf, '(')
		w.Buf = append(w.Buf, s...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Verbatim writes a verbatim string with a 3-letter format ("txt"); RESP2
// gets a plain bulk string.
func (w *Writer) Verbatim(format, s string) {
	if w.Proto == 3 {
		w.line('=', int64(len(s)+4))
		w.Buf = append(w.Buf, format...)
		w.Buf = append(w.Buf, ':')
		w.Buf = append(w.Buf, s...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Raw appends bytes that are already a complete reply.
func (w *Writer) Raw(b []byte) { w.Buf = append(w.Buf, b...) }

// StringArray writes an array of bulk strings.
func (w *Writer) StringArray(items []string) {
	w.Array(len(items))
	for _, s := range items {
		w.BulkString(s)
	}
}

// AppendCommand appends args as a RESP multibulk request, the form
// clients send and the AOF stores.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// AppendRepr appends s quoted as Redis's sdscatrepr does (MONITOR lines,
// redis-cli output): backslash escapes for \\ " \n \r \t \a \b and \xHH
// for other bytes outside printable ASCII. SplitArgs reads it back.
func AppendRepr(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= ' ' && c <= '~' {
				dst = append(dst, c)
			} else {
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(dst, '"')
}
