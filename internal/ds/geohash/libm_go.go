//go:build !cgo

package geohash

import "math"

// Without cgo the distance is Go's math package's: within an ulp or two of
// redis-server's, so the 4-decimal distances nearly always match and the
// full-precision STOREDIST scores may differ in their last digits.
func distance(lon1, lat1, lon2, lat2 float64) float64 {
	return approxDistance(lon1, lat1, lon2, lat2)
}

func cosine(x float64) float64 { return math.Cos(x) }

func distances(lon, lat float64, lons, lats, out []float64) {
	for i := range out {
		out[i] = approxDistance(lon, lat, lons[i], lats[i])
	}
}
