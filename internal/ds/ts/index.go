package ts

import (
	"errors"
	"slices"
	"strings"
)

// Matcher is one FILTER expression. A series matches when its value for
// Label ("" when it lacks the label) is in Values, or is not when Neg:
//
//	l=v  l=(a,b)  -> Values {v} / {a,b}
//	l!=v l!=(a,b) -> the same, negated
//	l=            -> Values {""}: the series lacks l
//	l!=           -> Values {""} negated: the series has l
type Matcher struct {
	Label  string
	Neg    bool
	Values []string
}

// Positive says whether the matcher selects series by a value they have
// (l=v or l=(a,b)); a filter needs at least one.
func (m *Matcher) Positive() bool {
	if m.Neg {
		return false
	}
	for _, v := range m.Values {
		if v != "" {
			return true
		}
	}
	return false
}

// Matches evaluates the matcher on a label set.
func (m *Matcher) Matches(labels []Label) bool {
	cur := ""
	for _, l := range labels {
		if l.Name == m.Label {
			cur = l.Value
			break
		}
	}
	in := false
	for _, v := range m.Values {
		if v == cur {
			in = true
			break
		}
	}
	return in != m.Neg
}

// ErrFilter is a filter expression that does not parse.
var ErrFilter = errors.New("bad filter")

// ParseMatcher reads one filter expression.
func ParseMatcher(s string) (Matcher, error) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return Matcher{}, ErrFilter
	}
	m := Matcher{Label: s[:i]}
	if s[i-1] == '!' {
		m.Neg = true
		m.Label = s[:i-1]
		if m.Label == "" {
			return Matcher{}, ErrFilter
		}
	}
	v := s[i+1:]
	if len(v) >= 2 && v[0] == '(' && v[len(v)-1] == ')' {
		for _, p := range strings.Split(v[1:len(v)-1], ",") {
			m.Values = append(m.Values, strings.TrimSpace(p))
		}
	} else {
		m.Values = []string{v}
	}
	return m, nil
}

// MatchAll says whether labels satisfy every matcher.
func MatchAll(ms []Matcher, labels []Label) bool {
	for i := range ms {
		if !ms[i].Matches(labels) {
			return false
		}
	}
	return true
}

// Index maps label=value pairs to the keys of the series that carry them.
type Index struct {
	m      map[string]map[string]map[string]struct{} // label -> value -> keys
	labels map[string][]Label                        // key -> labels
}

// NewIndex makes an empty index.
func NewIndex() *Index {
	return &Index{m: map[string]map[string]map[string]struct{}{}, labels: map[string][]Label{}}
}

// Len is the number of indexed keys.
func (x *Index) Len() int { return len(x.labels) }

// Set indexes key with labels, replacing what it had.
func (x *Index) Set(key string, labels []Label) {
	x.Remove(key)
	x.labels[key] = labels
	for _, l := range labels {
		vals := x.m[l.Name]
		if vals == nil {
			vals = map[string]map[string]struct{}{}
			x.m[l.Name] = vals
		}
		keys := vals[l.Value]
		if keys == nil {
			keys = map[string]struct{}{}
			vals[l.Value] = keys
		}
		keys[key] = struct{}{}
	}
}

// Remove forgets key.
func (x *Index) Remove(key string) {
	labels, ok := x.labels[key]
	if !ok {
		return
	}
	delete(x.labels, key)
	for _, l := range labels {
		vals := x.m[l.Name]
		delete(vals[l.Value], key)
		if len(vals[l.Value]) == 0 {
			delete(vals, l.Value)
		}
		if len(vals) == 0 {
			delete(x.m, l.Name)
		}
	}
}

// Has says whether key is indexed.
func (x *Index) Has(key string) bool {
	_, ok := x.labels[key]
	return ok
}

// Query returns the sorted keys whose labels satisfy every matcher. The
// candidates come from the positive matchers; the rest filter them.
//
// labelsOf, when not nil, gives a key's current labels, for an index
// that may lag behind what it indexes: each candidate is checked against
// them. With fix, a key that holds no series any more is forgotten and one
// whose labels changed is indexed again. An index kept exact (the server's
// label indexes) passes nil.
func (x *Index) Query(ms []Matcher, labelsOf func(key string) ([]Label, bool), fix bool) []string {
	// Candidates are a slice, not a set: a key carries one value per
	// label, so the first positive matcher's sets (one per distinct
	// value) are disjoint, and the later ones only filter.
	var cand []string
	first := true
	for i := range ms {
		m := &ms[i]
		if !m.Positive() {
			continue
		}
		sets := x.m[m.Label]
		if first {
			first = false
			for j, v := range m.Values {
				if slices.Contains(m.Values[:j], v) {
					continue
				}
				for k := range sets[v] {
					cand = append(cand, k)
				}
			}
			continue
		}
		kept := cand[:0]
		for _, k := range cand {
			for _, v := range m.Values {
				if _, ok := sets[v][k]; ok {
					kept = append(kept, k)
					break
				}
			}
		}
		cand = kept
	}
	var out []string
	for _, k := range cand {
		labels := x.labels[k]
		if labelsOf != nil {
			cur, ok := labelsOf(k)
			if !ok {
				if fix {
					x.Remove(k)
				}
				continue
			}
			if !SameLabels(cur, labels) {
				if fix {
					x.Set(k, cur)
				}
				labels = cur
			}
		}
		if MatchAll(ms, labels) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Labels returns the labels indexed for key.
func (x *Index) Labels(key string) ([]Label, bool) {
	l, ok := x.labels[key]
	return l, ok
}

// SameLabels says whether two label lists are equal, in order.
func SameLabels(a, b []Label) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
