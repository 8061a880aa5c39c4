package resp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The expectations below were taken from redis-server 7.0 fed the same
// bytes (the server tests also compare the two live).

type parseCase struct {
	name   string
	in     string
	unauth bool
	// Exactly one of these describes the outcome.
	args       []string // a command (possibly empty) and...
	used       int      // ...the bytes it used
	incomplete bool
	err        string // protocol error text after "Protocol error: "
}

func big(c byte, n int) string { return strings.Repeat(string(c), n) }

var parseCases = []parseCase{
	{name: "multibulk", in: "*1\r\n$4\r\nPING\r\n", args: []string{"PING"}, used: 14},
	{name: "two args", in: "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", args: []string{"ECHO", ""}, used: 20},
	{name: "binary arg", in: "*1\r\n$5\r\na\r\n\x00b\r\n", args: []string{"a\r\n\x00b"}, used: 15},
	{name: "null count", in: "*-1\r\nPING\r\n", args: []string{}, used: 5},
	{name: "zero count", in: "*0\r\n", args: []string{}, used: 4},
	{name: "trailing bytes unchecked", in: "*1\r\n$4\r\nPINGxx\r\n", args: []string{"PING"}, used: 14},
	{name: "bad count", in: "*a\r\n", err: "invalid multibulk length"},
	{name: "count over INT_MAX", in: "*3000000000\r\n", err: "invalid multibulk length"},
	{name: "count INT_MAX", in: "*2147483647\r\n", incomplete: true},
	{name: "count INT_MAX+1", in: "*2147483648\r\n", err: "invalid multibulk length"},
	{name: "count plus sign", in: "*+1\r\n$4\r\nPING\r\n", err: "invalid multibulk length"},
	{name: "count leading zero", in: "*01\r\n$4\r\nPING\r\n", err: "invalid multibulk length"},
	{name: "count space", in: "* 1\r\n", err: "invalid multibulk length"},
	{name: "count LF only", in: "*1\n$4\nPING\r\n", err: "invalid multibulk length"},
	{name: "bad bulk length", in: "*1\r\n$a\r\n", err: "invalid bulk length"},
	{name: "negative bulk", in: "*1\r\n$-1\r\n", err: "invalid bulk length"},
	{name: "bulk plus sign", in: "*1\r\n$+4\r\nPING\r\n", err: "invalid bulk length"},
	{name: "bulk leading zero", in: "*1\r\n$04\r\nPING\r\n", err: "invalid bulk length"},
	{name: "bulk over max", in: "*1\r\n$536870913\r\n", err: "invalid bulk length"},
	{name: "bulk at max", in: "*1\r\n$536870912\r\n", incomplete: true},
	{name: "not dollar", in: "*1\r\nx\r\n", err: "expected '$', got 'x'"},
	{name: "not dollar high byte", in: "*1\r\n\xff\r\n", err: "expected '$', got '\xff'"},
	{name: "not dollar CR", in: "*1\r\n\r\n", err: "expected '$', got '\r'"},
	{name: "second arg not dollar", in: "*2\r\n$3\r\nget\r\n\r\n", err: "expected '$', got '\r'"},
	{name: "partial body", in: "*1\r\n$4\r\nPING", incomplete: true},
	{name: "body without CRLF", in: "*1\r\n$4\r\nPING\r", incomplete: true},
	{name: "count without LF", in: "*1\r", incomplete: true},
	{name: "count only", in: "*1", incomplete: true},
	{name: "header waits for more", in: "*1\r\nx", incomplete: true},
	{name: "NUL hides CR in bulk header", in: "*1\r\n$\x004\r\nPING\r\n", incomplete: true},
	{name: "NUL hides CR in count", in: "*\x001\r\n", incomplete: true},
	{name: "NUL in body is data", in: "*1\r\n$4\r\nPI\x00G\r\n", args: []string{"PI\x00G"}, used: 14},
	{name: "unauth count 10", in: "*10\r\n", unauth: true, incomplete: true},
	{name: "unauth count 11", in: "*11\r\n", unauth: true, err: "unauthenticated multibulk length"},
	{name: "unauth bulk 16384", in: "*1\r\n$16384\r\n", unauth: true, incomplete: true},
	{name: "unauth bulk 16385", in: "*10\r\n$16385\r\n", unauth: true, err: "unauthenticated bulk length"},
	{name: "unauth invalid first", in: "*1\r\n$-5\r\n", unauth: true, err: "invalid bulk length"},
	{name: "count line 64k", in: "*" + big('1', InlineMaxSize-1), incomplete: true},
	{name: "count line too big", in: "*" + big('1', InlineMaxSize), err: "too big mbulk count string"},
	{name: "bulk line too big", in: "*1\r\n$" + big('1', InlineMaxSize), err: "too big bulk count string"},
	{name: "junk instead of bulk", in: "*1\r\n" + big('x', InlineMaxSize+1), err: "too big bulk count string"},
	{name: "second bulk too big", in: "*2\r\n$4\r\nPING\r\n" + big('y', 70000), err: "too big bulk count string"},

	{name: "inline", in: "PING\r\n", args: []string{"PING"}, used: 6},
	{name: "inline LF", in: "PING\n", args: []string{"PING"}, used: 5},
	{name: "inline CR CR LF", in: "ECHO x\r\r\n", args: []string{"ECHO", "x"}, used: 9},
	{name: "inline empty", in: "\r\n", args: []string{}, used: 2},
	{name: "inline blanks", in: " \t \r\n", args: []string{}, used: 5},
	{name: "inline partial", in: "PING", incomplete: true},
	{name: "inline 64k", in: big('x', InlineMaxSize), incomplete: true},
	{name: "inline too big", in: big('x', InlineMaxSize+1), err: "too big inline request"},
	{name: "inline NUL hides LF", in: "PING\x00\r\n", incomplete: true},
	{name: "inline NUL after LF", in: "PING\r\n\x00", args: []string{"PING"}, used: 6},
	{name: "inline unbalanced", in: "ECHO \"a\r\n", err: "unbalanced quotes in request"},
	{name: "inline no unauth limit", in: "ECHO " + big('x', 20000) + "\r\n", unauth: true, args: []string{"ECHO", big('x', 20000)}, used: 20007},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			p := Parser{MaxBulk: 512 << 20, Authenticated: !tc.unauth}
			buf := []byte(tc.in)
			args, used, err := p.Parse(buf, nil)
			switch {
			case tc.err != "":
				var pe *ProtocolError
				if !errors.As(err, &pe) || pe.Msg != tc.err {
					t.Fatalf("got %v, want protocol error %q", err, tc.err)
				}
				if err.Error() != "Protocol error: "+tc.err {
					t.Fatalf("Error() = %q", err.Error())
				}
			case tc.incomplete:
				if err != ErrIncomplete || used != 0 || len(args) != 0 {
					t.Fatalf("got %q %d %v, want incomplete", args, used, err)
				}
				if p.Pending < 0 || p.Pending > len(buf) {
					t.Fatalf("Pending %d out of [0,%d]", p.Pending, len(buf))
				}
			default:
				if err != nil || used != tc.used {
					t.Fatalf("got %d %v, want %d bytes", used, err, tc.used)
				}
				got := make([]string, len(args))
				for i, a := range args {
					got[i] = string(a)
				}
				if strings.Join(got, "|") != strings.Join(tc.args, "|") || len(got) != len(tc.args) {
					t.Fatalf("args %q, want %q", got, tc.args)
				}
			}
		})
	}
}

