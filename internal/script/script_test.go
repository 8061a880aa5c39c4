package script

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/resp"
)

// Unit tests of the pieces that must follow C: number formatting and
// parsing, string.format, the rand48 generator, and a few scripts run
// through a fake host. The differential tests in internal/commands compare
// the whole environment with redis-server.

func TestAppendG(t *testing.T) {
	// Expected values from C's printf("%.*g") (Python's % operator).
	cases := []struct {
		v    float64
		prec int
		want string
	}{
		{0.0, 1, "0"},
		{1.0, 1, "1"},
		{-1.0, 1, "-1"},
		{0.1, 1, "0.1"},
		{0.3333333333333333, 1, "0.3"},
		{0.6666666666666666, 1, "0.7"},
		{100000000000000.0, 1, "1e+14"},
		{1000000000000000.0, 1, "1e+15"},
		{123456789012345.0, 1, "1e+14"},
		{1e-05, 1, "1e-05"},
		{0.0001, 1, "0.0001"},
		{1e+21, 1, "1e+21"},
		{1.5e-07, 1, "1e-07"},
		{123.456, 1, "1e+02"},
		{-0.5, 1, "-0.5"},
		{3e+100, 1, "3e+100"},
		{9.223372036854776e+18, 1, "9e+18"},
		{5e-324, 1, "5e-324"},
		{1.7976931348623157e+308, 1, "2e+308"},
		{0.0, 6, "0"},
		{1.0, 6, "1"},
		{-1.0, 6, "-1"},
		{0.1, 6, "0.1"},
		{0.3333333333333333, 6, "0.333333"},
		{0.6666666666666666, 6, "0.666667"},
		{100000000000000.0, 6, "1e+14"},
		{1000000000000000.0, 6, "1e+15"},
		{123456789012345.0, 6, "1.23457e+14"},
		{1e-05, 6, "1e-05"},
		{0.0001, 6, "0.0001"},
		{1e+21, 6, "1e+21"},
		{1.5e-07, 6, "1.5e-07"},
		{123.456, 6, "123.456"},
		{-0.5, 6, "-0.5"},
		{3e+100, 6, "3e+100"},
		{9.223372036854776e+18, 6, "9.22337e+18"},
		{5e-324, 6, "4.94066e-324"},
		{1.7976931348623157e+308, 6, "1.79769e+308"},
		{0.0, 14, "0"},
		{1.0, 14, "1"},
		{-1.0, 14, "-1"},
		{0.1, 14, "0.1"},
		{0.3333333333333333, 14, "0.33333333333333"},
		{0.6666666666666666, 14, "0.66666666666667"},
		{100000000000000.0, 14, "1e+14"},
		{1000000000000000.0, 14, "1e+15"},
		{123456789012345.0, 14, "1.2345678901234e+14"},
		{1e-05, 14, "1e-05"},
		{0.0001, 14, "0.0001"},
		{1e+21, 14, "1e+21"},
		{1.5e-07, 14, "1.5e-07"},
		{123.456, 14, "123.456"},
		{-0.5, 14, "-0.5"},
		{3e+100, 14, "3e+100"},
		{9.223372036854776e+18, 14, "9.2233720368548e+18"},
		{5e-324, 14, "4.9406564584125e-324"},
		{1.7976931348623157e+308, 14, "1.7976931348623e+308"},
		{0.0, 17, "0"},
		{1.0, 17, "1"},
		{-1.0, 17, "-1"},
		{0.1, 17, "0.10000000000000001"},
		{0.3333333333333333, 17, "0.33333333333333331"},
		{0.6666666666666666, 17, "0.66666666666666663"},
		{100000000000000.0, 17, "100000000000000"},
		{1000000000000000.0, 17, "1000000000000000"},
		{123456789012345.0, 17, "123456789012345"},
		{1e-05, 17, "1.0000000000000001e-05"},
		{0.0001, 17, "0.0001"},
		{1e+21, 17, "1e+21"},
		{1.5e-07, 17, "1.4999999999999999e-07"},
		{123.456, 17, "123.456"},
		{-0.5, 17, "-0.5"},
		{3e+100, 17, "2.9999999999999999e+100"},
		{9.223372036854776e+18, 17, "9.2233720368547758e+18"},
		{5e-324, 17, "4.9406564584124654e-324"},
		{1.7976931348623157e+308, 17, "1.7976931348623157e+308"},
	}
	for _, c := range cases {
		if got := string(appendG(nil, c.v, c.prec, false)); got != c.want {
			t.Errorf("%%.%dg of %v: %q, want %q", c.prec, c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {math.Copysign(math.NaN(), -1), "-nan"}} {
		if got := string(appendG(nil, c.v, 14, false)); got != c.want {
			t.Errorf("%v: %q, want %q", c.v, got, c.want)
		}
	}
	if got := num14(-0.0 * -1); got != "0" {
		t.Errorf("0: %q", got)
	}
	if got := num14(math.Copysign(0, -1)); got != "-0" {
		t.Errorf("-0: %q", got)
	}
}

func TestStr2number(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float64
		ok   bool
	}{
		{"10", 10, true}, {"  10  ", 10, true}, {"-1.5e3", -1500, true}, {"0x10", 16, true}, {"0X1p4", 16, true},
		{"1e", 0, false}, {"", 0, false}, {" ", 0, false}, {"1_000", 0, false}, {"0b101", 0, false},
		{"12abc", 0, false}, {".5", 0.5, true}, {"5.", 5, true}, {"+3", 3, true}, {"inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true}, {"1e400", math.Inf(1), true}, {"0x", 0, false},
	} {
		got, ok := str2number(c.s)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("str2number(%q) = %v, %v; want %v, %v", c.s, got, ok, c.want, c.ok)
		}
	}
	if v, ok := str2number("nan"); !ok || !math.IsNaN(v) {
		t.Errorf("nan: %v %v", v, ok)
	}
	for _, c := range []struct {
		s    string
		want float64
		n    int
	}{{"12abc", 12, 2}, {"-1.5e3x", -1500, 6}, {"1e+", 1, 1}, {"0x1fz", 31, 4}, {"abc", 0, 0}, {"-", 0, 0}, {"infinityx", math.Inf(1), 8}} {
		got, n := strtodPrefix(c.s)
		if n != c.n || (n > 0 && got != c.want) {
			t.Errorf("strtodPrefix(%q) = %v, %d; want %v, %d", c.s, got, n, c.want, c.n)
		}
	}
}

// Redis's generator starts in the same state in every process: a fresh
// server's first math.random(100) calls give 40 and 85, and seed 42 gives
// 75 (all read from redis-server 7.0).
func TestRand48(t *testing.T) {
	r := NewRand48()
	u := func() int { return int(math.Floor(float64(r.Next()%math.MaxInt32)/float64(math.MaxInt32)*100)) + 1 }
	if a, b := u(), u(); a != 40 || b != 85 {
		t.Errorf("first values %d %d, want 40 85", a, b)
	}
	r.Seed(42)
	if a := u(); a != 75 {
		t.Errorf("after seed 42: %d, want 75", a)
	}
}

type fakeHost struct{ calls []string }

func (h *fakeHost) Call(args [][]byte, proto int) []byte {
	var parts []string
	for _, a := range args {
		parts = append(parts, string(a))
	}
	h.calls = append(h.calls, strings.Join(parts, " "))
	switch strings.ToLower(string(args[0])) {
	case "ping":
		return []byte("+PONG\r\n")
	case "get":
		return []byte("$-1\r\n")
	case "hgetall":
		if proto == 3 {
			return []byte("%1\r\n$1\r\nf\r\n$1\r\nv\r\n")
		}
		return []byte("*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
	case "incr":
		return []byte("-ERR value is not an integer or out of range\r\n")
	}
	return []byte("-ERR Unknown Redis command called from script\r\n")
}

func (h *fakeHost) CommandKnown(args [][]byte) bool { return true }

// run evaluates body with a fake host and returns the RESP2 reply.
func run(t *testing.T, e *Engine, h *fakeHost, body string, args ...string) string {
	t.Helper()
	s, err := e.Load(body)
	if err != nil {
		return "load: " + err.Error()
	}
	var a [][]byte
	for _, x := range args {
		a = append(a, []byte(x))
	}
	w := &resp.Writer{Proto: 2}
	e.RunScript(s, &Call{Host: h, W: w, Args: a})
	return string(w.Buf)
}

func TestScripts(t *testing.T) {
	e := New(Options{})
	h := &fakeHost{}
	for _, c := range []struct{ body, want string }{
		{"return redis.call('ping')", "+PONG\r\n"},
		{"return redis.pcall('incr', 'x')", "-ERR value is not an integer or out of range\r\n"},
		{"return redis.call('incr', 'x')", "-ERR value is not an integer or out of range script: " + SHA1("return redis.call('incr', 'x')") + ", on @user_script:1.\r\n"},
		{"redis.setresp(3) return redis.call('hgetall', 'h').map.f", "$1\r\nv\r\n"},
		{"return redis.call('hgetall', 'h')", "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{"return type(redis.call('get', 'x'))", "$7\r\nboolean\r\n"},
		{"return redis.call('set', 'a', 0.1)", "-ERR Unknown Redis command called from script script: " + SHA1("return redis.call('set', 'a', 0.1)") + ", on @user_script:1.\r\n"},
		{"return {ARGV[1], #ARGV}", "*2\r\n$1\r\nx\r\n:1\r\n"},
		{"return cjson.encode({1, 'a', {b = false}})", "$19\r\n[1,\"a\",{\"b\":false}]\r\n"},
		{"return cmsgpack.pack({1, 2})", "$3\r\n\x92\x01\x02\r\n"},
		{"return struct.pack('>H', 258)", "$2\r\n\x01\x02\r\n"},
		{"return bit.tohex(bit.bxor(0xf0, 0xff))", "$8\r\n0000000f\r\n"},
		{"return string.format('%5.1f|%-4d|%x', 2.25, 7, 255)", "$13\r\n  2.2|7   |ff\r\n"},
		{"x = 1", "-ERR user_script:1: Attempt to modify a readonly table script: " + SHA1("x = 1") + ", on @user_script:1.\r\n"},
		{"return undefined", "-ERR user_script:1: Script attempted to access nonexistent global variable 'undefined' script: " + SHA1("return undefined") + ", on @user_script:1.\r\n"},
		{"return 1 +", "load: ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"},
		{"#!lua flags=bogus\nreturn 1", "load: ERR Unexpected flag in script shebang: bogus"},
	} {
		if got := run(t, e, h, c.body, "x"); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.body, got, c.want)
		}
	}
	if got := h.calls[len(h.calls)-1]; got != "set a 0.10000000000000001" {
		t.Errorf("a number passed to a command: %q", got)
	}
}

func TestStringFormat(t *testing.T) {
	e := New(Options{})
	h := &fakeHost{}
	for _, c := range []struct{ format, args, want string }{
		{"%#.3g", "1", "1.00"},
		{"%#g", "100", "100.000"},
		{"%e", "12345.678", "1.234568e+04"},
		{"%.0e", "5", "5e+00"},
		{"%#.0e", "5", "5.e+00"},
		{"%+.2f", "3.14159", "+3.14"},
		{"% 05d", "42", " 0042"},
		{"%-8.3s|", "'abcdef'", "abc     |"},
		{"%08.3f", "-3.14159", "-003.142"},
		{"%#o", "8", "010"},
		{"%#x", "0", "0"},
		{"%#X", "255", "0XFF"},
		{"%5.1g", "0.00001234", "1e-05"},
		{"%u", "-1", "18446744073709551615"},
		{"%c", "65", "A"},
		{"%5s", "'ab'", "   ab"},
		{"%.3d", "7", "007"},
		{"%.0d", "0", ""},
		{"%q", "'a\\0b'", `"a\000b"`},
		{"%s", "1/3", "0.33333333333333"},
		{"%d", "2^63", "-9223372036854775808"},
		{"%g", "2^63", "9.22337e+18"},
		{"%10.3f", "1/0", "       inf"},
		{"%-6g|", "-1/0", "-inf  |"},
	} {
		body := "return string.format('" + c.format + "', " + c.args + ")"
		want := "$" + strconv.Itoa(len(c.want)) + "\r\n" + c.want + "\r\n"
		if got := run(t, e, h, body); got != want {
			t.Errorf("string.format(%q, %s): %q, want %q", c.format, c.args, got, want)
		}
	}
}

// The libraries must not panic on any input.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{"", "[1,2,{\"a\":null}]", "\"\\ud83d\\ude00\"", "\x93\x01\xa1a\xc0", "\xdd\xff\xff\xff\xff", "\xcb", "{\"a\":[[[", "0x1p4", "nan"} {
		f.Add(s, ">i4 s c0 !8 d")
	}
	e := New(Options{})
	vm := e.evalVM()
	fns := []*Script{}
	for _, body := range []string{
		"return {pcall(cjson.decode, ARGV[1])}",
		"return {pcall(cmsgpack.unpack, ARGV[1])}",
		"return {pcall(struct.unpack, ARGV[2], ARGV[1])}",
		"return {pcall(struct.pack, ARGV[2], 1, 'abc', 2.5)}",
		"return {pcall(string.format, ARGV[2], 1, 2, 3)}",
		"return {pcall(cmsgpack.unpack_limit, ARGV[1], 2, 1)}",
	} {
		s, err := e.Load(body)
		if err != nil {
			f.Fatal(err)
		}
		fns = append(fns, s)
	}
	f.Fuzz(func(t *testing.T, data, format string) {
		for _, s := range fns {
			w := &resp.Writer{Proto: 2}
			vm.globals.RawSetString("ARGV", stringArray(vm.L, [][]byte{[]byte(data), []byte(format)}))
			vm.call(s.fn, s.checkpointed, "fuzz", &Call{Host: &fakeHost{}, W: w})
			if len(w.Buf) == 0 {
				t.Fatalf("no reply for %q %q", data, format)
			}
		}
	})
}

