package commands_test

import (
	"strconv"
	"strings"
	"testing"
)

// Differential tests of PFADD, PFCOUNT and PFMERGE against redis-server:
// replies, the HyperLogLog bytes GET returns (sparse and dense, cache
// bytes included), OBJECT ENCODING, and the dirty/hit counters.

// hllHeader builds a 16-byte HyperLogLog header: encoding 0 dense, 1
// sparse; the cached cardinality is marked stale.
func hllHeader(enc byte) string {
	return "HYLL" + string([]byte{enc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80})
}

func TestHLLDiffBasics(t *testing.T) {
	d, _ := bmDiff(t)
	bmLinesCounted(t, d, `
PFADD h
GET h
OBJECT ENCODING h
PFCOUNT h
GET h
PFADD h
PFADD h a b c
GET h
PFADD h a b c
PFADD h a
PFADD h c d
GET h
PFCOUNT h
GET h
PFCOUNT h
PFCOUNT missing
PFCOUNT missing missing2
PFCOUNT h missing
PFCOUNT missing h
PFCOUNT h h
GET h
PFADD h2 x y z a
PFCOUNT h h2
PFCOUNT h2 h
PFMERGE h3
GET h3
PFMERGE h3 h h2
GET h3
PFCOUNT h3
PFMERGE h3 h3
GET h3
PFMERGE h missing
GET h
PFMERGE h2 h2 h2 h
GET h2
PFCOUNT h2
PFMERGE m1 missing missing2
GET m1
PFCOUNT m1
SET s abc
PFADD s a
PFCOUNT s
PFCOUNT h s
PFMERGE s
PFMERGE d s
PFMERGE h s
EXISTS d
SET n 12345
PFADD n a
PFCOUNT n
PFMERGE n h
OBJECT ENCODING n
SET e ""
PFADD e a
PFCOUNT e
SET long1 HYLLfoo
PFADD long1 x
SET hyll HYLL
PFCOUNT hyll
PFADD
PFCOUNT
PFMERGE
SET ttl v EX 100
DEL ttl
PFADD ttl a
TTL ttl
`)
}

func TestHLLDiffEncodings(t *testing.T) {
	d, _ := bmDiff(t)
	// A valid sparse value short enough to be stored embstr by SET turns
	// raw when PFADD or PFCOUNT writes it, as Redis unshares it.
	empty := hllHeader(1) + "\x7f\xff"
	d.Do("SET", "em", empty)
	d.Do("OBJECT", "ENCODING", "em")
	d.Do("PFCOUNT", "em")
	d.Do("OBJECT", "ENCODING", "em")
	d.Do("GET", "em")
	d.Do("SET", "em2", empty)
	d.Do("PFADD", "em2")
	d.Do("OBJECT", "ENCODING", "em2")
	d.Do("SET", "em3", empty)
	d.Do("PFCOUNT", "em3", "em")
	d.Do("OBJECT", "ENCODING", "em3")
	d.Do("SET", "em4", empty)
	d.Do("PFMERGE", "x", "em4")
	d.Do("OBJECT", "ENCODING", "em4")
	d.Do("PFMERGE", "em4")
	d.Do("OBJECT", "ENCODING", "em4")
	d.Do("GET", "em4")
	// A valid cached cardinality is returned as it is, however wrong.
	cached := "HYLL" + string([]byte{1, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0}) + "\x7f\xff"
	d.Do("SET", "c", cached)
	d.Do("PFCOUNT", "c")
	d.Do("PFCOUNT", "c", "missing")
	d.Do("PFADD", "c")
	d.Do("PFCOUNT", "c")
	d.Do("PFADD", "c", "new")
	d.Do("PFCOUNT", "c")
	d.Do("GET", "c")
	// The three unused header bytes are carried along.
	d.Do("SET", "u", "HYLL"+string([]byte{1, 7, 8, 9, 0, 0, 0, 0, 0, 0, 0, 0x80})+"\x7f\xff")
	d.Do("PFADD", "u", "a", "b")
	d.Do("PFCOUNT", "u")
	d.Do("GET", "u")
	d.Do("PFMERGE", "u", "c")
	d.Do("GET", "u")
}

