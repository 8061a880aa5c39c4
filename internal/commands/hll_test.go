package commands_test

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Client-level tests of PFADD, PFCOUNT and PFMERGE through go-redis and raw
// RESP.

const hllDenseLen = 16 + 16384*6/8

func TestHLLGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	bmEq(t, "PFADD new", c.PFAdd(ctx, "h", "a", "b", "c").Val(), int64(1))
	bmEq(t, "PFADD same", c.PFAdd(ctx, "h", "a", "b").Val(), int64(0))
	bmEq(t, "PFADD no elements, existing", c.Do(ctx, "PFADD", "h").Val(), any(int64(0)))
	bmEq(t, "PFADD no elements, new", c.Do(ctx, "PFADD", "empty").Val(), any(int64(1)))
	bmEq(t, "created", c.Exists(ctx, "empty").Val(), int64(1))
	bmEq(t, "PFCOUNT empty", c.PFCount(ctx, "empty").Val(), int64(0))
	bmEq(t, "PFCOUNT", c.PFCount(ctx, "h").Val(), int64(3))
	bmEq(t, "PFCOUNT missing", c.PFCount(ctx, "nokey").Val(), int64(0))
	bmEq(t, "encoding", c.ObjectEncoding(ctx, "h").Val(), "raw")

	// The value is a string in Redis's format; PFADD marks the cached
	// cardinality stale, PFCOUNT writes it back.
	c.PFAdd(ctx, "h", "d")
	v := c.Get(ctx, "h").Val()
	if len(v) < 16 || v[:5] != "HYLL\x01" || v[15]&0x80 == 0 {
		t.Fatalf("after PFADD: header %q", v[:min(16, len(v))])
	}
	bmEq(t, "PFCOUNT after d", c.PFCount(ctx, "h").Val(), int64(4))
	v = c.Get(ctx, "h").Val()
	if v[15]&0x80 != 0 || binary.LittleEndian.Uint64([]byte(v[8:16])) != 4 {
		t.Fatalf("after PFCOUNT: header %q", v[:16])
	}

	// Several keys: the union, and no value changes.
	c.PFAdd(ctx, "h2", "c", "d", "e", "f")
	before1, before2 := c.Get(ctx, "h").Val(), c.Get(ctx, "h2").Val()
	bmEq(t, "PFCOUNT union", c.PFCount(ctx, "h", "h2", "nokey").Val(), int64(6))
	bmEq(t, "h unchanged", c.Get(ctx, "h").Val() == before1, true)
	bmEq(t, "h2 unchanged", c.Get(ctx, "h2").Val() == before2, true)

	bmNoErr(t, "PFMERGE", c.PFMerge(ctx, "u", "h", "h2").Err())
	bmEq(t, "PFCOUNT merged", c.PFCount(ctx, "u").Val(), int64(6))
	bmNoErr(t, "PFMERGE into existing", c.PFMerge(ctx, "h", "h2").Err())
	bmEq(t, "PFCOUNT h after merge", c.PFCount(ctx, "h").Val(), int64(6))
	bmNoErr(t, "PFMERGE dest only", c.PFMerge(ctx, "m").Err())
	bmEq(t, "PFMERGE creates", c.PFCount(ctx, "m").Val(), int64(0))

	// Errors.
	c.Set(ctx, "s", "plain", 0)
	const notHLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
	bmErr(t, "PFADD plain", c.PFAdd(ctx, "s", "x").Err(), notHLL)
	bmErr(t, "PFCOUNT plain", c.PFCount(ctx, "s").Err(), notHLL)
	bmErr(t, "PFCOUNT plain of two", c.PFCount(ctx, "h", "s").Err(), notHLL)
	bmErr(t, "PFMERGE plain", c.PFMerge(ctx, "d", "s").Err(), notHLL)
	bmEq(t, "no destination", c.Exists(ctx, "d").Val(), int64(0))
	c.Set(ctx, "corrupt", hllHeader(1)+"\x7f\xfe", 0)
	bmErr(t, "PFCOUNT corrupt", c.PFCount(ctx, "corrupt").Err(), "INVALIDOBJ Corrupted HLL object detected")
	bmErr(t, "PFMERGE corrupt", c.PFMerge(ctx, "d", "corrupt").Err(), "INVALIDOBJ Corrupted HLL object detected")
}

// TestHLLAccuracyAndDense adds enough elements to go dense and checks the
// estimate; hll-sparse-max-bytes 0 makes the first register write dense.
func TestHLLAccuracyAndDense(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx

	const n = 20000
	batch := make([]any, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, "user:"+strconv.Itoa(i))
		if len(batch) == cap(batch) {
			c.PFAdd(ctx, "big", batch...)
			batch = batch[:0]
		}
	}
	got := c.PFCount(ctx, "big").Val()
	if got < n*98/100 || got > n*102/100 {
		t.Errorf("PFCOUNT of %d distinct: %d, more than 2%% off", n, got)
	}
	bmEq(t, "dense length", len(c.Get(ctx, "big").Val()), hllDenseLen)

	bmNoErr(t, "CONFIG SET", c.ConfigSet(ctx, "hll-sparse-max-bytes", "0").Err())
	c.PFAdd(ctx, "tiny", "x")
	bmEq(t, "dense at once", len(c.Get(ctx, "tiny").Val()), hllDenseLen)
	bmEq(t, "PFCOUNT tiny", c.PFCount(ctx, "tiny").Val(), int64(1))
	// Merging a dense value makes the destination dense.
	bmNoErr(t, "CONFIG SET", c.ConfigSet(ctx, "hll-sparse-max-bytes", "3000").Err())
	c.PFAdd(ctx, "small", "y")
	bmEq(t, "sparse", len(c.Get(ctx, "small").Val()) < 100, true)
	c.PFMerge(ctx, "small", "tiny")
	bmEq(t, "dense after merge", len(c.Get(ctx, "small").Val()), hllDenseLen)
	bmEq(t, "PFCOUNT merged", c.PFCount(ctx, "small").Val(), int64(2))
}

func TestHLLRawRESP(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"PFADD", "h", "a"}, ":1\r\n"},
		{[]string{"PFCOUNT", "h"}, ":1\r\n"},
		{[]string{"PFMERGE", "h2", "h"}, "+OK\r\n"},
		{[]string{"PFCOUNT", "h", "h2"}, ":1\r\n"},
		{[]string{"SET", "s", "x"}, "+OK\r\n"},
		{[]string{"PFADD", "s", "a"}, "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{[]string{"PFADD"}, "-ERR wrong number of arguments for 'pfadd' command\r\n"},
		{[]string{"PFCOUNT"}, "-ERR wrong number of arguments for 'pfcount' command\r\n"},
		{[]string{"PFMERGE"}, "-ERR wrong number of arguments for 'pfmerge' command\r\n"},
	} {
		if got := c.Do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
