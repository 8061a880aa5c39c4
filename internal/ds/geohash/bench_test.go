package geohash

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkDistances90 is the distances of a 5 km search's matches
// (about 90) from its center.
func BenchmarkDistances90(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 90
	lons, lats, out := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range lons {
		lons[i], lats[i] = 5.5+rng.Float64()*0.1, 45.5+rng.Float64()*0.1
	}
	s := Shape{Longitude: 5.55, Latitude: 45.55, Radius: 5, Conversion: 1000}
	for i := 0; i < b.N; i++ {
		s.Distances(lons, lats, out)
	}
}

// BenchmarkDecode is the decoding of one candidate's score.
func BenchmarkDecode(b *testing.B) {
	score := float64(Encode(5.5, 45.5))
	var sum float64
	for i := 0; i < b.N; i++ {
		lon, lat := Decode(score + float64(i&1023))
		sum += lon + lat
	}
	_ = sum
}