func TestHLLDiffInvalid(t *testing.T) {
	d, _ := bmDiff(t)
	cases := map[string]string{
		"short":      "HYLL\x01\x00",
		"magic":      "HYLX" + hllHeader(1)[4:] + "\x7f\xff",
		"enc2":       "HYLL\x02" + hllHeader(1)[5:] + "\x7f\xff",
		"denseshort": hllHeader(0) + strings.Repeat("\x00", 100),
		"denselong":  hllHeader(0) + strings.Repeat("\x00", 12289),
		"headeronly": hllHeader(1),
		"undershoot": hllHeader(1) + "\x7f\xfe",                     // 16383 registers
		"overshoot":  hllHeader(1) + "\x7f\xff\x00",                 // 16385
		"cutxzero":   hllHeader(1) + "\x7f",                         // XZERO missing its second byte
		"vals":       hllHeader(1) + "\x80\x84\x7f\xf8\x00\x00\x00", // VAL runs, then too few zeros
		"exact":      hllHeader(1) + "\x80\x84\x7f\xf8\x00",         // 1+1+16381+1 = 16384: valid
	}
	for key, v := range cases {
		d.Do("SET", key, v)
	}
	for _, key := range []string{"short", "magic", "enc2", "denseshort", "denselong", "headeronly",
		"undershoot", "overshoot", "cutxzero", "vals", "exact"} {
		d.Do("PFCOUNT", key)
		d.Do("PFCOUNT", key, "missing")
		d.Do("PFCOUNT", "missing", key)
		d.Do("PFMERGE", "dst:"+key, key)
		d.Do("EXISTS", "dst:"+key)
		d.Do("PFMERGE", key, "missing")
		d.Do("OBJECT", "ENCODING", key)
		// PFADD's elements land on registers spread over the value: some
		// before a corruption, which Redis keeps, some after it.
		d.Do("PFADD", key, "a")
		d.Do("PFADD", key, "foo", "bar", "baz", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
			"11", "12", "13", "14", "15", "16", "17", "18", "19", "20")
		d.Do("GET", key)
		d.Do("OBJECT", "ENCODING", key)
		d.Do("PFCOUNT", key)
	}
	a0, r0 := bmSnap(t, d)
	for _, key := range []string{"undershoot", "overshoot", "vals"} {
		d.Do("SET", key, cases[key])
		d.Do("PFADD", key, "x", "y", "z")
		d.Do("PFCOUNT", key)
	}
	bmCheckDeltas(t, d, "corrupt values", a0, r0)
}

func TestHLLDiffDense(t *testing.T) {
	d, _ := bmDiff(t)
	// Grow one key element by element past the sparse limit, another in
	// large batches; compare bytes along the way and at the end.
	a0, r0 := bmSnap(t, d)
	for i := 0; i < 3000; i++ {
		d.Do("PFADD", "one", "e"+strconv.Itoa(i))
		if i%250 == 0 {
			d.Do("GET", "one")
			d.Do("PFCOUNT", "one")
		}
	}
	d.Do("GET", "one")
	for i := 0; i < 20; i++ {
		args := []string{"PFADD", "batch"}
		for j := 0; j < 500; j++ {
			args = append(args, "b"+strconv.Itoa(i*500+j))
		}
		d.Do(args...)
		d.Do("PFCOUNT", "batch")
	}
	d.Do("GET", "batch")
	d.Do("PFCOUNT", "one", "batch")
	d.Do("PFADD", "small", "a", "b")
	d.Do("PFMERGE", "small", "one")
	d.Do("GET", "small")
	d.Do("PFMERGE", "fresh", "small", "batch")
	d.Do("GET", "fresh")
	d.Do("PFCOUNT", "fresh")
	d.Do("PFMERGE", "one", "batch")
	d.Do("GET", "one")
	d.Do("PFCOUNT", "one")
	bmCheckDeltas(t, d, "dense growth", a0, r0)

	// hll-sparse-max-bytes decides when a sparse value turns dense.
	for _, limit := range []string{"0", "1", "50", "200", "20000"} {
		d.Do("CONFIG", "SET", "hll-sparse-max-bytes", limit)
		key := "lim" + limit
		for i := 0; i < 40; i++ {
			d.Do("PFADD", key, "x"+strconv.Itoa(i*7), "y"+strconv.Itoa(i))
		}
		d.Do("GET", key)
		d.Do("PFMERGE", key+"m", key)
		d.Do("GET", key+"m")
		d.Do("PFADD", key+"n", "z")
		d.Do("PFMERGE", key+"n", key)
		d.Do("GET", key+"n")
	}
	d.Do("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
}
