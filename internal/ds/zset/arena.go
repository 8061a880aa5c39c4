package zset

import "math"

// The arena stores the large encoding's members at stable uint32 ids, so
// that the B+tree leaves and the hash index can refer to a member with 4
// bytes instead of a 16-byte string header, and hold no pointers.
const (
	// chunkSize slots of 24 bytes, plus the 8-byte header Go puts before
	// objects with pointers, fill the 24 KiB size class: 24552+8 <= 24576.
	chunkSize = 1023
	maxID     = math.MaxUint32 - 1
)

// slot is one member. A free slot has an empty member and keeps the next
// free id (+1, 0 ending the list) in the bits of score.
type slot struct {
	member string
	score  float64
}

// arena is a chunked slot array with a free list. Chunks never move, and
// all but the first have exactly chunkSize slots, so growth copies at most
// one small chunk and wastes at most one chunk's tail.
type arena struct {
	chunks [][]slot
	free   uint32 // first free id + 1; 0 if none
	top    uint32 // ids handed out so far, live or free
	hint   int    // expected size, for the first chunk
}

func (a *arena) at(id uint32) *slot {
	return &a.chunks[id/chunkSize][id%chunkSize]
}

func (a *arena) member(id uint32) string { return a.at(id).member }

// alloc stores a member and returns its id, reusing freed ids first.
func (a *arena) alloc(member string, score float64) uint32 {
	if a.free != 0 {
		id := a.free - 1
		s := a.at(id)
		a.free = uint32(math.Float64bits(s.score))
		*s = slot{member, score}
		return id
	}
	if a.top > maxID {
		panic("zset: too many members")
	}
	id := a.top
	c := int(id / chunkSize)
	if c == len(a.chunks) {
		// The first chunk starts at the expected size and grows by append
		// (small large sets stay small); the others are full-size.
		n := chunkSize
		if c == 0 {
			n = min(max(a.hint, 16), chunkSize)
		}
		a.chunks = append(a.chunks, make([]slot, 0, n))
	}
	a.chunks[c] = append(a.chunks[c], slot{member, score})
	a.top++
	return id
}

// release frees id for reuse and drops its member string.
func (a *arena) release(id uint32) {
	*a.at(id) = slot{score: math.Float64frombits(uint64(a.free))}
	a.free = id + 1
}

// bytes is the heap held by the arena's chunks.
func (a *arena) bytes() int {
	n := cap(a.chunks) * 24
	for _, c := range a.chunks {
		n += cap(c) * slotSize
	}
	return n
}
