//go:build !cgo

package geohash

import "math"

// Without cgo the distance uses Go's math package: within an ulp or two of
// redis-server's, so the 4-decimal distances nearly always match and the
// full-precision STOREDIST scores may differ in their last digits.
func distance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r := degRad(lon1)
	lon2r := degRad(lon2)
	v := math.Sin((lon2r - lon1r) / 2)
	// The same longitude needs no trigonometry.
	if v == 0 {
		return LatDistance(lat1, lat2)
	}
	lat1r := degRad(lat1)
	lat2r := degRad(lat2)
	u := math.Sin((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(math.Cos(lat1r)*math.Cos(lat2r))*v)*v)
	return float64(2.0*EarthRadius) * math.Asin(math.Sqrt(a))
}

func cosine(x float64) float64 { return math.Cos(x) }
