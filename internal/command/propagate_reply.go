package command

import "strconv"

// A minimal reader of the reply a command just wrote (RESP2 or RESP3),
// for the rewrites that propagate what the reply names (SPOP's members,
// the key a blocking pop served, INCRBYFLOAT's result).

// respItem is one parsed reply element: scalar bytes, or children.
type respItem struct {
	val  []byte
	kids []respItem
	arr  bool
}

// parseReply parses one reply at the start of b; ok is false on anything
// it does not understand.
func parseReply(b []byte, depth int) (it respItem, rest []byte, ok bool) {
	if len(b) < 3 || depth > 4 {
		return it, nil, false
	}
	end := -1
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		return it, nil, false
	}
	line, after := b[1:end], b[end+2:]
	switch b[0] {
	case '+', ',', ':', '(':
		return respItem{val: line}, after, true
	case '$':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return it, nil, false
		}
		if n == -1 {
			return respItem{}, after, true
		}
		if len(after) < n+2 {
			return it, nil, false
		}
		return respItem{val: after[:n]}, after[n+2:], true
	case '*', '~', '>':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return it, nil, false
		}
		it.arr = true
		for i := 0; i < n; i++ {
			var k respItem
			if k, after, ok = parseReply(after, depth+1); !ok {
				return it, nil, false
			}
			it.kids = append(it.kids, k)
		}
		return it, after, true
	case '_':
		return respItem{}, after, true
	}
	return it, nil, false
}

// replyBulk is a bulk string reply's bytes.
func replyBulk(reply []byte) ([]byte, bool) {
	it, _, ok := parseReply(reply, 0)
	if !ok || it.arr || it.val == nil {
		return nil, false
	}
	return it.val, true
}

// replyFlat is a single value or an array's scalar elements.
func replyFlat(reply []byte) ([][]byte, bool) {
	it, _, ok := parseReply(reply, 0)
	if !ok {
		return nil, false
	}
	if !it.arr {
		if it.val == nil {
			return nil, true
		}
		return [][]byte{it.val}, true
	}
	out := make([][]byte, 0, len(it.kids))
	for _, k := range it.kids {
		if k.arr {
			return nil, false
		}
		out = append(out, k.val)
	}
	return out, true
}

// replyKeyCount reads [key, [elements...]] (LMPOP, ZMPOP).
func replyKeyCount(reply []byte) ([]byte, int, bool) {
	it, _, ok := parseReply(reply, 0)
	if !ok || !it.arr || len(it.kids) != 2 || !it.kids[1].arr {
		return nil, 0, false
	}
	return it.kids[0].val, len(it.kids[1].kids), true
}
