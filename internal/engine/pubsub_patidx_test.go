package engine

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/glob"
)

// The literal-prefix index finds exactly the patterns a glob match of
// every pattern finds, for pattern sets below and above patIndexMin,
// with empty, shared and escaped prefixes.
func TestPatternIndexMatchesAll(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alpha := []string{"a", "b", ":", "*", "?", "[ab]", `\*`, "ab", "a:"}
	word := func(special bool) string {
		var b strings.Builder
		for n := rng.Intn(5); n > 0; n-- {
			w := alpha[rng.Intn(len(alpha))]
			if !special && strings.ContainsAny(w, `*?[\`) {
				w = "b"
			}
			b.WriteString(w)
		}
		return b.String()
	}
	for _, count := range []int{3, patIndexMin, 200} {
		seen := map[string]bool{}
		var np notifyPats
		for len(np.pats) < count {
			p := word(true)
			if !seen[p] {
				seen[p] = true
				np.pats = append(np.pats, p)
				np.lits = append(np.lits, literalPrefix(p))
			}
		}
		np.idx.build(np.lits)
		if (np.idx.byLit != nil) != (count >= patIndexMin) {
			t.Fatalf("%d patterns: index built %v", count, np.idx.byLit != nil)
		}
		matched := 0
		for k := 0; k < 2000; k++ {
			ch := word(false)
			if k%3 == 0 {
				ch = strings.ReplaceAll(word(true), `\`, "")
			}
			var got, want []string
			collect := func(p string) { got = append(got, p) }
			if k%2 == 0 {
				matching(&np, ch, collect)
			} else {
				matching(&np, []byte(ch), collect) // PUBLISH's argument
			}
			for _, p := range np.pats {
				if glob.Match(p, ch, false) {
					want = append(want, p)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%d patterns, channel %q: index %q, all %q", count, ch, got, want)
			}
			matched += len(got)
		}
		if matched < count {
			t.Errorf("%d patterns: only %d matches in all: the test does not exercise the index", count, matched)
		}
	}
}
