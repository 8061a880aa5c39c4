package ts

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// model is the naive series: a map of samples.
type model map[int64]float64

func (m model) sorted(from, to int64) []Sample {
	var out []Sample
	for t, v := range m {
		if t >= from && t <= to {
			out = append(out, Sample{t, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

func (m model) maxT() int64 {
	mx := int64(math.MinInt64)
	for t := range m {
		mx = max(mx, t)
	}
	return mx
}

func sameSamples(t *testing.T, ctx string, got, want []Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, want %d\ngot  %v\nwant %v", ctx, len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if got[i].T != want[i].T || math.Float64bits(got[i].V) != math.Float64bits(want[i].V) {
			t.Fatalf("%s: sample %d is %v, want %v", ctx, i, got[i], want[i])
		}
	}
}

func head(s []Sample) []Sample {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}

func all() *RangeOpts { return &RangeOpts{From: math.MinInt64, To: math.MaxInt64, Count: -1} }

func TestSeriesAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		s := New()
		s.ChunkSize = 48 + 8*r.IntN(40)
		s.Uncompressed = seed%4 == 3
		m := model{}
		for op := 0; op < 3000; op++ {
			switch k := r.IntN(20); {
			case k < 15: // add: mostly appends, some in the past, some on existing timestamps
				var ts int64
				switch {
				case len(m) == 0 || k < 9:
					ts = m.maxT() + 1 + int64(r.IntN(20))
					if len(m) == 0 {
						ts = int64(r.IntN(100))
					}
				default:
					ts = int64(r.IntN(int(m.maxT() + 2)))
				}
				v := float64(r.IntN(50)) - 25
				if r.IntN(30) == 0 {
					v = math.NaN()
				}
				p := Policy(1 + r.IntN(6))
				res, _, err := s.Add(ts, v, p)
				old, exists := m[ts]
				switch {
				case !exists:
					if err != nil || res == Updated {
						t.Fatalf("seed %d op %d: add new %d: %v %v", seed, op, ts, res, err)
					}
					m[ts] = v
				case p == PolicyBlock:
					if !errors.Is(err, ErrBlocked) {
						t.Fatalf("seed %d op %d: BLOCK on duplicate gave %v", seed, op, err)
					}
				default:
					if err != nil {
						t.Fatalf("seed %d op %d: %v", seed, op, err)
					}
					switch p {
					case PolicyLast:
						m[ts] = v
					case PolicyMin:
						if v < old {
							m[ts] = v
						}
					case PolicyMax:
						if v > old {
							m[ts] = v
						}
					case PolicySum:
						m[ts] = old + v
					}
				}
			default:
				a := int64(r.IntN(int(max(m.maxT(), 1)) + 5))
				b := a + int64(r.IntN(40))
				n, _ := s.DeleteRange(a, b)
				want := 0
				for ts := range m {
					if ts >= a && ts <= b {
						delete(m, ts)
						want++
					}
				}
				if n != want {
					t.Fatalf("seed %d op %d: deleted %d, want %d", seed, op, n, want)
				}
			}
			if op%100 == 0 || op == 2999 {
				sameSamples(t, "range", s.Range(all()), m.sorted(math.MinInt64, math.MaxInt64))
				if s.Len() != len(m) {
					t.Fatalf("seed %d op %d: Len %d want %d", seed, op, s.Len(), len(m))
				}
				if l, ok := s.Last(); ok != (len(m) > 0) || (ok && (l.T != m.maxT() || math.Float64bits(l.V) != math.Float64bits(m[l.T]))) {
					t.Fatalf("seed %d op %d: Last %v %v", seed, op, l, ok)
				}
				for _, c := range s.chunks {
					if c.bytes() > s.ChunkSize {
						t.Fatalf("chunk over size")
					}
				}
			}
		}
		// reverse ranges with COUNT and filters against the model
		for q := 0; q < 50; q++ {
			a := int64(r.IntN(int(m.maxT() + 10)))
			b := a + int64(r.IntN(500))
			o := &RangeOpts{From: a, To: b, Count: -1, Reverse: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				o.Count = r.IntN(30)
			}
			if r.IntN(3) == 0 {
				o.HasValue, o.MinV, o.MaxV = true, float64(r.IntN(20)-15), float64(r.IntN(20))
			}
			want := filterModel(m.sorted(a, b), o)
			sameSamples(t, "range opts", s.Range(o), want)
		}
	}
}

func filterModel(in []Sample, o *RangeOpts) []Sample {
	var out []Sample
	for _, sm := range in {
		if o.keep(sm.T, sm.V) {
			out = append(out, sm)
		}
	}
	return o.finish(out)
}

func TestRetention(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for round := 0; round < 20; round++ {
		s := New()
		s.ChunkSize = 64
		s.Retention = int64(1 + r.IntN(200))
		m := model{}
		ts := int64(1000)
		for i := 0; i < 2000; i++ {
			t0 := ts
			if r.IntN(4) == 0 {
				t0 = ts - int64(r.IntN(300)) // in the past, maybe beyond retention
			} else {
				ts += int64(1 + r.IntN(10))
				t0 = ts
			}
			_, _, err := s.Add(t0, float64(i), PolicyLast)
			if mx := m.maxT(); len(m) > 0 && t0 < mx-s.Retention {
				if !errors.Is(err, ErrOld) {
					t.Fatalf("round %d: add at %d (max %d, retention %d) gave %v", round, t0, mx, s.Retention, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			m[t0] = float64(i)
		}
		lo := m.maxT() - s.Retention
		sameSamples(t, "retained", s.Range(all()), m.sorted(lo, math.MaxInt64))
		if s.First() != m.sorted(lo, math.MaxInt64)[0].T {
			t.Fatalf("First %d", s.First())
		}
		if s.Chunks() > int(s.Retention)/2+3 {
			t.Fatalf("round %d: %d chunks kept for retention %d", round, s.Chunks(), s.Retention)
		}
	}
}

func TestIgnore(t *testing.T) {
	s := New()
	s.IgnoreMaxTime, s.IgnoreMaxVal = 10, 0.5
	add := func(ts int64, v float64, p Policy) AddResult {
		res, _, err := s.Add(ts, v, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if add(100, 1, PolicyLast) != Appended {
		t.Fatal("first sample")
	}
	if add(105, 1.4, PolicyLast) != Ignored {
		t.Fatal("close sample not ignored")
	}
	if add(111, 1.4, PolicyLast) != Appended {
		t.Fatal("sample past maxTimeDiff ignored")
	}
	if add(115, 2, PolicyLast) != Appended {
		t.Fatal("sample past maxValDiff ignored")
	}
	if add(116, 2, PolicyBlock) != Appended {
		t.Fatal("IGNORE applies only under LAST")
	}
	if add(50, 2, PolicyLast) != Inserted {
		t.Fatal("out-of-order sample ignored")
	}
	s.Source = "src"
	if add(117, 2, PolicyLast) != Appended {
		t.Fatal("IGNORE applies to a compaction")
	}
	if s.Len() != 6 {
		t.Fatalf("Len %d", s.Len())
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := New()
	for i := int64(0); i < 1000; i++ {
		s.Add(i, float64(i), PolicyLast)
	}
	c := s.Clone()
	s.Add(5, -1, PolicyLast)
	s.DeleteRange(100, 200)
	if got, _ := c.Get(5); got.V != 5 || c.Len() != 1000 {
		t.Fatalf("clone changed: %v %d", got, c.Len())
	}
}

// TestUpdateLatestInPlace rewrites the latest value again and again (the
// duplicate-at-latest path that skips re-encoding) and checks every value.
func TestUpdateLatestInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, raw := range []bool{false, true} {
		s := New()
		s.ChunkSize = 48
		s.Uncompressed = raw
		s.IgnoreMaxTime = -1 // no IGNORE filter (which keeps -0 against 0 under LAST)
		m := model{}
		ts := int64(0)
		for i := 0; i < 20000; i++ {
			if r.IntN(3) == 0 {
				ts += int64(1 + r.IntN(3))
			}
			v := math.Float64frombits(randBits(r, math.Float64bits(m[ts])))
			if math.IsNaN(v) {
				v = float64(i)
			}
			p := []Policy{PolicyLast, PolicySum, PolicyMax}[r.IntN(3)]
			if _, _, err := s.Add(ts, v, p); err != nil {
				t.Fatal(err)
			}
			old, ok := m[ts]
			switch {
			case !ok || p == PolicyLast:
				m[ts] = v
			case p == PolicySum:
				m[ts] = old + v
			case v > old:
				m[ts] = v
			}
		}
		sameSamples(t, "in place", s.Range(all()), m.sorted(math.MinInt64, math.MaxInt64))
		for _, c := range s.chunks {
			if c.bytes() > s.ChunkSize {
				t.Fatalf("chunk of %d bytes", c.bytes())
			}
		}
	}
}
