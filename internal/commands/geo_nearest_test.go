package commands_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestGeoDiffNearest sends searches with COUNT smaller than their
// matches, ASC and DESC, over dense sets where some members share a point
// or a distance from the center (the cases where the selection by keys
// must decline and sort as Redis does), near the poles and the
// antimeridian too, and compares the replies with redis-server's.
func TestGeoDiffNearest(t *testing.T) {
	d := geoDiff(t)
	rng := rand.New(rand.NewPCG(20261127, 3))
	centers := [][2]float64{{5.5, 45.5}, {179.99, 0.5}, {-179.99, -10}, {12, 85.05}, {0, 0}, {-60, -84.9}}
	for round, c := range centers {
		d.Do("FLUSHALL")
		geoHello(d, []string{"2", "3"}[round%2])
		args := []string{"GEOADD", "g"}
		var pts [][2]float64
		for i := 0; i < 1500; i++ {
			lon, lat := c[0]+(rng.Float64()-0.5)*0.2, c[1]+(rng.Float64()-0.5)*0.2
			switch {
			case i > 0 && rng.IntN(8) == 0: // the same point as another
				p := pts[rng.IntN(len(pts))]
				lon, lat = p[0], p[1]
			case rng.IntN(10) == 0: // mirrored about the center: equal distances
				lon = 2*c[0] - lon
			}
			lon = max(-180, min(180, lon))
			lat = max(-85.05112878, min(85.05112878, lat))
			pts = append(pts, [2]float64{lon, lat})
			args = append(args, geoFmt(lon), geoFmt(lat), "m"+strconv.Itoa(i))
			if len(args) > 300 {
				d.Do(args...)
				args = []string{"GEOADD", "g"}
			}
		}
		d.Do(args...)
		for q := 0; q < 120; q++ {
			lon, lat := c[0], c[1]
			if q%3 != 0 {
				p := pts[rng.IntN(len(pts))]
				lon, lat = p[0], p[1]
			}
			r := strconv.Itoa(1 + rng.IntN(6))
			order := []string{"ASC", "DESC"}[rng.IntN(2)]
			k := strconv.Itoa(1 + rng.IntN(70))
			cmd := []string{"GEOSEARCH", "g", "FROMLONLAT", geoFmt(lon), geoFmt(lat), "BYRADIUS", r, "km", "COUNT", k, order}
			switch rng.IntN(3) {
			case 0:
				cmd = append(cmd, "WITHDIST")
			case 1:
				cmd = append(cmd, "WITHDIST", "WITHCOORD", "WITHHASH")
			}
			d.Do(cmd...)
			d.Do("GEORADIUS", "g", geoFmt(lon), geoFmt(lat), r, "km", "COUNT", k, order, "STOREDIST", "dst")
			d.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
		}
	}
}
