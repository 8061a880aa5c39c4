// Package stream is Redis's stream value: entries with ids (ms-seq) and
// field-value pairs, consumer groups with their pending entries lists,
// and the counters Redis 7.0 keeps for lag (entries-added, the maximal
// deleted id, each group's entries-read).
//
// Layout. Entries live in nodes, each one byte slice holding a header
// (the node's master fields) and its entries one after another with ids
// delta-encoded against the node's master id (the id of the first entry
// ever put in the node), and with only the values when an entry's fields
// are the master fields; a node is one pointer for up to
// stream-node-max-entries entries. The nodes are a slice sorted by master
// id. Deleted entries stay in their node flagged as such (a tombstone),
// as in Redis's listpacks, until the whole node is empty and removed:
// node boundaries, tombstones and the listpack byte count that decides
// when a node is full follow Redis's rules, so approximate trimming keeps
// exactly the entries redis-server keeps and an RDB written from a stream
// has the listpacks redis-server would write.
package stream

import (
	"math"
	"strconv"
)

// ID is a stream entry id.
type ID struct{ Ms, Seq uint64 }

// MaxID is the largest id ("+").
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// Compare returns -1, 0 or 1 as a is less than, equal to or greater than b.
func (a ID) Compare(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports whether a < b.
func (a ID) Less(b ID) bool { return a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq) }

// IsZero reports whether a is 0-0.
func (a ID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Next returns the id after a (Redis's streamIncrID); ok is false for MaxID.
func (a ID) Next() (ID, bool) {
	if a.Seq == math.MaxUint64 {
		if a.Ms == math.MaxUint64 {
			return a, false
		}
		return ID{a.Ms + 1, 0}, true
	}
	return ID{a.Ms, a.Seq + 1}, true
}

// Prev returns the id before a (streamDecrID); ok is false for 0-0.
func (a ID) Prev() (ID, bool) {
	if a.Seq == 0 {
		if a.Ms == 0 {
			return a, false
		}
		return ID{a.Ms - 1, math.MaxUint64}, true
	}
	return ID{a.Ms, a.Seq - 1}, true
}

// AppendTo appends a as "ms-seq".
func (a ID) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// String is a as "ms-seq".
func (a ID) String() string { return string(a.AppendTo(nil)) }

// Bytes is a as "ms-seq", a fresh slice.
func (a ID) Bytes() []byte { return a.AppendTo(make([]byte, 0, 24)) }
