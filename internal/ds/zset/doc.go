// Package zset is the sorted set behind ZADD, ZRANGE, ZRANK and the rest:
// distinct members (byte strings), each with a float64 score, ordered by
// score and then by member bytes, as in Redis 7. Scores are never NaN;
// -inf and +inf are allowed; -0 and +0 are the same score.
//
// The package knows nothing of commands: no RESP, no argument parsing, no
// error strings. Ranks are 0-based and never negative-from-the-end; the
// command layer converts Redis's index conventions and formats replies.
//
// # Encodings
//
// Like Redis, a set has two representations, reported under Redis's names
// so that OBJECT ENCODING answers the same:
//
//   - "listpack": one slice of entries sorted by (score, member). Lookups
//     by member scan it; everything else is a binary search or an index.
//     Used while the set has at most zset-max-listpack-entries members of
//     at most zset-max-listpack-value bytes (Limits).
//   - "skiplist": the large form described below. It is not a skip list,
//     but it is what Redis calls the large encoding.
//
// Add converts a compact set when an insert would pass either limit,
// exactly when Redis does. Deleting never converts back (nor does Redis);
// Shrink converts back when the set fits the limits again (Redis does that
// for *STORE results), NewSized and FromMap/FromEntries pick the encoding
// from the expected or final size, and Convert forces one.
//
// The compact form keeps one pointer per member (its string) and hands out
// the stored strings without copying. A byte-blob encoding like Redis's
// listpack would be about half the size for small sets, but every read
// would either allocate a string per member or hand out strings aliasing a
// buffer that later writes change; with at most 128 members by default the
// slice is the simpler trade.
//
// # The large encoding
//
// Three parts, with one uint32 id per member tying them together:
//
//   - an arena: chunks of (member string, score) slots at stable ids, with
//     a free list. 24 bytes a member.
//   - a hash index from member to id: an extendible hash of small
//     open-addressing tables of uint64 slots (32-bit hash, id). Tables grow
//     or split one at a time, so no insert rehashes more than 1024 entries.
//     8 bytes a slot at 40-80% load: 10-20 bytes a member.
//   - an order-statistic B+tree: leaves hold up to 127 (score, id) pairs;
//     inner nodes hold separator entries and the entry count of each child,
//     so ranks come from prefix sums on the way down. 12 bytes a member in
//     leaves 69% full after random inserts (17.5 bytes) up to 100% full
//     after ascending inserts or a bulk build (12 bytes), plus under 1 byte
//     for inner nodes.
//
// Add the member string itself (16 bytes for 9 to 16 bytes of member) and a
// 1,000,000-member set with members "member:N" takes 75 heap bytes a member
// with random scores and 70 with ascending ones (BenchmarkMemoryPerMember),
// about 80 bytes of RSS. redis-server 7.0.15 on the same data: 110 bytes of
// used_memory and 117 of RSS a member.
//
// Why this shape rather than the obvious ones:
//
//   - A skip list allocates a node per member with a tower of pointers: tens
//     of millions of small pointerful objects for the garbage collector to
//     walk, which Section 3 of ARCHITECTURE.md asks us to avoid.
//   - A B+tree of (score, member string) entries beside a
//     map[string]float64 was the first version here and measured 114 bytes
//     a member: Go's map costs 40-56 bytes an entry (24-byte slots at
//     45-87% load), leaves repeat each 16-byte string header, and objects
//     over 512 bytes that contain pointers carry an 8-byte header that
//     pushes a 1536-byte leaf into the 1792-byte size class.
//   - Arena ids let the leaves and the index refer to a member in 4 bytes
//     and hold no pointers at all, so the collector never scans them: the
//     only pointer per member is its string in the arena.
//   - Leaves keep scores next to ids so binary searches compare scores in
//     place and visit the arena only to break score ties. Inner separators
//     are full (score, member) copies, not ids, because a separator may
//     outlive its member (stale separators still bound correctly) while
//     the id gets reused.
//
// Costs, with N members and M entries returned or removed: Score O(1);
// Add, Delete, Rank and ByRank O(log N); counts by score or lex O(log N);
// ranges O(log N + M), offsets skipped by rank in O(log N), not walked;
// range deletions O(log N + M) (one descent per leaf's worth); PopMin and
// PopMax O(log N + M). Freed arena ids are reused; when three quarters are
// free the arena, index and tree are rebuilt (O(1) amortized per deletion)
// so a drained set gives its memory back.
//
// Range queries answer with a Span (SpanByRank, SpanByScore, SpanByLex):
// the number of entries first, then a walk, so that a reply can write its
// length and stream the entries with nothing allocated in between. With a
// LIMIT count, a span descends once to where its walk starts and counts
// its window by scanning the leaves from there (at most count entries);
// without one it counts the range by rank at both ends. RangeByScore and
// the other iterators are walks of the same spans.
//
// Lexicographic ranges (RangeByLex and friends) assume, as Redis documents,
// that all members share one score; otherwise they return some well-defined
// but unspecified slice of the set.
//
// A Set is not safe for concurrent use; the keyspace serializes access. An
// iterator must not be used across a modification of its set.
package zset
