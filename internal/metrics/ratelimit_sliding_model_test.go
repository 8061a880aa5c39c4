package metrics_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// slideModel is RATELIMIT.SLIDING kept the naive way: every counted
// request as an event (sub-bucket, weight), the window's count summed over
// the events still inside it. Independent of the hash layout; no Redis
// needed.
type slideModel struct {
	events map[string][]slideEvent // key + "/" + limit index
	newest map[string]int64        // newest sub-bucket a window has seen
}

type slideEvent struct{ block, w int64 }

type slideLim struct{ dur, limit, prec int64 } // ms, count, ms

func (m *slideModel) request(keys []string, lims []slideLim, w, now int64) []int64 {
	type st struct {
		cur, count int64
		id         string
	}
	states := make([][]st, len(keys))
	denied := false
	for k, key := range keys {
		for i, l := range lims {
			id := key + "/" + strconv.Itoa(i)
			b := (l.dur + l.prec - 1) / l.prec
			cur := now / l.prec
			if n, ok := m.newest[id]; ok {
				cur = max(cur, n)
				m.newest[id] = cur // the window moves even when nothing is counted
			}
			count := int64(0)
			for _, e := range m.events[id] {
				if e.block > cur-b {
					count += e.w
				}
			}
			states[k] = append(states[k], st{cur, count, id})
			if count+w > l.limit {
				denied = true
			}
		}
	}
	if !denied && w > 0 {
		for k := range keys {
			for i := range lims {
				s := &states[k][i]
				m.events[s.id] = append(m.events[s.id], slideEvent{s.cur, w})
				m.newest[s.id] = s.cur
				s.count += w
			}
		}
	}
	out := []int64{0}
	if denied {
		out[0] = 1
	}
	for i, l := range lims {
		b := (l.dur + l.prec - 1) / l.prec
		rem, wait := int64(1<<62), int64(0)
		for k := range keys {
			s := states[k][i]
			rem = min(rem, max(0, l.limit-s.count))
			wk := int64(0)
			if w > l.limit {
				wk = -1
			} else if need := s.count + w - l.limit; need > 0 {
				var live []slideEvent
				for _, e := range m.events[s.id] {
					if e.block > s.cur-b {
						live = append(live, e)
					}
				}
				sort.Slice(live, func(a, c int) bool { return live[a].block < live[c].block })
				acc := int64(0)
				for _, e := range live {
					if acc += e.w; acc >= need {
						wk = (e.block+b)*l.prec - now
						break
					}
				}
			}
			if wk == -1 || wait == -1 {
				wait = -1
			} else {
				wait = max(wait, wk)
			}
		}
		out = append(out, rem, wait)
	}
	return out
}

func TestSlidingAgainstModel(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0)) // TTLs never run out
	lims := []slideLim{{1000, 5, 100}, {10000, 20, 1000}, {60000, 40, 60000}, {7000, 9, 3000}}
	limArgs := []any{"LIMITS", len(lims)}
	for _, l := range lims {
		limArgs = append(limArgs, float64(l.dur)/1000, l.limit, float64(l.prec)/1000)
	}
	m := &slideModel{events: map[string][]slideEvent{}, newest: map[string]int64{}}
	rng := rand.New(rand.NewSource(21))
	now := int64(1_700_000_000_000)
	allowed := 0
	for i := 0; i < 4000; i++ {
		switch x := rng.Intn(100); {
		case x < 70:
			now += rng.Int63n(300)
		case x < 95:
			now += rng.Int63n(5000)
		case x < 98:
			now += rng.Int63n(120000)
		default:
			now -= rng.Int63n(20000)
		}
		var keys []string
		for _, k := range rng.Perm(3)[:1+rng.Intn(3)] {
			keys = append(keys, "m"+strconv.Itoa(k))
		}
		w := int64([]int{0, 1, 1, 1, 2, 4, 10}[rng.Intn(7)])
		args := []any{"RATELIMIT.SLIDING", len(keys)}
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(append(args, limArgs...), "WEIGHT", w, "NOW", strconv.FormatFloat(float64(now)/1000, 'f', 3, 64))
		want := m.request(keys, lims, w, now)
		got := rlInts(t, inst, args...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: %v\n got %v\nmodel %v", i, args, got, want)
		}
		if got[0] == 0 {
			allowed++
		}
	}
	if allowed < 500 || allowed > 3500 {
		t.Errorf("%d of 4000 allowed: the stream does not exercise both outcomes", allowed)
	}
}
