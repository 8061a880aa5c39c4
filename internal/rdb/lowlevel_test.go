package rdb

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestLengthRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 1, 63, 64, 16383, 16384, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		b := appendLen(nil, n)
		r := &reader{b: b}
		got, err := r.count()
		if err != nil || got != n || r.left() != 0 {
			t.Errorf("length %d: got %d, %v, %d left (bytes %x)", n, got, err, r.left(), b)
		}
	}
	// Sizes as Redis writes them.
	for n, size := range map[uint64]int{63: 1, 64: 2, 16383: 2, 16384: 5, math.MaxUint32: 5, math.MaxUint32 + 1: 9} {
		if got := len(appendLen(nil, n)); got != size {
			t.Errorf("length %d takes %d bytes, want %d", n, got, size)
		}
	}
}

func TestStringEncodings(t *testing.T) {
	cases := []struct {
		in   string
		want string // hex of the encoding, "" to only check the round trip
	}{
		{"0", "c000"},
		{"-1", "c0ff"},
		{"127", "c07f"},
		{"128", "c18000"},
		{"-32768", "c10080"},
		{"32768", "c200800000"},
		{"2147483647", "c2ffffff7f"},
		{"2147483648", "0a32313437343833363438"},
		{"007", "03303037"},
		{"-0", "022d30"},
		{"+1", "022b31"},
		{"", "00"},
		{"abc", "03616263"},
	}
	for _, c := range cases {
		b := appendString(nil, []byte(c.in), true)
		if c.want != "" && strconv.Quote(string(b)) != strconv.Quote(string(mustHex(t, c.want))) {
			t.Errorf("%q encodes as %x, want %s", c.in, b, c.want)
		}
		r := &reader{b: b}
		got, err := r.bstr()
		if err != nil || string(got) != c.in || r.left() != 0 {
			t.Errorf("%q: decoded %q, %v", c.in, got, err)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, len(s)/2)
	for i := range b {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			t.Fatal(err)
		}
		b[i] = byte(v)
	}
	return b
}

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{
		bytes.Repeat([]byte("a"), 21),
		bytes.Repeat([]byte("abcdefgh"), 2000),
		bytes.Repeat([]byte{0}, 100000),
	}
	for i := 0; i < 300; i++ {
		n := rng.IntN(20000)
		b := make([]byte, n)
		alpha := 1 + rng.IntN(255)
		for j := 0; j < n; {
			if j > 20 && rng.IntN(3) == 0 {
				from := rng.IntN(j - 3)
				for k := 0; k < 3+rng.IntN(300) && j < n; k++ {
					b[j] = b[from+k]
					j++
				}
				continue
			}
			b[j] = byte(rng.IntN(alpha))
			j++
		}
		inputs = append(inputs, b)
	}
	compressed := 0
	for _, in := range inputs {
		c := lzfCompress(in)
		if c == nil {
			continue
		}
		compressed++
		if len(c) > len(in)-4 {
			t.Fatalf("compressed %d bytes to %d", len(in), len(c))
		}
		out, err := lzfDecompress(c, len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %d bytes failed: %v", len(in), err)
		}
		if _, err := lzfDecompress(c, len(in)+1); err == nil {
			t.Fatal("wrong declared length accepted")
		}
		if _, err := lzfDecompress(c[:len(c)-1], len(in)); err == nil {
			t.Fatal("truncated input accepted")
		}
	}
	if compressed < 200 {
		t.Fatalf("only %d of %d inputs compressed", compressed, len(inputs))
	}
	if c := lzfCompress([]byte("abcd")); c != nil {
		t.Fatal("4 bytes compressed")
	}
}

// A known LZF stream: a literal "ab" then a back-reference of length 6 at
// distance 2, which overlaps its own output.
func TestLZFOverlap(t *testing.T) {
	out, err := lzfDecompress([]byte{1, 'a', 'b', 4 << 5, 1}, 8)
	if err != nil || string(out) != "abababab" {
		t.Fatalf("got %q, %v", out, err)
	}
	if _, err := lzfDecompress([]byte{1, 'a', 'b', 4 << 5, 5}, 8); err == nil {
		t.Fatal("reference before the start accepted")
	}
}

