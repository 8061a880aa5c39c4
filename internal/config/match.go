package config

import (
	"strings"

	"github.com/abacusdb/abacus/internal/glob"
)

// HasGlob reports whether a CONFIG GET argument is a pattern rather than a
// name (Redis looks for any of "[*?").
func HasGlob(p string) bool { return strings.ContainsAny(p, "[*?") }

// Pair is one CONFIG GET result: the name as matched and its value.
type Pair struct{ Name, Value string }

// Matching returns CONFIG GET's answer for several names and patterns: a
// plain name (any case, or an alias) is answered under the name as given;
// a pattern matches every name and alias case-insensitively; each name is
// reported once, in table order within a pattern.
func (c *Config) Matching(args []string) []Pair {
	var out []Pair
	seen := map[string]bool{}
	add := func(name string, p *Param) {
		if seen[name] {
			return
		}
		seen[name] = true
		out = append(out, Pair{name, c.Get(p)})
	}
	for _, a := range args {
		if !HasGlob(a) {
			if p, ok := Lookup(a); ok {
				add(a, p)
			}
			continue
		}
		for _, p := range table {
			for _, n := range []string{p.Name, p.Alias} {
				if n != "" && glob.Match(a, n, true) {
					add(n, p)
				}
			}
		}
	}
	return out
}
