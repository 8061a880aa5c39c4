package recipes

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// TestTimebox: players scoring at random gaps, compared with a model in
// which a member leaves ten minutes after its last activity.
func TestTimebox(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		const stay = 10 * time.Minute
		b := NewTimebox(e.client(t, 0), "box:players", stay, e.opts)
		m, err := b.Mode(ctx)
		e.checkMode(t, m, err)
		type st struct{ pts, seen int64 }
		model := map[string]st{}
		rng := rand.New(rand.NewSource(3))
		for i := 0; i < 600; i++ {
			e.advance(time.Duration(rng.Intn(60_000)) * time.Millisecond)
			if rng.Intn(30) == 0 {
				e.advance(stay) // everyone leaves
			}
			now := e.opts.Now().UnixMilli()
			for k, v := range model {
				if now >= v.seen+stay.Milliseconds() {
					delete(model, k)
				}
			}
			p := fmt.Sprintf("p%d", rng.Intn(40))
			pts := int64(rng.Intn(10))
			got, err := b.Add(ctx, p, pts)
			must(t, err)
			model[p] = st{model[p].pts + pts, now}
			if got != model[p].pts {
				t.Fatalf("activity %d: %s has %d, want %d", i, p, got, model[p].pts)
			}
			if i%15 != 0 {
				continue
			}
			e.advance(time.Duration(rng.Intn(5)) * time.Minute)
			now = e.opts.Now().UnixMilli()
			want := map[string]int64{}
			for k, v := range model {
				if now < v.seen+stay.Milliseconds() {
					want[k] = v.pts
				}
			}
			all, err := b.Members(ctx)
			must(t, err)
			if !reflect.DeepEqual(all, want) {
				t.Fatalf("activity %d: members %v, want %v", i, all, want)
			}
			n, err := b.Len(ctx)
			must(t, err)
			if n != len(want) {
				t.Fatalf("activity %d: len %d, want %d", i, n, len(want))
			}
		}
	})
}