func TestListpackEntries(t *testing.T) {
	ints := []int64{0, 127, 128, -1, -4096, 4095, -4097, 4096, math.MinInt16, math.MaxInt16,
		math.MaxInt16 + 1, -1 << 23, 1<<23 - 1, 1 << 23, math.MinInt32, math.MaxInt32,
		math.MaxInt32 + 1, math.MinInt64, math.MaxInt64}
	sizes := map[int64]int{0: 2, 127: 2, 128: 3, -4096: 3, 4096: 4, math.MaxInt16 + 1: 5, 1 << 23: 6, math.MaxInt32 + 1: 10}
	strs := [][]byte{{}, []byte("x"), bytes.Repeat([]byte("s"), 63), bytes.Repeat([]byte("s"), 64),
		bytes.Repeat([]byte("t"), 4095), bytes.Repeat([]byte("t"), 4096), bytes.Repeat([]byte("u"), 70000), []byte("01"), []byte("-0")}
	lp := newListpack(0)
	for _, v := range ints {
		before := len(lp.b)
		lp.addInt(v)
		if want, ok := sizes[v]; ok && len(lp.b)-before != want {
			t.Errorf("integer %d takes %d bytes, want %d", v, len(lp.b)-before, want)
		}
	}
	for _, s := range strs {
		lp.addString(s)
	}
	lp.addString([]byte("-12345"))
	p := lp.finish()
	var got []string
	if err := walkListpack(p, func(s []byte, v int64) error {
		if s == nil {
			got = append(got, "i"+strconv.FormatInt(v, 10))
		} else {
			got = append(got, "s"+string(s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range ints {
		want = append(want, "i"+strconv.FormatInt(v, 10))
	}
	for _, s := range strs {
		want = append(want, "s"+string(s))
	}
	want = append(want, "i-12345")
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("element %d: %.40q want %.40q", i, got[i], want[i])
		}
	}
	// Every truncation and most single-byte corruptions are refused or
	// at least do not panic.
	for i := 0; i < len(p); i += 1 + i/50 {
		_ = walkListpack(p[:i], func([]byte, int64) error { return nil })
		q := bytes.Clone(p)
		q[i] ^= 0x55
		_ = walkListpack(q, func([]byte, int64) error { return nil })
		if i < len(p) && walkListpack(p[:i], func([]byte, int64) error { return nil }) == nil {
			t.Fatalf("listpack truncated to %d bytes accepted", i)
		}
	}
}

func TestIntsetRoundTrip(t *testing.T) {
	for _, vs := range [][]int64{{1, 2, 3}, {-40000, 5}, {math.MinInt64, 0, math.MaxInt64}} {
		p := appendIntset(nil, vs)
		var got []int64
		if err := walkIntset(p, func(v int64) error { got = append(got, v); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(vs) {
			t.Fatalf("%v: got %v", vs, got)
		}
	}
	if err := walkIntset(appendIntset(nil, []int64{3, 2}), func(int64) error { return nil }); err == nil {
		t.Fatal("unsorted intset accepted")
	}
	if err := walkIntset([]byte{3, 0, 0, 0, 0, 0, 0, 0}, func(int64) error { return nil }); err == nil {
		t.Fatal("intset of width 3 accepted")
	}
}

func TestCanonicalInt(t *testing.T) {
	for _, s := range []string{"0", "-1", "9223372036854775807", "-9223372036854775808", "123", "-0", "+1", "01", "", "-",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999", "1a", " 1", "1 "} {
		v, err := strconv.ParseInt(s, 10, 64)
		want := err == nil && strconv.FormatInt(v, 10) == s
		got, ok := canonicalInt([]byte(s))
		if ok != want || ok && got != v {
			t.Errorf("%q: got %d %v, want %d %v", s, got, ok, v, want)
		}
	}
}
