// Package geohash is the geospatial arithmetic of Redis's GEO commands
// (geohash.c and geohash_helper.c): the 52-bit interleaved geohash that a
// GEO sorted set keeps as each member's score, its decoding back to a
// longitude and latitude, the haversine distance on Redis's earth radius,
// and the nine geohash boxes a radius or box search scans.
//
// Every value must be the one redis-server computes, bit for bit, since
// the scores are the data (RDB and DUMP payloads carry them) and replies
// print distances and coordinates to the digit. So the code keeps Redis's
// order of operations, and each product that C evaluates and rounds on
// its own is written with an explicit float64 conversion: Go may fuse a
// multiply and an add into one FMA (it does on arm64), C on x86-64 does
// not, and an explicit conversion forbids the fusion.
package geohash

import "math"

// Step is the number of bits per coordinate of a stored hash: 26, so a
// score holds 52 bits, which a double represents exactly.
const Step = 26

// Coordinate limits (EPSG:900913): latitudes beyond ±85.05112878 cannot be
// indexed.
const (
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	LongMin = -180.0
	LongMax = 180.0
)

// EarthRadius is the quadratic mean radius of WGS-84 Redis uses, in meters.
const EarthRadius = 6372797.560856

// mercatorMax bounds the radius estimate of EstimateSteps.
const mercatorMax = 20037726.37

// dR is C's M_PI / 180.0 evaluated in double arithmetic. A Go constant
// expression would divide exactly and round once, which may differ by an
// ulp; dividing two float64 variables rounds as C does.
var (
	piDouble = math.Pi
	dR       = piDouble / 180.0
)

func degRad(ang float64) float64 { return float64(ang * dR) }
func radDeg(ang float64) float64 { return ang / dR }

// Range is the span of one coordinate.
type Range struct{ Min, Max float64 }

// Bits is a hash of Step bits per coordinate, interleaved (longitude bits
// at the odd positions, latitude at the even ones).
type Bits struct {
	Bits uint64
	Step uint8
}

// IsZero reports whether h is the zero hash, which marks an excluded
// neighbour box (Redis's HASHISZERO).
func (h Bits) IsZero() bool { return h.Bits == 0 && h.Step == 0 }

// Area is the rectangle a hash covers.
type Area struct {
	Hash      Bits
	Longitude Range
	Latitude  Range
}

var (
	wgsLong = Range{LongMin, LongMax}
	wgsLat  = Range{LatMin, LatMax}
	// stdLong and stdLat are the ranges of the standard geohash alphabet
	// form (GEOHASH), which covers latitudes to ±90.
	stdLong = Range{-180, 180}
	stdLat  = Range{-90, 90}
)

func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333,
		0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | (x << s[i])) & b[i]
		y = (y | (y << s[i])) & b[i]
	}
	return x | (y << 1)
}

