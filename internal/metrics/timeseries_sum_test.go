package metrics_test

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestTSSum checks TS.SUM against TS.RANGE with one sum bucket spanning
// the range (the value it is defined to be, compared as the server writes
// it) and against a sum of the raw samples, on random series: integer
// and fractional values, duplicates summed, inserts before the latest
// sample, TS.DEL, small chunks, ranges inside a chunk, across many and
// outside the data.
func TestTSSum(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	rng := rand.New(rand.NewSource(21))

	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.SUM", "none", "-", "+")
	tsErr(t, c, "ERR wrong number of arguments for 'ts.sum' command", "TS.SUM", "none", "-")
	tsDo(t, c, "OK", "SET", "str", "x")
	tsErr(t, c, "WRONGTYPE Operation against a key holding the wrong kind of value", "TS.SUM", "str", "-", "+")

	tsDo(t, c, "OK", "TS.CREATE", "e", "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", 128)
	tsErr(t, c, "ERR TSDB: wrong fromTimestamp", "TS.SUM", "e", "-1", "+")
	tsErr(t, c, "ERR TSDB: wrong toTimestamp", "TS.SUM", "e", "0", "x")
	tsDo(t, c, "0", "TS.SUM", "e", "-", "+") // no samples: 0, not an empty reply

	const span = 200_000
	for round := 0; round < 6; round++ {
		for i := 0; i < 400; i++ {
			ts := rng.Int63n(span)
			var v any = rng.Intn(5) + 1
			if round%3 == 2 && rng.Intn(4) == 0 {
				v = float64(rng.Intn(1000)) / 7 // not exact: the walk's order decides
			}
			if err := c.Do(ctx, "TS.ADD", "e", ts, v).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if round == 3 {
			from := rng.Int63n(span)
			if err := c.Do(ctx, "TS.DEL", "e", from, from+span/10).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for q := 0; q < 60; q++ {
			from, to := rng.Int63n(span+1000), rng.Int63n(span+1000)
			fa, ta := strconv.FormatInt(from, 10), strconv.FormatInt(to, 10)
			if q == 0 {
				fa, ta = "-", "+"
			}
			got, err := c.Do(ctx, "TS.SUM", "e", fa, ta).Text()
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Do(ctx, "TS.RANGE", "e", fa, ta, "AGGREGATION", "sum", int64(1)<<62).Slice()
			if err != nil {
				t.Fatal(err)
			}
			want := "0"
			if len(r) == 1 {
				want = r[0].([]any)[1].(string)
			} else if len(r) > 1 {
				t.Fatalf("one bucket expected: %v", r)
			}
			if got != want {
				t.Fatalf("round %d: TS.SUM e %s %s = %s, TS.RANGE's bucket %s", round, fa, ta, got, want)
			}
			raw, err := c.Do(ctx, "TS.RANGE", "e", fa, ta).Slice()
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, x := range raw {
				v, _ := strconv.ParseFloat(x.([]any)[1].(string), 64)
				sum += v
			}
			if g, _ := strconv.ParseFloat(got, 64); g != sum && round%3 != 2 {
				t.Fatalf("round %d: TS.SUM e %s %s = %s, the samples sum to %v", round, fa, ta, got, sum)
			}
		}
	}

	// RESP3: a double, as TS.GET writes a value.
	r := inst.Raw(t)
	r.Do("HELLO", "3")
	r.Do("TS.ADD", "f", "5", "2.5")
	r.Do("TS.ADD", "f", "9", "1")
	if got := r.Do("TS.SUM", "f", "0", "9"); got != ",3.5\r\n" {
		t.Errorf("RESP3 TS.SUM: %q", got)
	}
	if got := r.Do("TS.SUM", "f", "6", "8"); got != ",0\r\n" {
		t.Errorf("RESP3 TS.SUM of an empty range: %q", got)
	}
}
