package geohash

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The expected values below are what redis-server 7.0 replies for the same
// points (ZSCORE, GEOHASH, GEOPOS, GEODIST).

func TestEncodeMatchesRedis(t *testing.T) {
	cases := []struct {
		lon, lat float64
		score    uint64
		hash     string
	}{
		{13.361389, 38.115556, 3479099956230698, "sqc8b49rny0"},
		{15.087269, 37.502669, 3479447370796909, "sqdtr74hyu0"},
		{180, 85.05112878, 13510798882111488, "bp05b5048p0"}, // both offsets reach 2^26
		{-180, -85.05112878, 0, "00bh0hbj200"},
		{0, 0, 3377699720527872, "s0000000000"},
		{-0.0001, 0.0001, 1876499844738231, "ebpbpbpbtd0"},
	}
	for _, c := range cases {
		if got := Encode(c.lon, c.lat); got != c.score {
			t.Errorf("Encode(%v, %v) = %d, want %d", c.lon, c.lat, got, c.score)
		}
		if got := String(float64(c.score)); got != c.hash {
			t.Errorf("String(%d) = %s, want %s", c.score, got, c.hash)
		}
	}
}

// human is Redis's "%.17Lf" with trailing zeros removed, for a double.
func human(v float64) string {
	s := strconv.FormatFloat(v, 'f', 17, 64)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func TestDecodeMatchesRedis(t *testing.T) {
	cases := []struct {
		score    uint64
		lon, lat string
	}{
		{3479099956230698, "13.36138933897018433", "38.11555639549629859"},
		{13510798882111488, "180", "85.0511287799999991"},
		{0, "-179.99999731779098511", "-85.05112751263942528"},
		{3377699720527872, "0.00000268220901489", "0.00000126736058093"},
		{1876499844738231, "-0.00009924173355103", "0.00010012148579364"},
	}
	for _, c := range cases {
		lon, lat := Decode(float64(c.score))
		if human(lon) != c.lon || human(lat) != c.lat {
			t.Errorf("Decode(%d) = %s,%s want %s,%s", c.score, human(lon), human(lat), c.lon, c.lat)
		}
	}
}

func TestDistanceMatchesRedis(t *testing.T) {
	d := func(a, b uint64) float64 {
		lon1, lat1 := Decode(float64(a))
		lon2, lat2 := Decode(float64(b))
		return Distance(lon1, lat1, lon2, lat2)
	}
	if got := strconv.FormatFloat(d(3479099956230698, 3479447370796909), 'f', 4, 64); got != "166274.1516" {
		t.Errorf("Palermo-Catania = %s m", got)
	}
	if got := strconv.FormatFloat(d(13510798882111488, 0)/1000, 'f', 4, 64); got != "18919.8446" {
		t.Errorf("corner to corner = %s km", got)
	}
}

// A point decodes to the center of its box, which encodes to the same
// score: the round trip is stable, and within half a box of the input.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		lon := rng.Float64()*360 - 180
		lat := rng.Float64()*(2*LatMax) - LatMax
		if !Valid(lon, lat) {
			t.Fatalf("%v,%v not valid", lon, lat)
		}
		s := Encode(lon, lat)
		if s >= 1<<52 {
			t.Fatalf("score %d has more than 52 bits", s)
		}
		dlon, dlat := Decode(float64(s))
		if Encode(dlon, dlat) != s {
			t.Fatalf("%v,%v: decoded %v,%v re-encodes differently", lon, lat, dlon, dlat)
		}
		if math.Abs(dlon-lon) > 360.0/(1<<26) || math.Abs(dlat-lat) > 2*LatMax/(1<<26) {
			t.Fatalf("%v,%v decoded as %v,%v", lon, lat, dlon, dlat)
		}
	}
}

func TestValid(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		ok       bool
	}{
		{180, 85.05112878, true}, {-180, -85.05112878, true},
		{180.0000001, 0, false}, {0, 85.05112879, false}, {0, -85.0511288, false},
		{math.Inf(1), 0, false},
	} {
		if Valid(c.lon, c.lat) != c.ok {
			t.Errorf("Valid(%v, %v) = %v", c.lon, c.lat, !c.ok)
		}
	}
}

func TestScoreBits(t *testing.T) {
	for _, c := range []struct {
		in  float64
		out uint64
	}{
		{0, 0}, {1.9, 1}, {-1, math.MaxUint64}, {1 << 63, 1 << 63},
		{math.Inf(1), 0}, {math.Inf(-1), 1 << 63}, {math.NaN(), 1 << 63},
		{1 << 64, 0},
	} {
		if got := ScoreBits(c.in); got != c.out {
			t.Errorf("ScoreBits(%v) = %#x, want %#x", c.in, got, c.out)
		}
	}
}

func TestEstimateSteps(t *testing.T) {
	for _, c := range []struct {
		r, lat float64
		want   uint8
	}{
		{0, 0, 26}, {1, 0, 24}, {1000, 0, 14}, {1000, 70, 13}, {1000, -81, 12},
		{5e6, 0, 2}, {1e8, 0, 1}, {math.Inf(1), 0, 1},
	} {
		if got := EstimateSteps(c.r, c.lat); got != c.want {
			t.Errorf("EstimateSteps(%v, %v) = %d, want %d", c.r, c.lat, got, c.want)
		}
	}
}

// Every point within the radius lies in one of the boxes Boxes returns:
// the boxes cover the search area, which is what makes a search complete.
func TestBoxesCoverRadius(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		s := Shape{
			Longitude:  rng.Float64()*360 - 180,
			Latitude:   rng.Float64()*160 - 80,
			Radius:     math.Pow(10, rng.Float64()*6),
			Conversion: 1,
		}
		boxes := s.Boxes()
		for j := 0; j < 50; j++ {
			lon := s.Longitude + (rng.Float64()*2-1)*s.Radius/111000*4
			lat := s.Latitude + (rng.Float64()*2-1)*s.Radius/111000
			if !Valid(lon, lat) {
				continue
			}
			score := Encode(lon, lat)
			if _, _, ok := s.Within(float64(score)); !ok {
				continue
			}
			found := false
			for _, b := range boxes {
				if b.IsZero() {
					continue
				}
				lo, hi := ScoreRange(b)
				found = found || (score >= lo && score < hi)
			}
			if !found {
				t.Fatalf("shape %+v: point %v,%v within the radius is in no box", s, lon, lat)
			}
		}
	}
}

func TestSmallSeries(t *testing.T) {
	for x := -smallAngle; x <= smallAngle; x += smallAngle / 1000 {
		if d := math.Abs(smallSin(x) - math.Sin(x)); d > 1e-15*math.Abs(x)+1e-300 {
			t.Fatalf("smallSin(%v) off by %g", x, d)
		}
		if d := math.Abs(smallCos(x) - math.Cos(x)); d > 1e-15 {
			t.Fatalf("smallCos(%v) off by %g", x, d)
		}
	}
}
