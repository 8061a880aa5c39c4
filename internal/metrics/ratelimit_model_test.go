package metrics_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// bucketModel is GCRA written the other way round, as the continuous
// leaky bucket it is equivalent to: a level of queued work (ms) that
// drains at one ms per ms; a request of n adds n emission intervals if
// the level stays within the capacity. Integer ms throughout, for
// parameters whose emission interval is a whole number of ms.
type bucketModel struct {
	level, last int64
}

// request returns the five integers CL.THROTTLE and GCRA reply with.
func (m *bucketModel) request(now, emission, burst, n int64) []int64 {
	capacity := emission * (burst + 1)
	drained := max(0, m.level-(now-m.last))
	ceilS := func(ms int64) int64 { return (ms + 999) / 1000 }
	if cost := n * emission; drained+cost > capacity {
		retry := int64(-1)
		if cost <= capacity {
			retry = ceilS(drained + cost - capacity)
		}
		return []int64{1, burst + 1, (capacity - drained) / emission, retry, ceilS(drained)}
	}
	m.level, m.last = drained+n*emission, now
	return []int64{0, burst + 1, (capacity - m.level) / emission, -1, ceilS(m.level)}
}

func TestGcraCommandsAgainstModel(t *testing.T) {
	now := int64(1_700_000_000_000)
	inst := servertest.Start(t, servertest.WithManualClock(now))
	type limiter struct {
		burst, count, period int64 // period in seconds
	}
	lims := []limiter{{4, 1, 1}, {9, 10, 1}, {0, 3, 3}, {2, 20, 60}, {14, 30, 60}, {99, 1000, 1}}
	for _, cmd := range []string{"CL.THROTTLE", "GCRA"} {
		rng := rand.New(rand.NewSource(9))
		models := make([]bucketModel, len(lims))
		limited := 0
		for i := 0; i < 3000; i++ {
			now += []int64{0, 0, 1, 7, 100, 333, 1000, 2500}[rng.Intn(8)]
			inst.Clock.Set(now)
			k := rng.Intn(len(lims))
			l := lims[k]
			n := []int64{1, 1, 1, 2, 3, 5, 30}[rng.Intn(7)]
			if cmd == "CL.THROTTLE" && rng.Intn(10) == 0 {
				n = 0
			}
			emission := l.period * 1000 / l.count
			want := models[k].request(now, emission, l.burst, n)
			key := fmt.Sprintf("%s:%d", cmd, k)
			var got []int64
			if cmd == "GCRA" {
				got = rlInts(t, inst, "GCRA", key, l.burst, l.count, l.period, "TOKENS", n)
			} else {
				got = rlInts(t, inst, "CL.THROTTLE", key, l.burst, l.count, l.period, n)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s step %d: %s %+v n=%d at %d: got %v, model %v", cmd, i, key, l, n, now, got, want)
			}
			limited += int(got[0])
		}
		if limited < 300 || limited > 2700 {
			t.Errorf("%s: %d of 3000 limited: the stream does not exercise both outcomes", cmd, limited)
		}
	}
}
