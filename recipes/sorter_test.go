package recipes

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSorter sorts ids by two weighted columns against a sort in Go, and
// completes prefixes against a scan of the words.
func TestSorter(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		c := e.client(t, 0)
		rng := rand.New(rand.NewSource(7))
		score := map[string]float64{}
		for i := 0; i < 200; i++ {
			id := fmt.Sprintf("id%03d", i)
			if rng.Intn(10) == 0 { // not in the set
				must(t, c.ZAdd(ctx, "col:price", redis.Z{Score: 1, Member: id}).Err())
				continue
			}
			must(t, c.SAdd(ctx, "ids", id).Err())
			p, r := float64(rng.Intn(50)), float64(rng.Intn(5))
			must(t, c.ZAdd(ctx, "col:price", redis.Z{Score: p, Member: id}).Err())
			must(t, c.ZAdd(ctx, "col:rating", redis.Z{Score: r, Member: id}).Err())
			score[id] = r*1000 - p // by rating, then cheapest
		}
		var want []string
		for id := range score {
			want = append(want, id)
		}
		sort.Slice(want, func(i, j int) bool {
			if score[want[i]] != score[want[j]] {
				return score[want[i]] > score[want[j]]
			}
			return want[i] > want[j] // ZRANGE REV breaks ties by member, descending
		})
		s := NewSorter(c, "tmp:sort")
		got, err := s.Sort(ctx, "ids", []Column{{"col:rating", 1000}, {"col:price", -1}}, 10, 20, true)
		must(t, err)
		if !reflect.DeepEqual(got, want[10:30]) {
			t.Fatalf("sorted %v, want %v", got, want[10:30])
		}
		all, err := s.Sort(ctx, "ids", []Column{{"col:rating", 1000}, {"col:price", -1}}, 0, -1, true)
		must(t, err)
		if !reflect.DeepEqual(all, want) {
			t.Fatalf("all: %d ids", len(all))
		}
		if n, err := c.Exists(ctx, "ids", "col:price").Result(); err != nil || n != 2 {
			t.Fatal("inputs gone", err)
		}
		if keys, err := c.Keys(ctx, "tmp:*").Result(); err != nil || len(keys) != 0 {
			t.Fatalf("temporary keys left: %v %v", keys, err)
		}

		x := NewPrefixIndex(c, "names")
		words := []string{"alice", "alicia", "al", "bob", "bobby", "carol", "a", "alïce", "b"}
		must(t, x.Add(ctx, words...))
		must(t, x.Remove(ctx, "b"))
		for _, tc := range []struct {
			prefix string
			limit  int64
			want   []string
		}{
			{"al", 10, []string{"al", "alice", "alicia", "alïce"}},
			{"ali", 1, []string{"alice"}},
			{"b", 10, []string{"bob", "bobby"}},
			{"", 3, []string{"a", "al", "alice"}},
			{"z", 10, []string{}},
		} {
			got, err := x.Complete(ctx, tc.prefix, tc.limit)
			must(t, err)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("complete %q: %v, want %v", tc.prefix, got, tc.want)
			}
		}
	})
}
