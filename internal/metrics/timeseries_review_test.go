package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// An update of the latest sample (a second hit in the same millisecond
// under DUPLICATE_POLICY SUM) makes the compaction's open bucket be
// recomputed from the source samples retention still keeps, as
// RedisTimeSeries's upsert does (it aggregates the latest bucket again
// from the source, retention-checked). With a raw retention shorter than
// the bucket, the day's count drops to what the last minute holds; with
// a retention of at least the bucket, the count is exact.
func TestTSCompactionDuplicateAtLatestRecomputes(t *testing.T) {
	const day = int64(86400000)
	for _, tc := range []struct {
		retention string
		want      int // the day's count after the duplicate
	}{
		{"60000", 2},     // only the latest sample is kept: 1+1
		{"86400000", 31}, // every hit of the day: 30 + 1
	} {
		t.Run("retention="+tc.retention, func(t *testing.T) {
			dayStart := servertest.T0 - servertest.T0%day
			inst := servertest.Start(t, servertest.WithManualClock(dayStart+3600000))
			r := inst.Raw(t)
			for _, cmd := range [][]string{
				{"TS.CREATE", "hits", "RETENTION", tc.retention, "DUPLICATE_POLICY", "SUM"},
				{"TS.CREATE", "d", "RETENTION", "10368000000"},
				{"TS.CREATERULE", "hits", "d", "AGGREGATION", "sum", "86400000"},
			} {
				if rep := r.Do(cmd...); rep != "+OK\r\n" {
					t.Fatalf("%q: %q", cmd, rep)
				}
			}
			var last string
			for i := 0; i < 30; i++ { // every 10 minutes for 5 hours
				last = r.Do("TS.ADD", "hits", "*", "1")
				inst.Clock.Advance(10 * time.Minute)
			}
			inst.Clock.Advance(-10 * time.Minute) // back to the last hit's millisecond
			bucket := func(n int) string {
				return fmt.Sprintf("*1\r\n*2\r\n:%d\r\n+%d\r\n", dayStart, n)
			}
			servertest.Eq(t, "before", r.Do("TS.RANGE", "d", "-", "+", "LATEST"), bucket(30))
			servertest.Eq(t, "same ms", r.Do("TS.ADD", "hits", "*", "1"), last)
			servertest.Eq(t, "latest raw", r.Do("TS.GET", "hits"), "*2\r\n"+last+"+2\r\n")
			servertest.Eq(t, "after", r.Do("TS.RANGE", "d", "-", "+", "LATEST"), bucket(tc.want))
			// The next day's first hit closes the bucket with that value.
			inst.Clock.Advance(time.Duration(day) * time.Millisecond)
			r.Do("TS.ADD", "hits", "*", "1")
			servertest.Eq(t, "closed", r.Do("TS.RANGE", "d", "-", "+"), bucket(tc.want))
		})
	}
}

// TS.REVRANGE with EMPTY and COUNT over a span of 10^12 one-millisecond
// buckets answers from the last buckets (it walked every bucket, holding
// the server for hours), and twa's empty buckets at the end of the
// timestamp range stop there (they wrapped past MaxInt64 and looped).
func TestTSEmptyBucketsLongSpan(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	r.Do("TS.ADD", "e", "0", "1")
	r.Do("TS.ADD", "e", "1000000000000", "2")
	servertest.Eq(t, "revrange", r.Do("TS.REVRANGE", "e", "-", "+", "AGGREGATION", "count", "1", "EMPTY", "COUNT", "2"),
		"*2\r\n*2\r\n:1000000000000\r\n+1\r\n*2\r\n:999999999999\r\n+0\r\n")
	// twa interpolates from 1 at 0 to 3 at MaxInt64: 1.5 and 2.5.
	r.Do("TS.ADD", "m", "0", "1")
	r.Do("TS.ADD", "m", "9223372036854775807", "3")
	servertest.Eq(t, "twa to MaxInt64", r.Do("TS.RANGE", "m", "0", "9223372036854775806", "AGGREGATION", "twa", "4611686018427387904", "EMPTY"),
		"*2\r\n*2\r\n:0\r\n+1.5\r\n*2\r\n:4611686018427387904\r\n+2.5\r\n")
}
