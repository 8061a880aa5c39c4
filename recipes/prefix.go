package recipes

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// PrefixIndex completes prefixes from a set of words: a sorted set with
// every score 0, read with ZRANGE BYLEX from "[prefix" to "[prefix\xff".
// Both servers run the same commands.
type PrefixIndex struct {
	c   redis.UniversalClient
	key string
}

// NewPrefixIndex returns the index kept in the sorted set key.
func NewPrefixIndex(c redis.UniversalClient, key string) *PrefixIndex {
	return &PrefixIndex{c: c, key: key}
}

// Add puts words in the index.
func (x *PrefixIndex) Add(ctx context.Context, words ...string) error {
	zs := make([]redis.Z, len(words))
	for i, w := range words {
		zs[i] = redis.Z{Member: w}
	}
	return x.c.ZAdd(ctx, x.key, zs...).Err()
}

// Remove takes words out of the index.
func (x *PrefixIndex) Remove(ctx context.Context, words ...string) error {
	ms := make([]any, len(words))
	for i, w := range words {
		ms[i] = w
	}
	return x.c.ZRem(ctx, x.key, ms...).Err()
}

// Complete returns up to limit words starting with prefix, in byte order.
// Words are compared as bytes; a word holding 0xff bytes right after the
// prefix sorts past the range and is not found.
func (x *PrefixIndex) Complete(ctx context.Context, prefix string, limit int64) ([]string, error) {
	return x.c.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: x.key, Start: "[" + prefix, Stop: "[" + prefix + "\xff", ByLex: true, Count: limit,
	}).Result()
}
