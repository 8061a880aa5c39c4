package httpapi

import (
	"bytes"
	"errors"
	"strconv"
)

// value is one decoded RESP2 reply: the HTTP side runs commands with a
// RESP2 session, so simple strings, errors, integers, bulks and arrays are
// all it meets.
type value struct {
	kind  byte // '+', '-', ':', '$', '*'; 0 for a null bulk or array
	str   string
	num   int64
	elems []value
}

var errShortReply = errors.New("httpapi: truncated reply")

// decode reads the one reply in b (a command's whole reply).
func decode(b []byte) (value, error) {
	v, n, err := decodeAt(b, 0)
	if err == nil && n != len(b) {
		err = errors.New("httpapi: trailing bytes after the reply")
	}
	return v, err
}

func decodeAt(b []byte, at int) (value, int, error) {
	end := bytes.Index(b[at:], []byte("\r\n"))
	if end < 1 {
		return value{}, 0, errShortReply
	}
	line := string(b[at+1 : at+end])
	next := at + end + 2
	switch c := b[at]; c {
	case '+', '-':
		return value{kind: c, str: line}, next, nil
	case ':':
		n, err := strconv.ParseInt(line, 10, 64)
		return value{kind: c, num: n}, next, err
	case '$':
		n, err := strconv.Atoi(line)
		if err != nil {
			return value{}, 0, err
		}
		if n < 0 {
			return value{}, next, nil
		}
		if next+n+2 > len(b) {
			return value{}, 0, errShortReply
		}
		return value{kind: c, str: string(b[next : next+n])}, next + n + 2, nil
	case '*':
		n, err := strconv.Atoi(line)
		if err != nil {
			return value{}, 0, err
		}
		if n < 0 {
			return value{}, next, nil
		}
		v := value{kind: c, elems: make([]value, 0, min(n, 1024))}
		for range n {
			e, after, err := decodeAt(b, next)
			if err != nil {
				return value{}, 0, err
			}
			v.elems = append(v.elems, e)
			next = after
		}
		return v, next, nil
	}
	return value{}, 0, errors.New("httpapi: unexpected reply type " + strconv.Quote(string(b[at])))
}

// err is the reply's error, if it is one.
func (v value) err() error {
	if v.kind == '-' {
		return errors.New(v.str)
	}
	return nil
}
