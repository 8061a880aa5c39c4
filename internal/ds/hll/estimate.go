package hll

import "math"

// The estimator is the one Redis uses since 5.0: Otmar Ertl's improved raw
// estimator ("New cardinality estimation algorithms for HyperLogLog
// sketches", arXiv:1702.01284), computed from the register histogram.
//
// To return the same integers as redis-server the arithmetic follows Redis's
// C code operation for operation in float64. Go may fuse x*y+z into one FMA
// instruction on some targets, which rounds differently; the explicit
// float64(...) conversions around products forbid that (Go spec,
// "Floating-point operators").

// alphaInf is 1/(2 ln 2), Redis's HLL_ALPHA_INF.
const alphaInf = 0.721347520444481703680

// q is the number of hash bits left after the register index.
const q = 64 - precision

// estimate returns the cardinality estimate for a register histogram.
func estimate(h *histogram) uint64 {
	m := float64(Registers)
	z := float64(m * tau((m-float64(h[q+1]))/m))
	for j := q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(h[0])/m))
	return llround(alphaInf * m * m / z)
}

// sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), summed until it stops changing.
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y := 1.0
	z := x
	for {
		x *= x
		zPrev := z
		z += float64(x * y)
		y += y
		if z == zPrev {
			return z
		}
	}
}

// tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y := 1.0
	z := 1 - x
	for {
		x = math.Sqrt(x)
		zPrev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y) // Redis's pow(1-x, 2), which GCC emits as a product
		if z == zPrev {
			return z / 3
		}
	}
}

// llround converts the estimate as Redis does: llroundl (halves away from
// zero) and then to uint64. An estimate that does not fit in a long long
// (infinite when z is 0, which only crafted dense values with every register
// above 51 produce, or just very large) becomes LLONG_MIN on x86-64, which
// reads as 1<<63 when returned as uint64.
func llround(x float64) uint64 {
	if !(x < 1<<63) { // also NaN
		return 1 << 63
	}
	return uint64(math.Round(x))
}
