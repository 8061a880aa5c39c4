package commands

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/geohash"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The GEO family (geo.c). A geo set is a sorted set whose scores are the
// 52-bit geohashes of internal/ds/geohash, so everything here reads and
// writes through the zset helpers, and the data stays a plain zset for
// RDB, DUMP, replication and the Z* commands. GEOADD is ZADD underneath
// and propagates as the ZADD it ran; the searches scan the score ranges of
// nine geohash boxes, filter by distance, and sort as Redis does (glibc's
// stable merge sort, or Redis's partial quicksort when COUNT narrows the
// result), so ties come out in Redis's order.

func init() {
	const (
		r   = engine.FlagReadonly
		wd  = engine.FlagWrite | engine.FlagDenyOOM
		acl = "@geo"
		grp = "geo"
	)
	geo := func(c *engine.Command) *engine.Command {
		if c.First == 0 {
			c.First, c.Last, c.Step = 1, 1, 1
		}
		c.ACL, c.Group = acl, grp
		return c
	}
	radiusCx := "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index."
	searchCx := "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape"
	engine.Register(
		geo(&engine.Command{Name: "geoadd", Arity: -5, Flags: wd, KeyFlags: "RW update",
			Summary: "Add one or more geospatial items in the geospatial index represented using a sorted set", Since: "3.2.0",
			Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.", Handler: cmdGeoadd}),
		geo(&engine.Command{Name: "geodist", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Returns the distance between two members of a geospatial index", Since: "3.2.0",
			Complexity: "O(log(N))", Handler: cmdGeodist}),
		geo(&engine.Command{Name: "geohash", Arity: -2, Flags: r, KeyFlags: "RO access",
			Summary: "Returns members of a geospatial index as standard geohash strings", Since: "3.2.0",
			Complexity: "O(log(N)) for each member requested, where N is the number of elements in the sorted set.", Handler: cmdGeohash}),
		geo(&engine.Command{Name: "geopos", Arity: -2, Flags: r, KeyFlags: "RO access",
			Summary: "Returns longitude and latitude of members of a geospatial index", Since: "3.2.0",
			Complexity: "O(N) where N is the number of members requested.", Handler: cmdGeopos}),
		geo(&engine.Command{Name: "georadius", Specs: keySpecs["georadius"], Arity: -6, Flags: wd, Keys: geoStoreKeys(6), KeyFlags: "RO access",
			Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", Since: "3.2.0",
			Complexity: radiusCx, Handler: cmdGeoradius}),
		geo(&engine.Command{Name: "georadius_ro", Arity: -6, Flags: r, KeyFlags: "RO access",
			Summary: "A read-only variant for GEORADIUS", Since: "3.2.10",
			Complexity: radiusCx, Handler: cmdGeoradiusRO}),
		geo(&engine.Command{Name: "georadiusbymember", Specs: keySpecs["georadiusbymember"], Arity: -5, Flags: wd, Keys: geoStoreKeys(5), KeyFlags: "RO access",
			Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", Since: "3.2.0",
			Complexity: radiusCx, Handler: cmdGeoradiusbymember}),
		geo(&engine.Command{Name: "georadiusbymember_ro", Arity: -5, Flags: r, KeyFlags: "RO access",
			Summary: "A read-only variant for GEORADIUSBYMEMBER", Since: "3.2.10",
			Complexity: radiusCx, Handler: cmdGeoradiusbymemberRO}),
		geo(&engine.Command{Name: "geosearch", Arity: -7, Flags: r, KeyFlags: "RO access",
			Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", Since: "6.2.0",
			Complexity: searchCx, Handler: cmdGeosearch}),
		geo(&engine.Command{Name: "geosearchstore", Specs: keySpecs["geosearchstore"], Arity: -8, Flags: wd, First: 1, Last: 2, Step: 1, KeyFlags: "OW update",
			Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", Since: "6.2.0",
			Complexity: searchCx, Handler: cmdGeosearchstore}),
	)
}

// geoStoreKeys finds GEORADIUS's keys as redis-server 7.0's key specs do:
// the source at 1, then the argument after the first STORE and after the
// first STOREDIST found from index from on (a keyword in the last position
// names no key).
func geoStoreKeys(from int) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		out := []int{1}
		for _, kw := range []string{"store", "storedist"} {
			for i := from; i < len(args)-1; i++ {
				if ascii.OptIs(args[i], kw) {
					out = append(out, i+1)
					break
				}
			}
		}
		return out
	}
}

