package set

// FromSortedInts builds a set of the integers vals, which must be strictly
// ascending (a loaded intset), taking ownership of vals: the set AddInt
// would build from them, without inserting them one by one.
func FromSortedInts(lim Limits, vals []int64) *Set {
	for i := 1; i < len(vals); i++ {
		if vals[i] <= vals[i-1] {
			panic("set: FromSortedInts of values not strictly ascending")
		}
	}
	return fromSortedInts(lim, vals)
}
