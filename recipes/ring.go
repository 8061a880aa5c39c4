package recipes

import (
	"hash/crc32"
	"sort"
	"strconv"
)

// ring is a consistent-hash ring over n shards, vnodes points each: a key
// goes to the first point at or after its hash. Adding a shard moves about
// 1/n of the keys, all of them to the new shard.
type ring struct {
	points []uint32
	shard  []int
}

const vnodes = 160

func newRing(n int) *ring {
	r := &ring{}
	type pt struct {
		h uint32
		s int
	}
	pts := make([]pt, 0, n*vnodes)
	for s := 0; s < n; s++ {
		for v := 0; v < vnodes; v++ {
			pts = append(pts, pt{crc32.ChecksumIEEE([]byte("shard-" + strconv.Itoa(s) + "-" + strconv.Itoa(v))), s})
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].h < pts[j].h })
	for _, p := range pts {
		r.points = append(r.points, p.h)
		r.shard = append(r.shard, p.s)
	}
	return r
}

func (r *ring) get(key string) int {
	if len(r.points) == 0 {
		return 0
	}
	h := crc32.ChecksumIEEE([]byte(key))
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.shard[i]
}
