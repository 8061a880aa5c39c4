package bitmap

import (
	"bytes"
	"strings"
	"testing"
)

func TestSetGetBit(t *testing.T) {
	var b []byte
	b, old := SetBit(b, 7, 1)
	if !bytes.Equal(b, []byte{0x01}) || old != 0 {
		t.Fatalf("SETBIT 7 1 on missing: %x, old %d", b, old)
	}
	b, old = SetBit(b, 0, 1)
	if !bytes.Equal(b, []byte{0x81}) || old != 0 {
		t.Fatalf("SETBIT 0 1: %x, old %d", b, old)
	}
	b, old = SetBit(b, 0, 1)
	if old != 1 {
		t.Fatalf("SETBIT 0 1 again: old %d", old)
	}
	b, old = SetBit(b, 0, 0)
	if !bytes.Equal(b, []byte{0x01}) || old != 1 {
		t.Fatalf("SETBIT 0 0: %x, old %d", b, old)
	}
	// Growing pads with zeros, even when the slice has spare capacity
	// holding junk.
	junk := append(make([]byte, 0, 16), 0xff)
	junk = append(junk, 0xee, 0xee, 0xee)[:1]
	g, old := SetBit(junk, 25, 0)
	if !bytes.Equal(g, []byte{0xff, 0, 0, 0}) || old != 0 {
		t.Fatalf("SETBIT 25 0 grow: %x, old %d", g, old)
	}
	for _, tc := range []struct {
		off  uint64
		want int
	}{{0, 0}, {7, 1}, {8, 0}, {1000, 0}, {1 << 62, 0}, {^uint64(0), 0}} {
		if got := GetBit(b, tc.off); got != tc.want {
			t.Errorf("GetBit(%d) = %d, want %d", tc.off, got, tc.want)
		}
	}
	if GetBit(nil, 0) != 0 {
		t.Error("GetBit on nil")
	}
	if got := Grow([]byte{1}, 0); len(got) != 1 {
		t.Errorf("Grow shrank: %d", len(got))
	}
	if got := Grow(nil, 9); len(got) != 2 {
		t.Errorf("Grow(nil, 9) gave %d bytes, want 2", len(got))
	}
}