func deinterleave64(v uint64) uint64 {
	// Unrolled: the searches decode every candidate of their boxes.
	x, y := v&0x5555555555555555, (v>>1)&0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	y = (y | y>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	y = (y | y>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	y = (y | y>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	y = (y | y>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	y = (y | y>>16) & 0x00000000FFFFFFFF
	return x | (y << 32)
}

// encode is geohashEncode: false when the point is outside the indexable
// limits or the given ranges.
func encode(longR, latR Range, longitude, latitude float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 {
		return Bits{}, false
	}
	if longitude > LongMax || longitude < LongMin || latitude > LatMax || latitude < LatMin {
		return Bits{}, false
	}
	if latitude < latR.Min || latitude > latR.Max || longitude < longR.Min || longitude > longR.Max {
		return Bits{Step: step}, false
	}
	latOff := (latitude - latR.Min) / (latR.Max - latR.Min)
	longOff := (longitude - longR.Min) / (longR.Max - longR.Min)
	latOff = float64(latOff * float64(uint64(1)<<step))
	longOff = float64(longOff * float64(uint64(1)<<step))
	return Bits{Bits: interleave64(uint32(latOff), uint32(longOff)), Step: step}, true
}

// decode is geohashDecode.
func decode(longR, latR Range, h Bits) Area {
	sep := deinterleave64(h.Bits) // [LAT][LONG]
	latScale := latR.Max - latR.Min
	longScale := longR.Max - longR.Min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	// Dividing by 2^step is multiplying by its reciprocal, exactly (the
	// quotients are far from the subnormals), and much cheaper.
	inv := 1 / float64(uint64(1)<<h.Step)
	return Area{
		Hash: h,
		Latitude: Range{
			Min: latR.Min + float64(float64(ilato)*inv*latScale),
			Max: latR.Min + float64(float64(ilato+1)*inv*latScale), // uint32 arithmetic, as in C
		},
		Longitude: Range{
			Min: longR.Min + float64(float64(ilono)*inv*longScale),
			Max: longR.Min + float64(float64(ilono+1)*inv*longScale),
		},
	}
}

// center is geohashDecodeAreaToLongLat: the middle of the area, clamped
// to the indexable limits.
func (a Area) center() (longitude, latitude float64) {
	// Plain comparisons: the min and max builtins order -0 and NaN too,
	// which costs on this hot path and which C's clamp does not do.
	longitude = (a.Longitude.Min + a.Longitude.Max) / 2
	if longitude > LongMax {
		longitude = LongMax
	}
	if longitude < LongMin {
		longitude = LongMin
	}
	latitude = (a.Latitude.Min + a.Latitude.Max) / 2
	if latitude > LatMax {
		latitude = LatMax
	}
	if latitude < LatMin {
		latitude = LatMin
	}
	return longitude, latitude
}

// Valid reports whether a longitude,latitude pair can be indexed (GEOADD's
// and the searches' check).
func Valid(longitude, latitude float64) bool {
	return !(longitude < LongMin || longitude > LongMax || latitude < LatMin || latitude > LatMax)
}

// Encode returns the 52-bit score of a valid point (geohashEncodeWGS84 at
// Step, aligned to 52 bits).
func Encode(longitude, latitude float64) uint64 {
	h, _ := encode(wgsLong, wgsLat, longitude, latitude, Step)
	return h.Bits
}

// ScoreBits converts a score to the hash bits as C's (uint64_t) cast does
// on x86-64: values from 2^63 up subtract 2^63 first; what fits no int64
// (NaN, infinities, huge values) gives the "integer indefinite" 2^63. A
// GEO set's scores are all below 2^53; any other sorted set decodes to
// whatever these bits say, as in Redis.
func ScoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	toInt := func(x float64) uint64 {
		if x != x || x >= two63 || x < -two63 {
			return 1 << 63
		}
		return uint64(int64(x))
	}
	if score >= two63 {
		return toInt(score-two63) ^ (1 << 63)
	}
	return toInt(score)
}

// Decode returns the point a score stands for: the center of its 52-bit
// box (decodeGeohash).
func Decode(score float64) (longitude, latitude float64) {
	return decode(wgsLong, wgsLat, Bits{Bits: ScoreBits(score), Step: Step}).center()
}

// String is GEOHASH's 11-character form of a score: the decoded point
// encoded again on the standard ranges (latitude ±90), in base 32, the
// eleventh character standing for two missing bits taken as zero.
func String(score float64) string {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	lon, lat := Decode(score)
	h, _ := encode(stdLong, stdLat, lon, lat, Step)
	var buf [11]byte
	for i := 0; i < 11; i++ {
		idx := 0
		if i < 10 {
			idx = int((h.Bits >> (52 - (i+1)*5)) & 0x1f)
		}
		buf[i] = alphabet[idx]
	}
	return string(buf[:])
}

// LatDistance is the distance along a meridian between two latitudes.
func LatDistance(lat1, lat2 float64) float64 {
	return float64(EarthRadius * math.Abs(degRad(lat2)-degRad(lat1)))
}

// Distance is geohashGetDistance: the haversine distance in meters. Its
// sines, cosines and arcsine come from the C library when cgo is on, the
// libm redis-server calls, so the last bit of every distance is Redis's
// (libm_cgo.go); Go's math package differs from glibc in the last ulp
// for a fair share of arguments, which STOREDIST's 17 digits would show.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	return distance(lon1, lat1, lon2, lat2)
}

// approxDistance is Distance with Go's math package: within a few ulps of
// the C library's result, and without a cgo call.
func approxDistance(lon1, lat1, lon2, lat2 float64) float64 {
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

// exceeds tells whether the distance between two points exceeds limit:
// from approxDistance when it is clearly on one side (its error is some
// 1e-15 relative; the margin is a million times that), from Distance when
// it is near the limit, so the answer is always Distance's.
func exceeds(lon1, lat1, lon2, lat2, limit float64) bool {
	// A great circle is never shorter than the difference in latitude:
	// most candidates of a search fall outside that band, cheaply.
	if d := LatDistance(lat1, lat2); d > limit+1e-9*d+1e-300 {
		return true
	}
	d := approxDistance(lon1, lat1, lon2, lat2)
	margin := 1e-9*math.Max(d, limit) + 1e-300
	switch {
	case d > limit+margin:
		return true
	case d < limit-margin:
		return false
	}
	return Distance(lon1, lat1, lon2, lat2) > limit
}

// Shape is a search area around a center: a circle of Radius, or a box of
// Width by Height, in units of Conversion meters.
type Shape struct {
	Longitude, Latitude float64
	Box                 bool
	Radius              float64
	Width, Height       float64
	Conversion          float64

	// Filled on the first Within of a circle: the radius in meters, the
	// cosine of the center's latitude and the haversine term a radius
	// gives, so that a candidate costs two sines and a cosine.
	prepared    bool
	limit       float64
	cosCenter   float64
	sinCenter   float64
	haversineAt float64 // 0 when the radius is too large for the shortcut
}

// smallAngle bounds the arguments for which smallSin and smallCos are
// used: their truncated series err by less than 1e-16 relative there.
const smallAngle = 0.05

// smallSin is sin(x) for |x| <= smallAngle: its Taylor series to x^7
// (the next term is below x^9/9! < 6e-18).
func smallSin(x float64) float64 {
	x2 := x * x
	return x + x*x2*(-1.0/6+x2*(1.0/120-x2*(1.0/5040)))
}

// smallCos is cos(x) for |x| <= smallAngle, to x^8.
func smallCos(x float64) float64 {
	x2 := x * x
	return 1 + x2*(-0.5+x2*(1.0/24+x2*(-1.0/720+x2*(1.0/40320))))
}

// Within reports whether the point a score stands for lies in the shape,
// and the point (geoWithinShape, without the distance: a search that
// reports or sorts by distance asks Distances for its matches only).
func (s *Shape) Within(score float64) (lon, lat float64, ok bool) {
	lon, lat = Decode(score)
	if !s.Box {
		_, out := s.exceedsRadius(lon, lat)
		return lon, lat, !out
	}
	width := float64(s.Width * s.Conversion)
	height := float64(s.Height * s.Conversion)
	// The latitude distance is the cheaper test, so it goes first.
	if LatDistance(lat, s.Latitude) > height/2 {
		return lon, lat, false
	}
	// The east-west extent is measured along the point's own parallel.
	return lon, lat, !exceeds(lon, lat, s.Longitude, lat, width/2)
}

// WithinKey is Within for a circle, with a key that orders the matches
// by distance: the haversine term of the center and the point, within a
// relative KeyError of the one the exact distance is computed from, or
// NaN where the test did not compute it (then the caller orders by
// Distances). For a box, the key is always NaN.
func (s *Shape) WithinKey(score float64) (lon, lat, key float64, ok bool) {
	if s.Box {
		lon, lat, ok = s.Within(score)
		return lon, lat, math.NaN(), ok
	}
	lon, lat = Decode(score)
	key, out := s.exceedsRadius(lon, lat)
	return lon, lat, key, !out
}

// KeyError bounds WithinKey's relative error: two points whose keys
// differ by more than KeyError times the larger are in the keys' order
// by their exact distances, and not at the same distance.
const KeyError = 4e-9

// exceedsRadius is exceeds(center, point, radius) for a circle, testing
// the haversine term instead of the distance: d = 2R asin(sqrt(a)) grows
// with a, so d > radius is a > sin^2(radius/2R), which needs no arcsine
// and, with the center's cosine kept, one cosine instead of two.
//
// It returns the haversine term it compared (NaN where it took another
// way) with the answer.
func (s *Shape) exceedsRadius(lon, lat float64) (float64, bool) {
	nan := math.NaN()
	if !s.prepared {
		s.prepared = true
		s.limit = float64(s.Radius * s.Conversion)
		s.cosCenter = math.Cos(degRad(s.Latitude))
		s.sinCenter = math.Sin(degRad(s.Latitude))
		if half := s.limit / (2 * EarthRadius); half < 1.5 {
			h := math.Sin(half)
			s.haversineAt = h * h
		}
	}
	if s.haversineAt == 0 {
		return nan, exceeds(s.Longitude, s.Latitude, lon, lat, s.limit)
	}
	if d := LatDistance(s.Latitude, lat); d > s.limit+1e-9*d+1e-300 {
		return nan, true
	}
	// Near the center (every candidate of a search of less than some
	// hundred kilometers) the sines and the cosine come from short series
	// and the center's sine and cosine: no library call.
	halfLon := (degRad(lon) - degRad(s.Longitude)) / 2
	dLat := degRad(lat) - degRad(s.Latitude)
	if halfLon == 0 {
		// Distance takes the same shortcut, with no trigonometry at all;
		// the key is the haversine term without its longitude part.
		u := math.NaN()
		if math.Abs(dLat) <= smallAngle {
			u = smallSin(dLat / 2)
		}
		return u * u, LatDistance(s.Latitude, lat) > s.limit
	}
	var u, v, cosLat float64
	if math.Abs(halfLon) <= smallAngle {
		v = smallSin(halfLon)
	} else {
		v = math.Sin(halfLon)
	}
	if math.Abs(dLat) <= smallAngle {
		u = smallSin(dLat / 2)
		cosLat = s.cosCenter*smallCos(dLat) - s.sinCenter*smallSin(dLat)
	} else {
		u = math.Sin(dLat / 2)
		cosLat = math.Cos(degRad(lat))
	}
	a := u*u + s.cosCenter*cosLat*v*v
	margin := 1e-9 * math.Max(a, s.haversineAt)
	switch {
	case a > s.haversineAt+margin:
		return a, true
	case a < s.haversineAt-margin:
		return a, false
	}
	return a, Distance(s.Longitude, s.Latitude, lon, lat) > s.limit
}

// Distances sets dist[i] to the distance from the shape's center to
// (lons[i], lats[i]), as Distance computes it, in one call.
func (s *Shape) Distances(lons, lats, dist []float64) {
	distances(s.Longitude, s.Latitude, lons, lats, dist)
}

// EstimateSteps is geohashEstimateStepsByRadius: the hash precision whose
// boxes, with their neighbours, cover a radius at a latitude.
func EstimateSteps(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	// Boxes narrow towards the poles.
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// boundingBox is geohashBoundingBox: min longitude, min latitude, max
// longitude, max latitude of the shape.
func (s *Shape) boundingBox() [4]float64 {
	var height, width float64
	if s.Box {
		height = float64(s.Conversion * (s.Height / 2))
		width = float64(s.Conversion * (s.Width / 2))
	} else {
		height = float64(s.Conversion * s.Radius)
		width = height
	}
	latDelta := radDeg(height / EarthRadius)
	longDeltaTop := radDeg(width / EarthRadius / cosine(degRad(s.Latitude+latDelta)))
	longDeltaBottom := radDeg(width / EarthRadius / cosine(degRad(s.Latitude-latDelta)))
	var b [4]float64
	// The hemispheres are mirrored: the wider edge is the one nearer the
	// equator.
	if s.Latitude < 0 {
		b[0], b[2] = s.Longitude-longDeltaBottom, s.Longitude+longDeltaBottom
	} else {
		b[0], b[2] = s.Longitude-longDeltaTop, s.Longitude+longDeltaTop
	}
	b[1] = s.Latitude - latDelta
	b[3] = s.Latitude + latDelta
	return b
}

func moveX(h Bits, d int) Bits {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - uint(h.Step)*2)
	h.Bits = x | y
	return h
}

func moveY(h Bits, d int) Bits {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	if d > 0 {
		y = y + (zz + 1)
	} else {
		y = y | zz
		y = y - (zz + 1)
	}
	y &= 0x5555555555555555 >> (64 - uint(h.Step)*2)
	h.Bits = x | y
	return h
}

// Neighbour indexes into the array Boxes returns, in the order Redis
// scans them.
const (
	Self = iota
	North
	South
	East
	West
	NorthEast
	NorthWest
	SouthEast
	SouthWest
)

func neighbours(h Bits) [9]Bits {
	return [9]Bits{
		Self:      h,
		North:     moveY(h, 1),
		South:     moveY(h, -1),
		East:      moveX(h, 1),
		West:      moveX(h, -1),
		NorthEast: moveY(moveX(h, 1), 1),
		NorthWest: moveY(moveX(h, -1), 1),
		SouthEast: moveY(moveX(h, 1), -1),
		SouthWest: moveY(moveX(h, -1), -1),
	}
}

// Boxes is geohashCalculateAreasByShapeWGS84: the center's hash box at the
// estimated precision and its eight neighbours, in Redis's scan order, the
// ones that cannot hold a match zeroed.
func (s *Shape) Boxes() [9]Bits {
	b := s.boundingBox()
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	radius := s.Radius
	if s.Box {
		radius = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	}
	radius = float64(radius * s.Conversion)
	steps := EstimateSteps(radius, s.Latitude)

	h, _ := encode(wgsLong, wgsLat, s.Longitude, s.Latitude, steps)
	nb := neighbours(h)
	area := decode(wgsLong, wgsLat, h)

	// Near the edge of its box the center's neighbours may not reach far
	// enough: then one step coarser.
	north := decode(wgsLong, wgsLat, nb[North])
	south := decode(wgsLong, wgsLat, nb[South])
	east := decode(wgsLong, wgsLat, nb[East])
	west := decode(wgsLong, wgsLat, nb[West])
	decrease := north.Latitude.Max < maxLat || south.Latitude.Min > minLat ||
		east.Longitude.Max < maxLon || west.Longitude.Min > minLon
	if steps > 1 && decrease {
		steps--
		h, _ = encode(wgsLong, wgsLat, s.Longitude, s.Latitude, steps)
		nb = neighbours(h)
		area = decode(wgsLong, wgsLat, h)
	}

	// Drop the neighbours the search area does not reach.
	if steps >= 2 {
		if area.Latitude.Min < minLat {
			nb[South], nb[SouthWest], nb[SouthEast] = Bits{}, Bits{}, Bits{}
		}
		if area.Latitude.Max > maxLat {
			nb[North], nb[NorthEast], nb[NorthWest] = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Min < minLon {
			nb[West], nb[SouthWest], nb[NorthWest] = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Max > maxLon {
			nb[East], nb[SouthEast], nb[NorthEast] = Bits{}, Bits{}, Bits{}
		}
	}
	return nb
}

// ScoreRange returns the scores [min, max) of the members inside a hash
// box (scoresOfGeoHashBox).
func ScoreRange(h Bits) (lo, hi uint64) {
	shift := 52 - uint(h.Step)*2
	return h.Bits << shift, (h.Bits + 1) << shift
}
