package acl

import "github.com/abacusdb/abacus/internal/glob"

// keyIndex sorts a selector's key patterns by the first byte of their
// literal prefix, so that a key is compared only with the patterns that
// can match it: those whose prefix starts with the key's first byte, and
// those without a prefix ("*", "?x", "[ab]*"). A user with patterns for
// several applications ("ts:*", "dash:*", "ops:*") then tests one or two
// of them per key instead of all. It is built when the patterns change
// and only read by the checks, so checks running without the server
// lock (a busy script's) see a complete index.
type keyIndex struct {
	// byFirst[start[b]:start[b+1]] are the patterns whose prefix starts
	// with byte b.
	start   [257]uint16
	byFirst []keyPattern
	wild    []keyPattern // no literal prefix: every key is tested
}

// indexMin is the number of patterns from which the index pays for its
// lookup; fewer are walked in order.
const indexMin = 4

func newKeyIndex(keys []keyPattern) *keyIndex {
	if len(keys) < indexMin || len(keys) > 0xffff {
		return nil
	}
	x := &keyIndex{}
	var count [256]int
	for i := range keys {
		if p := keys[i].prefix; p != "" {
			count[p[0]]++
		} else {
			x.wild = append(x.wild, keys[i])
		}
	}
	for b := 0; b < 256; b++ {
		x.start[b+1] = x.start[b] + uint16(count[b])
	}
	x.byFirst = make([]keyPattern, int(x.start[256]))
	next := x.start
	for i := range keys {
		if p := keys[i].prefix; p != "" {
			x.byFirst[next[p[0]]] = keys[i]
			next[p[0]]++
		}
	}
	return x
}

// allowed reports whether one of the patterns the key can match has the
// needed permissions and matches it.
func (x *keyIndex) allowed(key []byte, need int) bool {
	if len(key) > 0 {
		c := key[0]
		for i := x.start[c]; i < x.start[int(c)+1]; i++ {
			// matches, with its usual case ("app:*") inline.
			p := &x.byFirst[i]
			if p.perm&need == need && len(key) >= len(p.prefix) && string(key[:len(p.prefix)]) == p.prefix &&
				(p.prefixOnly || glob.Match(p.pattern, key, false)) {
				return true
			}
		}
	}
	for i := range x.wild {
		if x.wild[i].matches(key, need) {
			return true
		}
	}
	return false
}
