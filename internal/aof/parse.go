package aof

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrTruncated is a file that ends inside a command (a torn write).
var ErrTruncated = errors.New("unexpected end of file")

// FormatError is a file that is not a valid command stream.
type FormatError struct {
	Offset int64
	What   string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("Bad file format reading the append only file at offset %d: %s", e.Offset, e.What)
}

// MaxArgs and MaxBulk bound what one command may declare before its bytes
// are read, so that a corrupt header cannot allocate gigabytes.
const (
	MaxArgs = 1 << 20
	MaxBulk = 512 << 20
)

// Commands walks the commands of b, calling fn with each (the arguments
// alias b). It returns the offset after the last whole command and
// ErrTruncated when b ends inside one, or a *FormatError. A command that
// opens MULTI and never reaches EXEC is not a whole command for the
// offset: good stops before its MULTI.
func Commands(b []byte, fn func(argv [][]byte) error) (good int64, err error) {
	return commandsAt(b, func(argv [][]byte, _ int64) error {
		if fn == nil {
			return nil
		}
		return fn(argv)
	})
}

func commandsAt(b []byte, fn func(argv [][]byte, start int64) error) (good int64, err error) {
	off := 0
	var argv [][]byte
	for off < len(b) {
		start := off
		if b[off] == '#' { // an annotation line (aof-timestamp-enabled)
			i := indexCRLF(b, off)
			if i < 0 {
				return int64(start), ErrTruncated
			}
			off = i + 2
			continue
		}
		if b[off] != '*' {
			return int64(start), &FormatError{int64(off), "expected '*'"}
		}
		n, next, e := readNum(b, off+1)
		if e != nil {
			return int64(start), e
		}
		if n < 1 || n > MaxArgs {
			return int64(start), &FormatError{int64(off), "invalid argument count"}
		}
		off = next
		argv = argv[:0]
		for i := int64(0); i < n; i++ {
			if off >= len(b) {
				return int64(start), ErrTruncated
			}
			if b[off] != '$' {
				return int64(start), &FormatError{int64(off), "expected '$'"}
			}
			l, next, e := readNum(b, off+1)
			if e != nil {
				return int64(start), e
			}
			if l < 0 || l > MaxBulk {
				return int64(start), &FormatError{int64(off), "invalid bulk length"}
			}
			off = next
			if int64(len(b)-off) < l+2 {
				return int64(start), ErrTruncated
			}
			if b[off+int(l)] != '\r' || b[off+int(l)+1] != '\n' {
				return int64(start), &FormatError{int64(off + int(l)), "expected CRLF after bulk"}
			}
			argv = append(argv, b[off:off+int(l)])
			off += int(l) + 2
		}
		if e := fn(argv, int64(start)); e != nil {
			return int64(start), e
		}
	}
	return int64(off), nil
}

func indexCRLF(b []byte, from int) int {
	for i := from; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

// readNum reads a decimal number ended by CRLF at b[i:].
func readNum(b []byte, i int) (int64, int, error) {
	end := indexCRLF(b, i)
	if end < 0 {
		if len(b)-i > 20 {
			return 0, 0, &FormatError{int64(i), "number too long"}
		}
		return 0, 0, ErrTruncated
	}
	n, err := strconv.ParseInt(string(b[i:end]), 10, 64)
	if err != nil {
		return 0, 0, &FormatError{int64(i), "invalid number"}
	}
	return n, end + 2, nil
}

// Replay walks b's commands, reverting a MULTI left open at the end: the
// commands from an unclosed MULTI on are not handed to fn, and the
// returned offset (the truncation point for a fix) is that MULTI's.
func Replay(b []byte, fn func(argv [][]byte) error) (good int64, err error) {
	if fn == nil {
		fn = func([][]byte) error { return nil }
	}
	var queued [][][]byte
	multiAt := int64(-1)
	good, err = commandsAt(b, func(argv [][]byte, start int64) error {
		name := string(argv[0])
		switch {
		case len(argv) == 1 && eqFold(name, "multi"):
			if multiAt >= 0 {
				return &FormatError{start, "nested MULTI"}
			}
			multiAt = start
			queued = queued[:0]
			return nil
		case len(argv) == 1 && eqFold(name, "exec") && multiAt >= 0:
			multiAt = -1
			for _, q := range queued {
				if e := fn(q); e != nil {
					return e
				}
			}
			queued = queued[:0]
			return nil
		}
		if multiAt >= 0 {
			cp := make([][]byte, len(argv))
			copy(cp, argv)
			queued = append(queued, cp)
			return nil
		}
		return fn(argv)
	})
	if multiAt >= 0 {
		good = multiAt
		if err == nil {
			err = ErrTruncated
		}
	}
	return good, err
}

func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}
