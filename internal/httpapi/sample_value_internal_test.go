package httpapi

import (
	"bytes"
	"math"
	"strconv"
	"testing"
)

// appendSampleValue writes what expfmt writes: Go's shortest 'g' (and
// ".0" after an integer in OpenMetrics), its integer shortcut included.
func TestAppendSampleValue(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 7, 999999, -999999, 1e6, -1e6, 1234567, 0.5, -2.25,
		1e21, 1e-7, 123456.5, math.MaxInt64, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, math.MaxFloat64}
	for i := -2000; i <= 2000; i++ {
		vals = append(vals, float64(i)*499.75, float64(i*i*i))
	}
	for _, v := range vals {
		for _, om := range []bool{false, true} {
			want := strconv.FormatFloat(v, 'g', -1, 64)
			switch {
			case math.IsNaN(v):
				want = "NaN"
			case math.IsInf(v, 1):
				want = "+Inf"
			case math.IsInf(v, -1):
				want = "-Inf"
			case om && !bytes.ContainsAny([]byte(want), "e."):
				want += ".0"
			}
			if got := string(appendSampleValue(nil, v, om)); got != want {
				t.Errorf("%v (om %v): %q, want %q", v, om, got, want)
			}
		}
	}
}