func TestCount(t *testing.T) {
	foobar := []byte("foobar") // 4 6 6 3 3 4 bits per byte
	tests := []struct {
		name       string
		b          []byte
		start, end int64
		bit        bool
		want       int64
	}{
		{"whole", foobar, 0, -1, false, 26},
		{"byte 0", foobar, 0, 0, false, 4},
		{"byte 1", foobar, 1, 1, false, 6},
		{"1 -2", foobar, 1, -2, false, 18},
		{"-2 1", foobar, -2, 1, false, 0},
		{"0 1000", foobar, 0, 1000, false, 26},
		{"docs bit 5 30", foobar, 5, 30, true, 17},
		{"bit whole", foobar, 0, -1, true, 26},
		{"bit 10 14", foobar, 10, 14, true, 4},
		{"bit 10 -34", foobar, 10, -34, true, 4},
		{"bit 3 14", foobar, 3, 14, true, 7},
		{"bit 3 -34", foobar, 3, -34, true, 7},
		{"bit 3 29", foobar, 3, 29, true, 16},
		{"bit 3 -19", foobar, 3, -19, true, 16},
		{"bit -2 1", foobar, -2, 1, true, 0},
		{"bit 0 1000", foobar, 0, 1000, true, 26},
		{"bit one byte", foobar, 1, 6, true, 4},
		{"out of range", []byte("xxxx"), 4, 10, false, 0},
		{"bit out of range", []byte("xxxx"), 32, 87, true, 0},
		{"both negative start > end", []byte("xxxx"), -6, -7, false, 0},
		{"bit both negative start > end", []byte("xxxx"), -6, -15, true, 0},
		// Both before the string: clamped to the first byte, a Redis quirk.
		{"before start", foobar, -100, -50, false, 4},
		{"end clamps to 0", foobar, 0, -100, false, 4},
		{"bit before start", foobar, -100, -60, true, 0},
		{"bit end clamps to 0", []byte{0x80}, 0, -100, true, 1},
		{"empty", nil, 0, -1, false, 0},
		{"empty bit", nil, 0, 1000, true, 0},
		{"misaligned prefix", []byte("ab"), 1, -1, false, 3},
		{"prefix+words+remainder", []byte("__PPxxxxxxxxxxxxxxxxRR__"), 2, -3, false, 74},
		{"huge", foobar, -1 << 63, 1<<63 - 1, false, 26},
		{"huge bit", foobar, -1 << 63, 1<<63 - 1, true, 26},
	}
	for _, tc := range tests {
		if got := Count(tc.b, tc.start, tc.end, tc.bit); got != tc.want {
			t.Errorf("%s: Count(%q, %d, %d, bit=%v) = %d, want %d", tc.name, tc.b, tc.start, tc.end, tc.bit, got, tc.want)
		}
	}
	for _, v := range []string{"", "\xaa", "\x00\x00\xff", "foobar", "123"} {
		want := naiveCount([]byte(v), 0, int64(len(v))*8-1)
		if got := CountAll([]byte(v)); got != want {
			t.Errorf("CountAll(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestPos(t *testing.T) {
	const none = int64(-9) // marker: end not given
	words := func(fill byte, last byte) []byte {
		b := bytes.Repeat([]byte{fill}, 27)
		return append(b, last)
	}
	type tc struct {
		b          string
		bit        int
		start, end int64
		unitBit    bool
		want       int64
	}
	tests := []tc{
		// The documentation's examples.
		{"\xff\xf0\x00", 0, 0, none, false, 12},
		{"\x00\xff\xf0", 1, 0, none, false, 8},
		{"\x00\xff\xf0", 1, 2, none, false, 16},
		{"\x00\xff\xf0", 1, 2, -1, false, 16},
		{"\x00\xff\xf0", 1, 7, 15, true, 8},
		{"\x00\xff\xf0", 1, 7, -3, true, 8},
		{"\x00\x00\x00", 1, 0, none, false, -1},
		// Less than a word.
		{"\xff\xf0\x00", 0, 0, -1, true, 12},
		{"\x00\x0f\x00", 1, 0, none, false, 12},
		{"\x00\x0f\x00", 1, 0, -1, true, 12},
		{"\xff\xf0\x00", 0, 1, none, false, 12},
		{"\xff\xf0\x00", 0, 1, -1, true, 12},
		{"\x00\x0f\xff", 1, 1, none, false, 12},
		{"\x00\x0f\xff", 1, 1, -1, true, 12},
		// Intervals.
		{"\x00\xff\x00", 0, 0, -1, false, 0},
		{"\x00\xff\x00", 0, 1, -1, false, 16},
		{"\x00\xff\x00", 0, 2, -1, false, 16},
		{"\x00\xff\x00", 0, 2, 200, false, 16},
		{"\x00\xff\x00", 0, 1, 1, false, -1},
		{"\x00\xff\x00", 0, 0, -1, true, 0},
		{"\x00\xff\x00", 0, 8, -1, true, 16},
		{"\x00\xff\x00", 0, 16, -1, true, 16},
		{"\x00\xff\x00", 0, 16, 200, true, 16},
		{"\x00\xff\x00", 0, 8, 8, true, -1},
		{"\x00\xff\x00", 1, 0, -1, false, 8},
		{"\x00\xff\x00", 1, 1, -1, false, 8},
		{"\x00\xff\x00", 1, 2, -1, false, -1},
		{"\x00\xff\x00", 1, 2, 200, false, -1},
		{"\x00\xff\x00", 1, 1, 1, false, 8},
		{"\x00\xff\x00", 1, 0, -1, true, 8},
		{"\x00\xff\x00", 1, 8, -1, true, 8},
		{"\x00\xff\x00", 1, 16, -1, true, -1},
		{"\x00\xff\x00", 1, 16, 200, true, -1},
		{"\x00\xff\x00", 1, 8, 8, true, 8},
		// Looking for 0 without an end: the bit after the string.
		{"\xff\xff\xff", 0, 0, none, false, 24},
		{"\xff\xff\xff", 0, 2, none, false, 24},
		{"\xff\xff\xff", 0, -1, none, false, 24},
		{"\xff\xff\xff", 0, 0, -1, false, -1},
		{"\xff\xff\xff", 0, 0, -1, true, -1},
		{"\xff\xff\xff", 0, 5, none, false, -1}, // empty range
		{"\xff\xff\xff", 1, 3, none, false, -1},
		// Empty ranges and strings.
		{"", 0, 0, none, false, -1},
		{"", 1, 0, none, false, -1},
		{"", 0, 0, -1, true, -1},
		{"\x00\x00", 1, 1, 0, false, -1},
		{"\x00\x00", 0, -1, -2, false, -1},
		// Both negative and reversed: unlike BITCOUNT, clamping decides.
		{"\x0f", 1, -5, -10, false, 4},
		{"\x80\x00", 1, -100, -50, true, 0},
		// Bit ranges within one byte.
		{"\x81", 1, 1, 6, true, -1},
		{"\x81", 1, 1, 7, true, 7},
		{"\x7e", 0, 1, 6, true, -1},
		{"\x7e", 0, 1, 7, true, 7},
		{"\x7e", 0, 0, 7, true, 0},
	}
	// Unaligned prefix, full words, remainder.
	for s := int64(0); s <= 8; s++ {
		tests = append(tests,
			tc{string(words(0xff, 0x0f)), 0, s, none, false, 216},
			tc{string(words(0x00, 0xf0)), 1, s, none, false, 216},
			tc{string(words(0xff, 0x0f)), 0, 8*s + 1, -1, true, 216},
			tc{string(words(0x00, 0xf0)), 1, 8*s + 1, -1, true, 216},
		)
	}
	for _, c := range tests {
		endGiven, end := c.end != none, c.end
		if !endGiven {
			end = 0
		}
		if got := Pos([]byte(c.b), c.bit, c.start, end, endGiven, c.unitBit); got != c.want {
			t.Errorf("Pos(%q, %d, %d, %d, endGiven=%v, bit=%v) = %d, want %d",
				c.b, c.bit, c.start, c.end, endGiven, c.unitBit, got, c.want)
		}
	}
	// All-zero strings of every length up to 20 have no 1.
	for n := range 20 {
		b := make([]byte, n)
		if Pos(b, 1, 0, 0, false, false) != -1 || Pos(b, 1, 0, -1, true, true) != -1 {
			t.Errorf("found a 1 in %d zero bytes", n)
		}
	}
}

func TestOp(t *testing.T) {
	a := []byte("\x01\x02\xff\xff")
	b := []byte("\x01\x02\xff")
	x := []byte("\x01\x02\xff")
	tests := []struct {
		op   OpCode
		srcs [][]byte
		want string
	}{
		{OpNot, [][]byte{[]byte("\xaa\x00\xff\x55")}, "\x55\xff\x00\xaa"},
		{OpNot, [][]byte{{}}, ""},
		{OpNot, [][]byte{nil}, ""},
		// Single source: AND, OR, XOR, ONE leave it unchanged.
		{OpAnd, [][]byte{x}, "\x01\x02\xff"},
		{OpOr, [][]byte{x}, "\x01\x02\xff"},
		{OpXor, [][]byte{x}, "\x01\x02\xff"},
		{OpOne, [][]byte{x}, "\x01\x02\xff"},
		{OpDiff, [][]byte{x}, "\x01\x02\xff"},
		{OpDiff1, [][]byte{x}, "\x00\x00\x00"},
		{OpAndOr, [][]byte{x}, "\x00\x00\x00"},
		// Missing keys read as zeros.
		{OpAnd, [][]byte{nil, x}, "\x00\x00\x00"},
		{OpOr, [][]byte{nil, x, nil}, "\x01\x02\xff"},
		{OpXor, [][]byte{nil, x}, "\x01\x02\xff"},
		{OpDiff, [][]byte{x, nil}, "\x01\x02\xff"},
		{OpDiff1, [][]byte{x, nil}, "\x00\x00\x00"},
		{OpAndOr, [][]byte{x, nil}, "\x00\x00\x00"},
		{OpOne, [][]byte{nil, x}, "\x01\x02\xff"},
		{OpDiff1, [][]byte{nil, x}, "\x01\x02\xff"},
		{OpAndOr, [][]byte{nil, x}, "\x00\x00\x00"},
		// Shorter keys are zero-padded.
		{OpAnd, [][]byte{a, b}, "\x01\x02\xff\x00"},
		{OpOr, [][]byte{a, b}, "\x01\x02\xff\xff"},
		{OpXor, [][]byte{a, b}, "\x00\x00\x00\xff"},
		{OpDiff, [][]byte{a, b}, "\x00\x00\x00\xff"},
		{OpDiff1, [][]byte{a, b}, "\x00\x00\x00\x00"},
		{OpAndOr, [][]byte{a, b}, "\x01\x02\xff\x00"},
		{OpOne, [][]byte{a, b}, "\x00\x00\x00\xff"},
		{OpDiff1, [][]byte{b, a}, "\x00\x00\x00\xff"},
		{OpAndOr, [][]byte{b, a}, "\x01\x02\xff\x00"},
		// ONE across three sources (the example in Redis's source).
		{OpOne, [][]byte{{0x17}, {0x26}, {0x4d}}, "\x78"},
		{OpXor, [][]byte{{0x17}, {0x26}, {0x4d}}, "\x7c"},
		// Integer-looking strings are just bytes.
		{OpXor, [][]byte{[]byte("1"), []byte("2"), []byte("1")}, "2"},
		// Empty after non-empty.
		{OpOr, [][]byte{make([]byte, 32), nil}, strings.Repeat("\x00", 32)},
		{OpAnd, [][]byte{nil, nil}, ""},
	}
	for _, tc := range tests {
		got := Op(tc.op, tc.srcs)
		if string(got) != tc.want {
			t.Errorf("%v %q = %q, want %q", tc.op, tc.srcs, got, tc.want)
		}
		if len(tc.want) == 0 && got != nil {
			t.Errorf("%v %q: empty result should be nil", tc.op, tc.srcs)
		}
	}
	// Op never writes into its sources.
	s1, s2 := []byte("\x0f\xf0"), []byte("\xff")
	Op(OpOne, [][]byte{s1, s2})
	Op(OpDiff1, [][]byte{s1, s2})
	if string(s1) != "\x0f\xf0" || string(s2) != "\xff" {
		t.Errorf("sources modified: %q %q", s1, s2)
	}
	if OpAndOr.String() != "ANDOR" || OpCode(99).String() != "UNKNOWN" {
		t.Errorf("names: %s %s", OpAndOr, OpCode(99))
	}
}

func TestBitfield(t *testing.T) {
	var b []byte
	check := func(what string, got, want int64, ok bool) {
		t.Helper()
		if !ok || got != want {
			t.Errorf("%s = %d (ok %v), want %d", what, got, ok, want)
		}
	}
	b, old, ok := FieldSet(b, 0, 8, true, -100, Wrap)
	check("SET i8 0 -100", old, 0, ok)
	b, old, ok = FieldSet(b, 0, 8, true, 101, Wrap)
	check("SET i8 0 101", old, -100, ok)
	check("GET i8 0", GetSigned(b, 0, 8), 101, true)

	b = nil
	b, old, ok = FieldSet(b, 0, 8, false, 255, Wrap)
	check("SET u8 0 255", old, 0, ok)
	b, old, ok = FieldSet(b, 0, 8, false, 100, Wrap)
	check("SET u8 0 100", old, 255, ok)
	check("GET u8 0", int64(GetUnsigned(b, 0, 8)), 100, true)

	b = nil
	b, old, _ = FieldSet(b, 0, 8, true, 255, Wrap)
	b, old, _ = FieldSet(b, 0, 8, true, 100, Wrap)
	check("SET i8 255 then SET returns", old, -1, true)

	b = nil
	b, _, _ = FieldSet(b, 0, 8, false, 255, Wrap)
	b, v, ok := FieldIncrBy(b, 0, 8, false, 100, Wrap)
	check("INCRBY u8 0 100 from 255", v, 99, ok)

	// #<idx> form is the caller multiplying; the bytes come out as text.
	b = nil
	for i, c := range []byte("ABC") {
		b, _, _ = FieldSet(b, uint64(i)*8, 8, false, int64(c), Wrap)
	}
	if string(b) != "ABC" {
		t.Errorf("SET u8 #0..#2 = %q", b)
	}

	b = []byte{10}
	b, v, ok = FieldIncrBy(b, 0, 8, false, 100, Wrap)
	check("INCRBY 100", v, 110, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, false, 100, Wrap)
	check("INCRBY 100 again", v, 210, ok)

	// Overflow policies, from Redis's bitfield tests.
	b = []byte{100}
	b, v, ok = FieldIncrBy(b, 0, 8, false, 257, Wrap)
	check("u8 wrap +257", v, 101, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, false, 255, Wrap)
	check("u8 wrap +255", v, 100, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, false, 257, Sat)
	check("u8 sat +257", v, 255, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, false, -255, Sat)
	check("u8 sat -255", v, 0, ok)
	b = []byte{100}
	b, v, ok = FieldIncrBy(b, 0, 8, true, 257, Wrap)
	check("i8 wrap +257", v, 101, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, true, 255, Wrap)
	check("i8 wrap +255", v, 100, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, true, 257, Sat)
	check("i8 sat +257", v, 127, ok)
	b, v, ok = FieldIncrBy(b, 0, 8, true, -255, Sat)
	check("i8 sat -255", v, -128, ok)
	b, _, ok = FieldIncrBy(b, 0, 8, true, -1, Fail)
	if ok || GetSigned(b, 0, 8) != -128 {
		t.Errorf("i8 fail -1 from -128: ok %v, now %d", ok, GetSigned(b, 0, 8))
	}

	// Unsigned SET of a negative value reads it as a huge unsigned number.
	b, _, _ = FieldSet(nil, 0, 8, false, -5, Sat)
	check("u8 sat SET -5", int64(GetUnsigned(b, 0, 8)), 255, true)
	b, _, _ = FieldSet(nil, 0, 8, false, -5, Wrap)
	check("u8 wrap SET -5", int64(GetUnsigned(b, 0, 8)), 251, true)
	b, _, ok = FieldSet(nil, 0, 8, false, -5, Fail)
	if ok || len(b) != 1 || b[0] != 0 {
		t.Errorf("u8 fail SET -5: ok %v, b %x (want grown, unchanged)", ok, b)
	}
	b, _, _ = FieldSet(nil, 0, 4, true, 8, Sat)
	check("i4 sat SET 8", GetSigned(b, 0, 4), 7, true)
	b, _, _ = FieldSet(nil, 0, 4, true, -9, Sat)
	check("i4 sat SET -9", GetSigned(b, 0, 4), -8, true)
	b, _, _ = FieldSet(nil, 0, 4, true, 9, Wrap)
	check("i4 wrap SET 9", GetSigned(b, 0, 4), -7, true)
	// Redis computes max-value in 64 bits; for a value so negative that
	// it wraps, SAT takes the overflow as upward.
	b, _, _ = FieldSet(nil, 0, 8, true, -1<<63, Sat)
	check("i8 sat SET min int64", GetSigned(b, 0, 8), 127, true)
	b, _, _ = FieldSet(nil, 0, 8, true, -1<<63+128, Sat)
	check("i8 sat SET min int64 + 128", GetSigned(b, 0, 8), -128, true)

	// Regression #3564: the INCRBY overlaps the first SET.
	b = nil
	b, _, _ = FieldSet(b, 0, 8, true, 10, Wrap)
	b, _, _ = FieldSet(b, 64, 8, true, 10, Wrap)
	b, v, ok = FieldIncrBy(b, 10, 8, true, 99900, Wrap)
	check("#3564", v, 60, ok)

	// Regression #3221: GET u1 0 of "1" (0x31).
	check("GET u1 0 of \"1\"", int64(GetUnsigned([]byte("1"), 0, 1)), 0, true)

	// 64-bit signed extremes.
	b, v, ok = FieldIncrBy(nil, 3, 64, true, 1<<63-1, Fail)
	check("i64 +max", v, 1<<63-1, ok)
	if _, _, ok = FieldIncrBy(b, 3, 64, true, 1, Fail); ok {
		t.Error("i64 max+1 did not fail")
	}
	b, v, ok = FieldIncrBy(b, 3, 64, true, 1, Wrap)
	check("i64 wrap max+1", v, -1<<63, ok)
	b, v, ok = FieldIncrBy(b, 3, 64, true, -1, Sat)
	check("i64 sat min-1", v, -1<<63, ok)
	check("GET i64", GetSigned(b, 3, 64), -1<<63, true)
	check("GET u63", int64(GetUnsigned(b, 3, 63)), 1<<62, true)
	_, v, ok = FieldIncrBy(nil, 0, 63, false, 1<<63-1, Wrap)
	check("u63 wrap +max", v, 1<<63-1, ok)

	// Reads past the end are zeros; the big offset case from Redis.
	big, _ := SetBit(nil, 1<<20, 1)
	check("GET u8 at set bit", int64(GetUnsigned(big, 1<<20, 8)), 128, true)
	big, old, _ = FieldSet(big, 1<<20, 8, false, 255, Wrap)
	check("SET u8 255 old", old, 128, true)
	check("GET i8", GetSigned(big, 1<<20, 8), -1, true)
	check("GET past end", int64(GetUnsigned(big, 1<<40, 64)), 0, true)
	check("GET far past end", GetSigned(big, ^uint64(0)-3, 64), 0, true)
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"SetBit 2":      func() { SetBit(nil, 0, 2) },
		"Pos bit 2":     func() { Pos([]byte{0}, 2, 0, 0, false, false) },
		"u64":           func() { FieldSet(nil, 0, 64, false, 0, Wrap) },
		"i65":           func() { FieldIncrBy(nil, 0, 65, true, 0, Wrap) },
		"width 0":       func() { GetUnsigned(nil, 0, 0) },
		"Op no sources": func() { Op(OpAnd, nil) },
		"Op unknown":    func() { Op(OpCode(42), [][]byte{{1}}) },
		"offset wraps":  func() { SetBits(nil, ^uint64(0)-2, 8, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