// TestParsePending checks what the parser reports while it waits: the
// start of the element it waits for, and the length of an awaited body.
func TestParsePending(t *testing.T) {
	p := Parser{MaxBulk: 1 << 30, Authenticated: true}
	for _, tc := range []struct {
		in      string
		pending int
		bulk    int64
	}{
		{"*2", 0, -1},
		{"*2\r\n$3\r\nset\r\n", 13, -1},
		{"*2\r\n$3\r\nset\r\n$100", 13, -1},
		{"*2\r\n$3\r\nset\r\n$100000\r\nabc", 22, 100000},
		{"SET a", 0, -1},
	} {
		_, _, err := p.Parse([]byte(tc.in), nil)
		if err != ErrIncomplete || p.Pending != tc.pending || p.PendingBulk != tc.bulk {
			t.Errorf("%q: err %v pending %d bulk %d, want %d %d", tc.in, err, p.Pending, p.PendingBulk, tc.pending, tc.bulk)
		}
	}
}

// TestParseAppends checks that Parse appends to the slice it is given and
// leaves it as it was on failure.
func TestParseAppends(t *testing.T) {
	p := Parser{MaxBulk: 1 << 20, Authenticated: true}
	prev := [][]byte{[]byte("x")}
	args, _, err := p.Parse([]byte("*2\r\n$1\r\na\r\n$1\r\nb\r\n"), prev)
	if err != nil || len(args) != 3 || string(args[0]) != "x" || string(args[2]) != "b" {
		t.Fatalf("got %q %v", args, err)
	}
	args, _, err = p.Parse([]byte("*2\r\n$1\r\na\r\n$1\r\nb"), prev)
	if err != ErrIncomplete || len(args) != 1 {
		t.Fatalf("incomplete: got %q %v", args, err)
	}
	args, _, err = p.Parse([]byte("*2\r\n$1\r\na\r\n$x\r\n"), prev)
	if err == nil || len(args) != 1 {
		t.Fatalf("error: got %q %v", args, err)
	}
}

// TestParsePipeline parses a stream of mixed requests one after another.
func TestParsePipeline(t *testing.T) {
	stream := "PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n\r\n*0\r\nECHO 'a b'\n"
	want := [][]string{{"PING"}, {"ECHO", "hi"}, {}, {}, {"ECHO", "a b"}}
	p := Parser{MaxBulk: 1 << 20, Authenticated: true}
	buf := []byte(stream)
	for i, w := range want {
		args, n, err := p.Parse(buf, nil)
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if len(args) != len(w) {
			t.Fatalf("command %d: %q, want %q", i, args, w)
		}
		for j := range w {
			if string(args[j]) != w[j] {
				t.Fatalf("command %d: %q, want %q", i, args, w)
			}
		}
		buf = buf[n:]
	}
	if len(buf) != 0 {
		t.Fatalf("left %q", buf)
	}
}