// geoCFloat is C's "%f" for the error texts: six decimals, "inf" and
// "-inf" for the infinities.
func geoCFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// geoLongLat parses a longitude and a latitude at args[i], args[i+1] as
// extractLongLatOrReply does.
func geoLongLat(c *engine.Ctx, i int) (lon, lat float64, ok bool) {
	if lon, ok = zsParseDouble(c.Args[i]); !ok {
		c.Error(engine.ErrNotFloat)
		return 0, 0, false
	}
	if lat, ok = zsParseDouble(c.Args[i+1]); !ok {
		c.Error(engine.ErrNotFloat)
		return 0, 0, false
	}
	if !geohash.Valid(lon, lat) {
		c.Error("ERR invalid longitude,latitude pair " + geoCFloat(lon) + "," + geoCFloat(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// geoUnit is extractUnitOrReply: the meters in one unit, or false after
// replying.
func geoUnit(c *engine.Ctx, b []byte) (float64, bool) {
	switch {
	case ascii.OptIs(b, "m"):
		return 1, true
	case ascii.OptIs(b, "km"):
		return 1000, true
	case ascii.OptIs(b, "ft"):
		return 0.3048, true
	case ascii.OptIs(b, "mi"):
		return 1609.34, true
	}
	c.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// geoNumber parses a radius, width or height as getDoubleFromObject
// does, replying "need numeric <what>" when it is not a number.
func geoNumber(c *engine.Ctx, b []byte, what string) (float64, bool) {
	v, ok := zsParseDouble(b)
	if !ok {
		c.Error("ERR need numeric " + what)
	}
	return v, ok
}

// geoAppendDistance is addReplyDoubleDistance's text (fixedpoint_d2string
// with 4 digits): the value times 10^4 rounded half to even (llrint), then
// written with a dot before the last four digits.
func geoAppendDistance(dst []byte, d float64) []byte {
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	v := int64(math.RoundToEven(d * 10000))
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = uint64(-v) // -MinInt64 wraps to itself, which as uint64 is right
	}
	dst = strconv.AppendUint(dst, u/10000, 10)
	frac := u % 10000
	return append(dst, '.', byte('0'+frac/1000), byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
}

// geoAppendHuman is ld2string's human mode for a double ("%.17Lf" with
// the trailing zeros and dot removed, -0 as 0): a double widens to a long
// double exactly, so formatting the double itself prints the same digits.
func geoAppendHuman(dst []byte, v float64) []byte {
	if math.IsInf(v, 0) {
		if v > 0 {
			return append(dst, "inf"...)
		}
		return append(dst, "-inf"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', 17, 64)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// geoReplyCoord writes a coordinate as addReplyHumanLongDouble does: a
// bulk string in RESP2, a double in RESP3, both in the human format.
func geoReplyCoord(c *engine.Ctx, v float64) {
	var tmp [48]byte
	s := geoAppendHuman(tmp[:0], v)
	if c.W.Proto == 3 {
		c.W.Buf = append(c.W.Buf, ',')
		c.W.Buf = append(c.W.Buf, s...)
		c.W.Buf = append(c.W.Buf, '\r', '\n')
		return
	}
	c.W.Bulk(s)
}

// cmdGeoadd is GEOADD key [NX|XX] [CH] longitude latitude member ...: the
// coordinates become scores and ZADD does the rest, and propagates as
// itself, as geoaddCommand's replaceClientCommandVector makes Redis do.
func cmdGeoadd(c *engine.Ctx) {
	args := c.Args
	longIdx := 2
	nx, xx := false, false
options:
	for ; longIdx < len(args); longIdx++ {
		switch a := args[longIdx]; {
		case ascii.OptIs(a, "nx"):
			nx = true
		case ascii.OptIs(a, "xx"):
			xx = true
		case ascii.OptIs(a, "ch"):
		default:
			break options
		}
	}
	if (len(args)-longIdx)%3 != 0 || (xx && nx) {
		c.Error(engine.ErrSyntax)
		return
	}
	elements := (len(args) - longIdx) / 3
	zargs := make([][]byte, longIdx+2*elements)
	zargs[0] = []byte("zadd")
	copy(zargs[1:], args[1:longIdx])
	for i := 0; i < elements; i++ {
		lon, lat, ok := geoLongLat(c, longIdx+3*i)
		if !ok {
			return
		}
		zargs[longIdx+2*i] = strconv.AppendUint(nil, geohash.Encode(lon, lat), 10)
		zargs[longIdx+2*i+1] = args[longIdx+3*i+2]
	}
	c.Args = zargs
	c.Rewrite(zargs...)
	zaddGeneric(c, 0)
}

// geoScore is a member's score, false when the set or the member is
// missing.
func geoScore(s *zset.Set, member []byte) (float64, bool) {
	if s == nil {
		return 0, false
	}
	return s.Score(zsView(member))
}

func cmdGeodist(c *engine.Ctx) {
	toMeter := 1.0
	switch {
	case len(c.Args) == 5:
		var ok bool
		if toMeter, ok = geoUnit(c, c.Args[4]); !ok {
			return
		}
	case len(c.Args) > 5:
		c.Error(engine.ErrSyntax)
		return
	}
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	s1, ok1 := geoScore(s, c.Args[2])
	s2, ok2 := geoScore(s, c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	lon1, lat1 := geohash.Decode(s1)
	lon2, lat2 := geohash.Decode(s2)
	var tmp [32]byte
	c.W.Bulk(geoAppendDistance(tmp[:0], geohash.Distance(lon1, lat1, lon2, lat2)/toMeter))
}

func cmdGeohash(c *engine.Ctx) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if score, ok := geoScore(s, m); ok {
			c.W.BulkString(geohash.String(score))
		} else {
			c.W.Null()
		}
	}
}

func cmdGeopos(c *engine.Ctx) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		score, ok := geoScore(s, m)
		if !ok {
			c.W.NullArray()
			continue
		}
		lon, lat := geohash.Decode(score)
		c.W.Array(2)
		geoReplyCoord(c, lon)
		geoReplyCoord(c, lat)
	}
}

// Search variants (georadiusGeneric's flags).
const (
	geoRadiusCoords = 1 << iota // center given as coordinates
	geoRadiusMember             // center given as a member
	geoNoStore                  // no STORE/STOREDIST (the _RO forms)
	geoSearch                   // GEOSEARCH's arguments
	geoSearchStore              // GEOSEARCHSTORE: STOREDIST is a flag
)

func cmdGeoradius(c *engine.Ctx)   { geoSearchGeneric(c, 1, geoRadiusCoords) }
func cmdGeoradiusRO(c *engine.Ctx) { geoSearchGeneric(c, 1, geoRadiusCoords|geoNoStore) }
func cmdGeoradiusbymember(c *engine.Ctx) {
	geoSearchGeneric(c, 1, geoRadiusMember)
}
func cmdGeoradiusbymemberRO(c *engine.Ctx) {
	geoSearchGeneric(c, 1, geoRadiusMember|geoNoStore)
}
func cmdGeosearch(c *engine.Ctx)      { geoSearchGeneric(c, 1, geoSearch) }
func cmdGeosearchstore(c *engine.Ctx) { geoSearchGeneric(c, 2, geoSearch|geoSearchStore) }

// geoPoint is one match of a search.
type geoPoint struct {
	lon, lat, dist, score float64
	key                   float64 // geohash.Shape.WithinKey's, when collected with keys
	member                string
	ref                   zset.MemberRef // until member is read
}

const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// geoSearchGeneric is georadiusGeneric: the argument checks in Redis's
// order (the source's type first, then the center and the shape, then the
// options), the search, the sort, and the reply or the stored result.
func geoSearchGeneric(c *engine.Ctx, srcIdx int, flags int) {
	args := c.Args
	s, ok := zsRead(c, c.Key(srcIdx))
	if !ok {
		return
	}
	var storeKey []byte
	storeDist := false
	var shape geohash.Shape
	var base int
	switch {
	case flags&geoRadiusCoords != 0:
		base = 6
		if shape.Longitude, shape.Latitude, ok = geoLongLat(c, 2); !ok {
			return
		}
		if shape.Radius, shape.Conversion, ok = geoDistanceArg(c, 4); !ok {
			return
		}
	case flags&geoRadiusMember != 0 && s == nil:
		// Nothing to search: the options are still parsed, for the errors
		// and the choice of reply.
		base = 5
	case flags&geoRadiusMember != 0:
		base = 5
		score, found := s.Score(zsView(args[2]))
		if !found {
			c.Error("ERR could not decode requested zset member")
			return
		}
		shape.Longitude, shape.Latitude = geohash.Decode(score)
		if shape.Radius, shape.Conversion, ok = geoDistanceArg(c, 3); !ok {
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = args[1]
		}
	}

	withDist, withHash, withCoord := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sortOrder := geoSortNone
	anyOpt := false
	var count int64
	search := flags&geoSearch != 0
	for i := base; i < len(args); i++ {
		a := args[i]
		more := len(args) - i - 1 // arguments after this one
		switch {
		case ascii.OptIs(a, "withdist"):
			withDist = true
		case ascii.OptIs(a, "withhash"):
			withHash = true
		case ascii.OptIs(a, "withcoord"):
			withCoord = true
		case ascii.OptIs(a, "any"):
			anyOpt = true
		case ascii.OptIs(a, "asc"):
			sortOrder = geoSortAsc
		case ascii.OptIs(a, "desc"):
			sortOrder = geoSortDesc
		case ascii.OptIs(a, "count") && more >= 1:
			n, ok := num.ParseInt(args[i+1])
			if !ok {
				c.Error(engine.ErrNotInt)
				return
			}
			if n <= 0 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case ascii.OptIs(a, "store") && more >= 1 && flags&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = args[i+1], false
			i++
		case ascii.OptIs(a, "storedist") && more >= 1 && flags&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = args[i+1], true
			i++
		case ascii.OptIs(a, "storedist") && flags&geoSearchStore != 0:
			storeDist = true
		case ascii.OptIs(a, "frommember") && more >= 1 && search && !fromLoc:
			if s != nil {
				score, found := s.Score(zsView(args[i+1]))
				if !found {
					c.Error("ERR could not decode requested zset member")
					return
				}
				shape.Longitude, shape.Latitude = geohash.Decode(score)
			}
			fromMember = true
			i++
		case ascii.OptIs(a, "fromlonlat") && more >= 2 && search && !fromMember:
			if shape.Longitude, shape.Latitude, ok = geoLongLat(c, i+1); !ok {
				return
			}
			fromLoc = true
			i += 2
		case ascii.OptIs(a, "byradius") && more >= 2 && search && !byBox:
			if shape.Radius, shape.Conversion, ok = geoDistanceArg(c, i+1); !ok {
				return
			}
			shape.Box = false
			byRadius = true
			i += 2
		case ascii.OptIs(a, "bybox") && more >= 3 && search && !byRadius:
			if shape.Width, shape.Height, shape.Conversion, ok = geoBoxArg(c, i+1); !ok {
				return
			}
			shape.Box = true
			byBox = true
			i += 3
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}

	if storeKey != nil && (withDist || withHash || withCoord) {
		if flags&geoSearchStore != 0 {
			c.Error("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		} else {
			c.Error("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		}
		return
	}
	if search && !fromMember && !fromLoc {
		c.Errorf("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", args[0])
		return
	}
	if search && !byRadius && !byBox {
		c.Errorf("ERR exactly one of BYRADIUS and BYBOX can be specified for %s", args[0])
		return
	}
	if anyOpt && count == 0 {
		c.Error("ERR the ANY argument requires COUNT argument")
		return
	}

	if s == nil {
		if storeKey != nil {
			if c.DB.Delete(string(storeKey)) {
				c.Dirty(1)
				c.Notify(engine.NotifyGeneric, "del", storeKey)
			}
			c.W.Int(0)
		} else {
			c.W.Array(0)
		}
		return
	}

	// COUNT without an order means the nearest ones (but ANY takes the
	// first found).
	if count != 0 && sortOrder == geoSortNone && !anyOpt {
		sortOrder = geoSortAsc
	}
	limit := 0
	if anyOpt {
		limit = int(min(count, math.MaxInt32))
	}
	scratch := geoScratchPool.Get().(*geoScratch)
	defer scratch.release()
	// COUNT k of a larger sorted result picks the nearest (farthest) k by
	// the keys the radius test computed, and the exact distances of those
	// alone; geoNearest declines when the keys cannot decide.
	byKey := sortOrder != geoSortNone && count > 0 && count <= geoNearestMax && !shape.Box
	needDist := withDist || storeDist || sortOrder != geoSortNone
	points := geoCollect(s, &shape, limit, needDist && !byKey, byKey, scratch)

	if len(points) == 0 && storeKey == nil {
		c.W.Array(0)
		return
	}
	returned := len(points)
	if count != 0 && int64(returned) > count {
		returned = int(count)
	}
	sorted := false
	if byKey {
		if returned < len(points) {
			sorted = geoNearest(points, returned, sortOrder == geoSortDesc, &shape, scratch)
		}
		if !sorted {
			geoDistances(points, &shape, scratch)
		}
	}
	if sortOrder != geoSortNone && !sorted {
		cmp := func(a, b *geoPoint) int {
			r := 0
			if a.dist > b.dist {
				r = 1
			} else if a.dist < b.dist {
				r = -1
			}
			if sortOrder == geoSortDesc {
				r = -r
			}
			return r
		}
		if returned == len(points) {
			// glibc's qsort is a merge sort: ties keep the scan order.
			slices.SortStableFunc(points, func(a, b geoPoint) int { return cmp(&a, &b) })
		} else {
			pqsort(points, cmp, 0, returned-1)
		}
	}
	points = points[:returned]
	geoReadMembers(points)

	if storeKey == nil {
		geoReplyPoints(c, points, shape.Conversion, withDist, withHash, withCoord)
		return
	}
	event := "georadiusstore"
	if flags&geoSearch != 0 {
		event = "geosearchstore"
	}
	geoStore(c, storeKey, event, points, shape.Conversion, storeDist)
}

// geoDistanceArg parses "<radius> <unit>" at args[i] (extractDistanceOrReply).
func geoDistanceArg(c *engine.Ctx, i int) (radius, conversion float64, ok bool) {
	if radius, ok = geoNumber(c, c.Args[i], "radius"); !ok {
		return 0, 0, false
	}
	if radius < 0 {
		c.Error("ERR radius cannot be negative")
		return 0, 0, false
	}
	if conversion, ok = geoUnit(c, c.Args[i+1]); !ok {
		return 0, 0, false
	}
	return radius, conversion, true
}

// geoBoxArg parses "<width> <height> <unit>" at args[i] (extractBoxOrReply).
func geoBoxArg(c *engine.Ctx, i int) (width, height, conversion float64, ok bool) {
	if width, ok = geoNumber(c, c.Args[i], "width"); !ok {
		return 0, 0, 0, false
	}
	if height, ok = geoNumber(c, c.Args[i+1], "height"); !ok {
		return 0, 0, 0, false
	}
	if height < 0 || width < 0 {
		c.Error("ERR height or width cannot be negative")
		return 0, 0, 0, false
	}
	if conversion, ok = geoUnit(c, c.Args[i+2]); !ok {
		return 0, 0, 0, false
	}
	return width, height, conversion, true
}

// geoCollect is membersOfAllNeighbors: the members of each box within the
// shape, in scan order, stopping once limit (when not 0) are found; with
// needDist, with their distances from the center (in meters); with keys,
// with WithinKey's keys. The members are read by geoReadMembers.
func geoCollect(s *zset.Set, shape *geohash.Shape, limit int, needDist, keys bool, scratch *geoScratch) []geoPoint {
	boxes := shape.Boxes()
	points := scratch.points[:0]
	last := 0 // index of the last box scanned; 0 also before any
	for i, b := range boxes {
		if b.IsZero() {
			continue
		}
		// Huge radii make neighbours coincide: a box equal to the one
		// just scanned is skipped (only once a neighbour was scanned, as
		// in Redis).
		if last != 0 && b == boxes[last] {
			continue
		}
		if limit != 0 && len(points) >= limit {
			break
		}
		lo, hi := geohash.ScoreRange(b)
		sp := s.SpanByScore(zset.ScoreRange{Min: float64(lo), Max: float64(hi), MaxExclusive: true}, false, 0, -1)
		if keys {
			sp.WalkScores(func(score float64, m zset.MemberRef) bool {
				if lon, lat, key, ok := shape.WithinKey(score); ok {
					points = append(points, geoPoint{lon: lon, lat: lat, score: score, key: key, ref: m})
				}
				return limit == 0 || len(points) < limit
			})
		} else {
			sp.WalkScores(func(score float64, m zset.MemberRef) bool {
				if lon, lat, ok := shape.Within(score); ok {
					points = append(points, geoPoint{lon: lon, lat: lat, score: score, ref: m})
				}
				return limit == 0 || len(points) < limit
			})
		}
		last = i
	}
	scratch.points = points
	if needDist {
		geoDistances(points, shape, scratch)
	}
	return points
}

// geoReadMembers reads the members of the points that are replied or
// stored, once the search is over, in a loop of nothing else: each read
// is likely a cache miss (the members live apart from the scores the walk
// reads), and independent misses in a tight loop overlap where misses
// spread over the walk would not.
func geoReadMembers(points []geoPoint) {
	for i := range points {
		points[i].member = points[i].ref.Member()
	}
}

// geoDistances sets the points' distances from the center, in meters.
func geoDistances(points []geoPoint, shape *geohash.Shape, scratch *geoScratch) {
	if len(points) == 0 {
		return
	}
	buf := slices.Grow(scratch.floats[:0], 3*len(points))[:3*len(points)]
	scratch.floats = buf
	lons, lats, dist := buf[:len(points)], buf[len(points):2*len(points)], buf[2*len(points):]
	for i := range points {
		lons[i], lats[i] = points[i].lon, points[i].lat
	}
	shape.Distances(lons, lats, dist)
	for i := range points {
		points[i].dist = dist[i]
	}
}

// geoScratch is a search's working memory, reused from search to search:
// a search allocates nothing in proportion to its candidates, which keeps
// the collector (and its walks over large sets) away.
type geoScratch struct {
	points []geoPoint
	floats []float64
	keys   []float64      // geoNearest's best keys
	list   []geoCandidate // geoNearest's short list
	top    []geoPoint     // geoNearest's result before it is copied back (cleared after)
}

var geoScratchPool = sync.Pool{New: func() any { return new(geoScratch) }}

// geoScratchMax bounds what goes back to the pool, so that one huge
// search does not pin its memory.
const geoScratchMax = 1 << 14

// release clears the member strings (the pool must not keep them alive)
// and returns the scratch to the pool.
func (sc *geoScratch) release() {
	if cap(sc.points) > geoScratchMax || cap(sc.floats) > 3*geoScratchMax {
		return
	}
	clear(sc.points[:cap(sc.points)])
	sc.points = sc.points[:0]
	geoScratchPool.Put(sc)
}

// geoReplyPoints writes the matches: members alone, or each as an array
// with the distance (in the unit), the hash and the coordinates asked for.
func geoReplyPoints(c *engine.Ctx, points []geoPoint, conversion float64, withDist, withHash, withCoord bool) {
	extra := 0
	for _, b := range []bool{withDist, withHash, withCoord} {
		if b {
			extra++
		}
	}
	c.W.Array(len(points))
	var tmp [32]byte
	for i := range points {
		p := &points[i]
		if extra > 0 {
			c.W.Array(extra + 1)
		}
		c.W.BulkString(p.member)
		if withDist {
			c.W.Bulk(geoAppendDistance(tmp[:0], p.dist/conversion))
		}
		if withHash {
			c.W.Int(int64(p.score))
		}
		if withCoord {
			c.W.Array(2)
			geoReplyCoord(c, p.lon)
			geoReplyCoord(c, p.lat)
		}
	}
}

// geoStore writes the matches to dst as a sorted set scored by geohash or,
// with STOREDIST, by distance in the unit; no match deletes dst. Redis
// builds a skiplist and converts it to a listpack when it fits, so the
// encoding is the one zsFromEntries picks.
func geoStore(c *engine.Ctx, dstKey []byte, event string, points []geoPoint, conversion float64, storeDist bool) {
	dst := string(dstKey)
	if len(points) == 0 {
		if c.DB.Delete(dst) {
			c.Dirty(1)
			c.Notify(engine.NotifyGeneric, "del", dstKey)
		}
		c.W.Int(0)
		return
	}
	es := make([]zset.Entry, len(points))
	for i, p := range points {
		score := p.score
		if storeDist {
			score = p.dist / conversion
		}
		es[i] = zset.Entry{Member: p.member, Score: score}
	}
	set := zsFromEntries(es, engine.ZSetLimits(c))
	c.DB.Set(dst, keyspace.NewValue(keyspace.TypeZSet, set), false)
	c.Dirty(int64(len(points)))
	c.W.Int(int64(len(points)))
	c.Notify(engine.NotifyZset, event, dstKey)
}
