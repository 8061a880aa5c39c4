package commands

import (
	"slices"

	"github.com/abacusdb/abacus/internal/ds/geohash"
)

// geoNearestMax bounds the COUNT that geoNearest serves: it keeps the k
// best keys in an array sorted by insertion, k steps per point at worst.
const geoNearestMax = 64

// geoCandidate is a point of geoNearest's short list: its index in the
// search's points and its exact distance.
type geoCandidate struct {
	i    int32
	dist float64
}

// geoNearest puts in points[:k], in order, the k points nearest the
// center (farthest with desc), with their exact distances, and reports
// true; k < len(points). Redis sorts all the matches' distances with a
// partial quicksort, whose order among equal distances depends on the
// whole array; geoNearest agrees with it whenever the first k distances
// are distinct and all nearer (farther) than the rest, which is the only
// case it answers: the keys pick a short list (the k best keys and those
// within geohash.KeyError of the k-th, which include every point that
// could tie with it), the exact distances of the short list alone are
// computed, and any tie among its first k+1 declines. Declining (also
// when a key is NaN) returns false and leaves points in scan order.
func geoNearest(points []geoPoint, k int, desc bool, shape *geohash.Shape, scratch *geoScratch) bool {
	// The k best keys, best first.
	best := scratch.keys[:0]
	for i := range points {
		key := points[i].key
		if key != key {
			return false
		}
		if desc {
			key = -key
		}
		if len(best) == k {
			if key >= best[k-1] {
				continue
			}
			best = best[:k-1]
		}
		j := len(best)
		best = append(best, key)
		for ; j > 0 && best[j-1] > key; j-- {
			best[j] = best[j-1]
		}
		best[j] = key
	}
	scratch.keys = best
	kth := best[k-1]
	if desc {
		kth = -kth
	}

	// The short list: every point not surely beyond the k-th.
	list := scratch.list[:0]
	for i := range points {
		key := points[i].key
		beyond := key > kth && key-kth > geohash.KeyError*key
		if desc {
			beyond = key < kth && kth-key > geohash.KeyError*kth
		}
		if !beyond {
			list = append(list, geoCandidate{i: int32(i)})
		}
	}
	scratch.list = list
	if len(list) < k {
		return false // cannot happen: the k best are on it
	}
	buf := slices.Grow(scratch.floats[:0], 3*len(list))[:3*len(list)]
	scratch.floats = buf
	lons, lats, dist := buf[:len(list)], buf[len(list):2*len(list)], buf[2*len(list):]
	for j, c := range list {
		lons[j], lats[j] = points[c.i].lon, points[c.i].lat
	}
	shape.Distances(lons, lats, dist)
	for j := range list {
		list[j].dist = dist[j]
	}
	slices.SortFunc(list, func(a, b geoCandidate) int {
		r := 0
		if a.dist < b.dist {
			r = -1
		} else if a.dist > b.dist {
			r = 1
		}
		if desc {
			r = -r
		}
		return r
	})
	n := min(k+1, len(list))
	for j := 1; j < n; j++ {
		if list[j-1].dist == list[j].dist {
			return false
		}
	}

	top := append(scratch.top[:0], make([]geoPoint, k)...)
	for j := 0; j < k; j++ {
		top[j] = points[list[j].i]
		top[j].dist = list[j].dist
	}
	copy(points, top)
	clear(top)
	scratch.top = top
	return true
}
