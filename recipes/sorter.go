package recipes

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Column is one sort column of a Sorter: a sorted set of id -> value and
// its weight in the combined score.
type Column struct {
	Key    string
	Weight float64
}

// Sorter sorts a set of ids by several columns at once (Redis in Action's
// weighted ZINTERSTORE): the score of an id is the weighted sum of its
// values, ids missing from a column are left out, ties are broken by id.
// To sort by one column and then another, weigh the first by more than
// the second column's range.
//
// Both servers run the same commands (Abacus has nothing better for
// this): ZINTERSTORE into a temporary key, ZRANGE, DEL, in one MULTI.
type Sorter struct {
	c    redis.UniversalClient
	temp string
}

// NewSorter returns a sorter whose temporary keys are temp:<random>,
// prefixed by the sorted set's hash tag when it has one.
func NewSorter(c redis.UniversalClient, temp string) *Sorter { return &Sorter{c: c, temp: temp} }

// Sort returns the ids of set (a set or sorted set; a sorted set's own
// scores count with weight 0) ranked by columns, from offset, at most
// count of them (count < 0: all), highest first when desc.
func (s *Sorter) Sort(ctx context.Context, set string, columns []Column, offset, count int64, desc bool) ([]string, error) {
	tmp := s.temp + ":" + randomID()
	// The temporary key goes in the slot of the set (on a cluster, the set
	// and the columns share a hash tag).
	if tag, ok := hashTag(set); ok {
		if own, ok := hashTag(tmp); !ok || own != tag {
			tmp = "{" + tag + "}:" + tmp
		}
	}
	keys := []string{set}
	weights := []float64{0}
	for _, c := range columns {
		keys = append(keys, c.Key)
		weights = append(weights, c.Weight)
	}
	stop := offset + count - 1
	if count < 0 {
		stop = -1
	}
	var ids *redis.StringSliceCmd
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZInterStore(ctx, tmp, &redis.ZStore{Keys: keys, Weights: weights, Aggregate: "SUM"})
		ids = p.ZRangeArgs(ctx, redis.ZRangeArgs{Key: tmp, Start: offset, Stop: stop, Rev: desc})
		p.Del(ctx, tmp)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids.Val(), nil
}