// TestParseByteByByte feeds a pipeline one byte more at a time: every
// prefix is incomplete until a command ends, and then parses to it.
func TestParseByteByByte(t *testing.T) {
	stream := AppendCommand(nil, []byte("SET"), []byte("k"), []byte("v\r\nx"))
	stream = append(stream, "ECHO \"q\\x41\"\r\n"...)
	stream = AppendCommand(stream, []byte("GET"), []byte("k"))
	p := Parser{MaxBulk: 1 << 20, Authenticated: true}
	var got []string
	start := 0
	for end := 1; end <= len(stream); end++ {
		args, n, err := p.Parse(stream[start:end], nil)
		if err == ErrIncomplete {
			continue
		}
		if err != nil {
			t.Fatalf("at %d: %v", end, err)
		}
		if start+n != end {
			t.Fatalf("command ended at %d, parser used %d", end, start+n)
		}
		var parts []string
		for _, a := range args {
			parts = append(parts, string(a))
		}
		got = append(got, strings.Join(parts, " "))
		start = end
	}
	want := []string{"SET k v\r\nx", "ECHO qA", "GET k"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{`ECHO "\x41\x4g\q"`, []string{"ECHO", "Ax4gq"}},
		{`ECHO 'a\'b\x41'`, []string{"ECHO", `a'b\x41`}},
		{`ECHO ""`, []string{"ECHO", ""}},
		{`ECHO ''`, []string{"ECHO", ""}},
		{`ECHO a"b"`, []string{"ECHO", "ab"}},
		{`ECHO a'b`, nil},
		{`ECHO "\"`, nil},
		{`ECHO "\`, nil},
		{`ECHO "a\`, nil},
		{`ECHO '\`, nil},
		{`ECHO '\'`, nil},
		{`ECHO '\''`, []string{"ECHO", "'"}},
		{`ECHO "a"b`, nil},
		{`ECHO 'a'b`, nil},
		{"ECHO \"a\"\tb", []string{"ECHO", "a", "b"}},
		{"ECHO \"a\"\vb", []string{"ECHO", "a", "b"}},
		{"ECHO\vx", []string{"ECHO\vx"}},
		{"ECHO\fx", []string{"ECHO\fx"}},
		{`ECHO "\xZZ"`, []string{"ECHO", "xZZ"}},
		{`ECHO "\x4"`, []string{"ECHO", "x4"}},
		{`ECHO "\x41"`, []string{"ECHO", "A"}},
		{`ECHO "\xfF\x00"`, []string{"ECHO", "\xff\x00"}},
		{`ECHO "\n\r\t\b\a\\\""`, []string{"ECHO", "\n\r\t\b\a\\\""}},
		{"ECHO x\ry", []string{"ECHO", "x", "y"}},
		{"ECHO \"x\r\"", []string{"ECHO", "x\r"}},
		{`"ECHO" x`, []string{"ECHO", "x"}},
		{"\t ECHO   x  ", []string{"ECHO", "x"}},
		{"   ", []string{}},
		{"", []string{}},
		{"a\x00b c", []string{"a"}},
		{"\"a\x00\"", nil},
	} {
		args, ok := SplitArgs([]byte(tc.in), nil)
		if tc.want == nil {
			if ok {
				t.Errorf("%q: got %q, want unbalanced", tc.in, args)
			}
			continue
		}
		if !ok || len(args) != len(tc.want) {
			t.Errorf("%q: got %q %v, want %q", tc.in, args, ok, tc.want)
			continue
		}
		for i := range args {
			if string(args[i]) != tc.want[i] {
				t.Errorf("%q: got %q, want %q", tc.in, args, tc.want)
				break
			}
		}
	}
}

// TestReprRoundTrip: what AppendRepr writes, SplitArgs reads back (the
// property MONITOR output and redis-cli rely on).
func TestReprRoundTrip(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	args := [][]byte{all, {}, []byte(`"'\`), []byte("plain")}
	var line []byte
	for i, a := range args {
		if i > 0 {
			line = append(line, ' ')
		}
		line = AppendRepr(line, a)
	}
	got, ok := SplitArgs(line, nil)
	if !ok || len(got) != len(args) {
		t.Fatalf("got %q %v", got, ok)
	}
	for i := range args {
		if !bytes.Equal(got[i], args[i]) {
			t.Fatalf("arg %d: got %q, want %q", i, got[i], args[i])
		}
	}
	if r := string(AppendRepr(nil, []byte("a\x01\xff\"\\\n"))); r != `"a\x01\xff\"\\\n"` {
		t.Fatalf("repr %s", r)
	}
}
