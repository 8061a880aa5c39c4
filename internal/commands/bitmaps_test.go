package commands_test

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Client-level tests of the bitmap family through go-redis and raw RESP,
// and the Redis 8.2 BITOP operations against a bit-by-bit model.

func bmNoErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func bmEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func bmErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: got error %v, want %q", what, err, want)
	}
}

func bmInts(t *testing.T, what string, got []int64, want ...int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

func TestBitmapsGoRedisSetGetBit(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	bmEq(t, "SETBIT new", c.SetBit(ctx, "k", 7, 1).Val(), int64(0))
	bmEq(t, "SETBIT same", c.SetBit(ctx, "k", 7, 1).Val(), int64(1))
	bmEq(t, "GET", c.Get(ctx, "k").Val(), "\x01")
	bmEq(t, "SETBIT grow", c.SetBit(ctx, "k", 23, 1).Val(), int64(0))
	bmEq(t, "GET grown", c.Get(ctx, "k").Val(), "\x01\x00\x01")
	bmEq(t, "GETBIT 7", c.GetBit(ctx, "k", 7).Val(), int64(1))
	bmEq(t, "GETBIT 6", c.GetBit(ctx, "k", 6).Val(), int64(0))
	bmEq(t, "GETBIT past end", c.GetBit(ctx, "k", 1<<20).Val(), int64(0))
	bmEq(t, "GETBIT missing", c.GetBit(ctx, "nokey", 3).Val(), int64(0))
	bmEq(t, "SETBIT clear", c.SetBit(ctx, "k", 7, 0).Val(), int64(1))
	bmEq(t, "encoding", c.ObjectEncoding(ctx, "k").Val(), "raw")

	bmErr(t, "SETBIT value 2", c.SetBit(ctx, "k", 1, 2).Err(), "ERR bit is not an integer or out of range")
	bmErr(t, "SETBIT negative offset", c.SetBit(ctx, "k", -1, 1).Err(), "ERR bit offset is not an integer or out of range")
	bmErr(t, "SETBIT offset 2^32", c.SetBit(ctx, "k", 1<<32, 1).Err(), "ERR bit offset is not an integer or out of range")
	bmErr(t, "GETBIT offset 2^32", c.GetBit(ctx, "k", 1<<32).Err(), "ERR bit offset is not an integer or out of range")

	// An integer-encoded string is read and written as its digits.
	c.Set(ctx, "n", 5, 0)
	bmEq(t, "int encoding", c.ObjectEncoding(ctx, "n").Val(), "int")
	bmEq(t, "GETBIT on '5'", c.GetBit(ctx, "n", 7).Val(), int64(1)) // '5' = 0x35
	bmEq(t, "still int", c.ObjectEncoding(ctx, "n").Val(), "int")
	bmEq(t, "SETBIT on '5'", c.SetBit(ctx, "n", 6, 1).Val(), int64(0)) // 0x37 = '7'
	bmEq(t, "now 7", c.Get(ctx, "n").Val(), "7")
	bmEq(t, "now raw", c.ObjectEncoding(ctx, "n").Val(), "raw")
	bmEq(t, "INCR still works", c.Incr(ctx, "n").Val(), int64(8))
}

func TestBitmapsGoRedisBitcountBitpos(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	c.Set(ctx, "s", "foobar", 0)
	bmEq(t, "BITCOUNT", c.BitCount(ctx, "s", nil).Val(), int64(26))
	bmEq(t, "BITCOUNT 0 0", c.BitCount(ctx, "s", &redis.BitCount{Start: 0, End: 0}).Val(), int64(4))
	bmEq(t, "BITCOUNT 1 1", c.BitCount(ctx, "s", &redis.BitCount{Start: 1, End: 1}).Val(), int64(6))
	bmEq(t, "BITCOUNT 1 1 BYTE", c.BitCount(ctx, "s", &redis.BitCount{Start: 1, End: 1, Unit: redis.BitCountIndexByte}).Val(), int64(6))
	bmEq(t, "BITCOUNT 5 30 BIT", c.BitCount(ctx, "s", &redis.BitCount{Start: 5, End: 30, Unit: redis.BitCountIndexBit}).Val(), int64(17))
	bmEq(t, "BITCOUNT -2 -1", c.BitCount(ctx, "s", &redis.BitCount{Start: -2, End: -1}).Val(), int64(7))
	bmEq(t, "BITCOUNT -1 -2", c.BitCount(ctx, "s", &redis.BitCount{Start: -1, End: -2}).Val(), int64(0))
	bmEq(t, "BITCOUNT missing", c.BitCount(ctx, "nokey", nil).Val(), int64(0))
	bmErr(t, "BITCOUNT unit", c.Do(ctx, "BITCOUNT", "s", 0, 1, "NIBBLE").Err(), "ERR syntax error")
	bmErr(t, "BITCOUNT one index", c.Do(ctx, "BITCOUNT", "s", 0).Err(), "ERR syntax error")

	c.Set(ctx, "p", "\xff\xf0\x00", 0)
	bmEq(t, "BITPOS 0", c.BitPos(ctx, "p", 0).Val(), int64(12))
	bmEq(t, "BITPOS 1", c.BitPos(ctx, "p", 1).Val(), int64(0))
	bmEq(t, "BITPOS 1 from byte 1", c.BitPos(ctx, "p", 1, 1).Val(), int64(8))
	bmEq(t, "BITPOS 1 in byte 2", c.BitPos(ctx, "p", 1, 2, -1).Val(), int64(-1))
	bmEq(t, "BITPOS 0 bits 0..11", c.BitPosSpan(ctx, "p", 0, 0, 11, "bit").Val(), int64(-1))
	bmEq(t, "BITPOS 0 bits 0..12", c.BitPosSpan(ctx, "p", 0, 0, 12, "bit").Val(), int64(12))
	bmEq(t, "BITPOS 1 bytes 1..1", c.BitPosSpan(ctx, "p", 1, 1, 1, "byte").Val(), int64(8))
	c.Set(ctx, "ones", "\xff\xff", 0)
	bmEq(t, "BITPOS 0 all ones, no end", c.BitPos(ctx, "ones", 0).Val(), int64(16))
	bmEq(t, "BITPOS 0 all ones, start only", c.BitPos(ctx, "ones", 0, 1).Val(), int64(16))
	bmEq(t, "BITPOS 0 all ones, with end", c.BitPos(ctx, "ones", 0, 0, -1).Val(), int64(-1))
	bmEq(t, "BITPOS 0 missing", c.BitPos(ctx, "nokey", 0).Val(), int64(0))
	bmEq(t, "BITPOS 1 missing", c.BitPos(ctx, "nokey", 1).Val(), int64(-1))
	bmErr(t, "BITPOS bit 2", c.BitPos(ctx, "p", 2).Err(), "ERR The bit argument must be 1 or 0.")
}

func TestBitmapsGoRedisBitop(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	c.Set(ctx, "a", "\xf0\x0f", 0)
	c.Set(ctx, "b", "\xff", 0)
	bmEq(t, "AND", c.BitOpAnd(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "AND value", c.Get(ctx, "d").Val(), "\xf0\x00")
	bmEq(t, "OR", c.BitOpOr(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "OR value", c.Get(ctx, "d").Val(), "\xff\x0f")
	bmEq(t, "XOR", c.BitOpXor(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "XOR value", c.Get(ctx, "d").Val(), "\x0f\x0f")
	bmEq(t, "NOT", c.BitOpNot(ctx, "d", "a").Val(), int64(2))
	bmEq(t, "NOT value", c.Get(ctx, "d").Val(), "\x0f\xf0")
	bmEq(t, "raw result", c.ObjectEncoding(ctx, "d").Val(), "raw")
	bmEq(t, "DIFF", c.BitOpDiff(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "DIFF value", c.Get(ctx, "d").Val(), "\x00\x0f")
	bmEq(t, "DIFF1", c.BitOpDiff1(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "DIFF1 value", c.Get(ctx, "d").Val(), "\x0f\x00")
	bmEq(t, "ANDOR", c.BitOpAndOr(ctx, "d", "a", "b").Val(), int64(2))
	bmEq(t, "ANDOR value", c.Get(ctx, "d").Val(), "\xf0\x00")
	bmEq(t, "ONE", c.BitOpOne(ctx, "d", "a", "b", "a").Val(), int64(2))
	bmEq(t, "ONE value", c.Get(ctx, "d").Val(), "\x0f\x00")
	// An empty result deletes the destination.
	bmEq(t, "OR of missing keys", c.BitOpOr(ctx, "d", "x", "y").Val(), int64(0))
	bmEq(t, "destination deleted", c.Exists(ctx, "d").Val(), int64(0))
	bmErr(t, "NOT two keys", c.Do(ctx, "BITOP", "NOT", "d", "a", "b").Err(), "ERR BITOP NOT must be called with a single source key.")
	bmErr(t, "DIFF one key", c.BitOpDiff(ctx, "d", "a").Err(), "ERR BITOP DIFF must be called with at least two source keys.")
	bmErr(t, "DIFF1 one key", c.BitOpDiff1(ctx, "d", "a").Err(), "ERR BITOP DIFF1 must be called with at least two source keys.")
	bmErr(t, "ANDOR one key", c.BitOpAndOr(ctx, "d", "a").Err(), "ERR BITOP ANDOR must be called with at least two source keys.")
	bmErr(t, "unknown op", c.Do(ctx, "BITOP", "NAND", "d", "a").Err(), "ERR syntax error")
}

// bitopModel computes BITOP bit by bit from Redis 8.2's definitions.
func bitopModel(op string, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	if n == 0 {
		return nil
	}
	bit := func(s []byte, i int) bool { return i/8 < len(s) && s[i/8]&(0x80>>(i%8)) != 0 }
	out := make([]byte, n)
	for i := 0; i < n*8; i++ {
		x := bit(srcs[0], i)
		anyY, count := false, 0
		for _, s := range srcs[1:] {
			anyY = anyY || bit(s, i)
		}
		for _, s := range srcs {
			if bit(s, i) {
				count++
			}
		}
		var v bool
		switch op {
		case "AND":
			v = count == len(srcs)
		case "OR":
			v = count > 0
		case "XOR":
			v = count%2 == 1
		case "NOT":
			v = !x
		case "DIFF":
			v = x && !anyY
		case "DIFF1":
			v = !x && anyY
		case "ANDOR":
			v = x && anyY
		case "ONE":
			v = count == 1
		}
		if v {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

// TestBitmapsBitopModel checks every BITOP operation, including Redis 8.2's
// DIFF, DIFF1, ANDOR and ONE that redis-server 7.0 cannot be compared
// with, on random sources of different lengths (some long enough for
// word-at-a-time paths, some missing or empty, some integer-encoded).
func TestBitmapsBitopModel(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	r := rand.New(rand.NewPCG(82, 82))
	for round := 0; round < 300; round++ {
		nsrc := 1 + r.IntN(5)
		keys := make([]string, nsrc)
		srcs := make([][]byte, nsrc)
		for i := range keys {
			keys[i] = "src" + strconv.Itoa(i)
			switch r.IntN(8) {
			case 0:
				c.Del(ctx, keys[i]) // missing: reads as empty
				continue
			case 1:
				v := strconv.Itoa(r.IntN(1000000))
				srcs[i] = []byte(v)
				c.Set(ctx, keys[i], v, 0)
				continue
			}
			b := make([]byte, r.IntN(100))
			for j := range b {
				switch r.IntN(3) {
				case 0:
					b[j] = 0xff
				case 1:
					b[j] = byte(r.IntN(256))
				}
			}
			srcs[i] = b
			c.Set(ctx, keys[i], b, 0)
		}
		for _, op := range []string{"AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE"} {
			if op == "NOT" && nsrc != 1 || (op == "DIFF" || op == "DIFF1" || op == "ANDOR") && nsrc < 2 {
				continue
			}
			want := bitopModel(op, srcs)
			n, err := c.Do(ctx, append([]any{"BITOP", op, "dest"}, anySlice(keys)...)...).Int64()
			bmNoErr(t, "BITOP "+op, err)
			bmEq(t, "BITOP "+op+" length", n, int64(len(want)))
			got, err := c.Get(ctx, "dest").Bytes()
			if want == nil {
				if err != redis.Nil {
					t.Fatalf("round %d BITOP %s: destination should be deleted, GET gives %q %v", round, op, got, err)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d BITOP %s %q:\n got %x\nwant %x", round, op, keys, got, want)
			}
		}
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestBitmapsGoRedisBitfield(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	got, err := c.BitField(ctx, "bf", "SET", "u8", 0, 200, "GET", "u8", 0, "GET", "i8", 0).Result()
	bmNoErr(t, "BITFIELD SET/GET", err)
	bmInts(t, "BITFIELD SET/GET", got, 0, 200, -56)
	got, _ = c.BitField(ctx, "bf", "INCRBY", "u8", 0, 100, "OVERFLOW", "SAT", "INCRBY", "u8", 0, 100, "INCRBY", "i8", 0, -300).Result()
	bmInts(t, "INCRBY wrap then sat", got, 44, 144, -128)
	// With #, offsets count in units of the field's width.
	got, _ = c.BitField(ctx, "bf", "SET", "u4", "#1", 15, "GET", "u8", 0, "GET", "u4", "#1").Result()
	bmInts(t, "# offsets", got, 0, 0x8f, 15)
	got, _ = c.BitField(ctx, "bf", "SET", "i64", 8, -1, "GET", "u63", 8, "GET", "i64", 8).Result()
	bmInts(t, "64-bit fields", got, 0, 1<<63-1, -1)
	got, _ = c.BitFieldRO(ctx, "bf", "u8", 0, "i4", 4).Result()
	bmInts(t, "BITFIELD_RO", got, 0x8f, -1)
	got, _ = c.BitField(ctx, "nokey", "GET", "u16", 100).Result()
	bmInts(t, "missing key", got, 0)
	bmEq(t, "GET only does not create", c.Exists(ctx, "nokey").Val(), int64(0))

	// OVERFLOW FAIL answers nil and writes nothing.
	v, err := c.Do(ctx, "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", 100, 4, "SET", "i3", 100, 4, "SET", "i3", 100, 3, "INCRBY", "i3", 100, 1).Slice()
	bmNoErr(t, "FAIL", err)
	if len(v) != 4 || v[0] != nil || v[1] != nil || v[2] != int64(0) || v[3] != nil {
		t.Errorf("OVERFLOW FAIL replies %#v", v)
	}
	got, _ = c.BitFieldRO(ctx, "bf", "i3", 100).Result()
	bmInts(t, "after FAIL", got, 3)

	bmErr(t, "u64", c.BitField(ctx, "bf", "GET", "u64", 0).Err(), "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
	bmErr(t, "bad offset", c.BitField(ctx, "bf", "GET", "u8", -3).Err(), "ERR bit offset is not an integer or out of range")
	bmErr(t, "bad overflow", c.BitField(ctx, "bf", "OVERFLOW", "MAYBE").Err(), "ERR Invalid OVERFLOW type specified")
	bmErr(t, "bad subcommand", c.BitField(ctx, "bf", "DECRBY", "u8", 0, 1).Err(), "ERR syntax error")
	bmErr(t, "RO write", c.Do(ctx, "BITFIELD_RO", "bf", "SET", "u8", 0, 1).Err(), "ERR BITFIELD_RO only supports the GET subcommand")
	bmErr(t, "bad value", c.BitField(ctx, "bf", "SET", "u8", 0, "x").Err(), "ERR value is not an integer or out of range")
}

// TestBitmapsRawRESP checks replies at the protocol level, RESP2 and RESP3:
// BITFIELD's nil for a failed overflow is a null bulk in RESP2 and RESP3's
// null, and an empty BITFIELD is an empty array.
func TestBitmapsRawRESP(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SETBIT", "k", "9", "1"}, ":0\r\n"},
		{[]string{"GET", "k"}, "$2\r\n\x00\x40\r\n"},
		{[]string{"BITFIELD", "k"}, "*0\r\n"},
		{[]string{"BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u1", "9", "1", "GET", "u1", "9"}, "*2\r\n$-1\r\n:1\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u1", "9", "1"}, "*1\r\n_\r\n"},
		{[]string{"BITFIELD_RO", "k", "GET", "i2", "8"}, "*1\r\n:1\r\n"},
		{[]string{"BITCOUNT", "k", "0", "-1", "BIT"}, ":1\r\n"},
		{[]string{"BITPOS", "k", "1", "0", "-1", "BIT"}, ":9\r\n"},
		{[]string{"BITOP", "NOT", "k2", "k"}, ":2\r\n"},
		{[]string{"GET", "k2"}, "$2\r\n\xff\xbf\r\n"},
	} {
		got := c.Do(tc.args...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
