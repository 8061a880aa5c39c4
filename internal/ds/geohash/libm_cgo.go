//go:build cgo

package geohash

/*
#cgo LDFLAGS: -lm
#include <math.h>

// The haversine distance of geohashGetDistance, in its order of
// operations, with the C library's sin, cos and asin. One call per
// distance keeps the cgo crossings to one.
static double abacus_geo_distance(double lon1, double lat1, double lon2, double lat2) {
	const double radius = 6372797.560856;
	const double d2r = M_PI / 180.0;
	double lon1r = lon1 * d2r, lon2r = lon2 * d2r;
	double v = sin((lon2r - lon1r) / 2);
	if (v == 0.0) return radius * fabs(lat2 * d2r - lat1 * d2r);
	double lat1r = lat1 * d2r, lat2r = lat2 * d2r;
	double u = sin((lat2r - lat1r) / 2);
	double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
	return 2.0 * radius * asin(sqrt(a));
}

static void abacus_geo_distances(double lon, double lat, const double *lons, const double *lats, double *out, long n) {
	for (long i = 0; i < n; i++) out[i] = abacus_geo_distance(lon, lat, lons[i], lats[i]);
}
*/
import "C"

import "unsafe"

func distance(lon1, lat1, lon2, lat2 float64) float64 {
	return float64(C.abacus_geo_distance(C.double(lon1), C.double(lat1), C.double(lon2), C.double(lat2)))
}

func cosine(x float64) float64 { return float64(C.cos(C.double(x))) }

// distances is distance for many points with one cgo call. The slices are
// Go memory without pointers, which C may read and write during the call.
func distances(lon, lat float64, lons, lats, out []float64) {
	if len(out) == 0 {
		return
	}
	C.abacus_geo_distances(C.double(lon), C.double(lat),
		(*C.double)(unsafe.Pointer(&lons[0])), (*C.double)(unsafe.Pointer(&lats[0])),
		(*C.double)(unsafe.Pointer(&out[0])), C.long(len(out)))
}
