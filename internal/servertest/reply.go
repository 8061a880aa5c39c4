package servertest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// Reply is a decoded RESP2/RESP3 reply.
type Reply struct {
	Kind  byte   // the type byte: + - : $ * _ , % ~ ...
	Str   string // a line's text or a bulk's body ("" for a null)
	Null  bool   // a null bulk or aggregate, or RESP3's _
	Items []Reply
}

// Strings returns the Str of each of an aggregate's elements (a map's
// keys and values alternate).
func (v Reply) Strings() []string {
	out := make([]string, len(v.Items))
	for i, it := range v.Items {
		out[i] = it.Str
	}
	return out
}

// ReadReply reads the bytes of one complete RESP2/RESP3 reply.
func ReadReply(r *bufio.Reader) ([]byte, error) {
	var out []byte
	err := readOne(r, &out, nil)
	return out, err
}

// ReadValue reads and decodes one complete RESP2/RESP3 reply.
func ReadValue(r *bufio.Reader) (Reply, error) {
	var v Reply
	err := readOne(r, nil, &v)
	return v, err
}

// Parse decodes the first reply in raw.
func Parse(raw string) (Reply, error) {
	return ReadValue(bufio.NewReader(strings.NewReader(raw)))
}

// MustParse decodes raw, which must be exactly one reply, or fails the
// test.
func MustParse(t testing.TB, raw string) Reply {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	v, err := ReadValue(r)
	if err == nil && r.Buffered() > 0 {
		err = fmt.Errorf("%d bytes after the reply", r.Buffered())
	}
	if err != nil {
		t.Fatalf("bad reply %q: %v", raw, err)
	}
	return v
}

// MustStrings returns the elements of an array reply as strings, or fails
// the test when raw is not an array.
func MustStrings(t testing.TB, raw string) []string {
	t.Helper()
	v, err := Parse(raw)
	if err != nil || v.Kind != '*' {
		t.Fatalf("expected an array, got %q (%v)", raw, err)
	}
	return v.Strings()
}

// readOne reads one reply from r, appending its bytes to *out when out is
// not nil and decoding it into v when v is not nil: one parser serves the
// raw comparisons and the decoded ones.
func readOne(r *bufio.Reader, out *[]byte, v *Reply) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if out != nil {
		*out = append(*out, line...)
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("bad reply line %q", line)
	}
	body := line[1 : len(line)-2]
	if v != nil {
		*v = Reply{Kind: line[0], Str: string(body)}
	}
	switch line[0] {
	case '_':
		if v != nil {
			v.Null, v.Str = true, ""
		}
		return nil
	case '+', '-', ':', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return fmt.Errorf("bad length %q", line)
		}
		if n < 0 {
			if v != nil {
				v.Null, v.Str = true, ""
			}
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		if out != nil {
			*out = append(*out, buf...)
		}
		if v != nil {
			v.Str = string(buf[:n])
		}
		return nil
	case '*', '~', '>', '%', '|':
		kind := line[0]
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return fmt.Errorf("bad length %q", line)
		}
		if n < 0 && v != nil {
			v.Null = true
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			var it *Reply
			if v != nil {
				v.Items = append(v.Items, Reply{})
				it = &v.Items[len(v.Items)-1]
			}
			if err := readOne(r, out, it); err != nil {
				return err
			}
		}
		if kind == '|' { // attribute: the real reply follows
			return readOne(r, out, v)
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

// BulkBody returns the text of a raw bulk or verbatim reply, or fails the
// test when r is neither.
func BulkBody(t testing.TB, r string) string {
	t.Helper()
	head, body, ok := strings.Cut(r, "\r\n")
	if !ok || (head[0] != '$' && head[0] != '=') {
		t.Fatalf("not a bulk reply: %q", r)
	}
	n, _ := strconv.Atoi(head[1:])
	body = strings.TrimSuffix(body, "\r\n")
	if len(body) != n {
		t.Fatalf("length %d, body %d bytes: %q", n, len(body), r)
	}
	if head[0] == '=' {
		if !strings.HasPrefix(body, "txt:") {
			t.Fatalf("verbatim format: %q", r)
		}
		body = body[4:]
	}
	return body
}

// ClientFields splits one line of CLIENT LIST or CLIENT INFO into its
// field names, in order, and their values.
func ClientFields(t testing.TB, line string) ([]string, map[string]string) {
	t.Helper()
	var keys []string
	vals := map[string]string{}
	for _, f := range strings.Split(strings.TrimSuffix(line, "\n"), " ") {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q in %q", f, line)
		}
		keys = append(keys, k)
		vals[k] = v
	}
	return keys, vals
}