// KEYS and ARGV are reused from run to run, keeping the strings that equal
// the new items: whatever a run did to them, the next sees its own items.
func TestArgvAcrossRuns(t *testing.T) {
	e := New(Options{})
	h := &fakeHost{}
	for i, c := range []struct {
		body string
		args []string
		want string
	}{
		{"return ARGV", []string{"a", "b"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"ARGV[1] = 'z' return ARGV", []string{"a", "b"}, "*2\r\n$1\r\nz\r\n$1\r\nb\r\n"},
		{"return ARGV", []string{"z", "c"}, "*2\r\n$1\r\nz\r\n$1\r\nc\r\n"},
		{"return ARGV", []string{"a"}, "*1\r\n$1\r\na\r\n"},
		{"return {#ARGV, ARGV[1], ARGV[2]}", []string{"", "x"}, "*3\r\n:2\r\n$0\r\n\r\n$1\r\nx\r\n"},
		{"ARGV[1] = 5 return #ARGV", []string{"q"}, ":1\r\n"},
		{"return ARGV", []string{"5"}, "*1\r\n$1\r\n5\r\n"},
		{"return ARGV", nil, "*0\r\n"},
		{"return ARGV", []string{"a", "bb", "a"}, "*3\r\n$1\r\na\r\n$2\r\nbb\r\n$1\r\na\r\n"},
	} {
		if got := run(t, e, h, c.body, c.args...); got != c.want {
			t.Errorf("run %d %q %q: got %q, want %q", i, c.body, c.args, got, c.want)
		}
	}
}
