package stream

import (
	"fmt"
	"math/rand"
	"testing"
)

type modelEntry struct {
	id ID
	fv []string
}

func collect(s *Stream, start, end ID, rev bool) []modelEntry {
	var out []modelEntry
	it := s.Range(start, end, rev)
	for it.Next() {
		e := modelEntry{id: it.ID}
		for _, b := range it.FV {
			e.fv = append(e.fv, string(b))
		}
		out = append(out, e)
	}
	return out
}

// TestModel checks appends, deletes, trims and ranges against a sorted
// slice, with small node limits so nodes split and empty often.
func TestModel(t *testing.T) {
	for seed := int64(0); seed < 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		lim := Limits{NodeMaxBytes: int64(50 + r.Intn(300)), NodeMaxEntries: int64(1 + r.Intn(8))}
		s := New()
		var m []modelEntry
		next := ID{1, 0}
		for op := 0; op < 2000; op++ {
			switch k := r.Intn(10); {
			case k < 6:
				next = ID{next.Ms + uint64(r.Intn(3)), uint64(r.Intn(4))}
				if !s.CanAppend(next) {
					next, _ = s.LastID.Next()
				}
				var fv [][]byte
				var fs []string
				nf := 1 + r.Intn(3)
				same := r.Intn(2) == 0
				for j := 0; j < nf; j++ {
					f := fmt.Sprintf("f%d", j)
					if !same {
						f = fmt.Sprintf("g%d", r.Intn(5))
					}
					v := fmt.Sprint(r.Intn(1000) - 100)
					fv = append(fv, []byte(f), []byte(v))
					fs = append(fs, f, v)
				}
				s.Append(next, fv, lim)
				m = append(m, modelEntry{next, fs})
			case k < 8:
				if len(m) == 0 {
					continue
				}
				i := r.Intn(len(m))
				if !s.Delete(m[i].id) {
					t.Fatalf("seed %d: delete %v failed", seed, m[i].id)
				}
				m = append(m[:i], m[i+1:]...)
			case k < 9:
				if len(m) == 0 {
					continue
				}
				maxlen := int64(r.Intn(len(m) + 1))
				s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: maxlen})
				m = m[int64(len(m))-maxlen:]
			default:
				if len(m) == 0 {
					continue
				}
				min := m[r.Intn(len(m))].id
				s.Trim(TrimArgs{Strategy: TrimMinID, MinID: min})
				for len(m) > 0 && m[0].id.Less(min) {
					m = m[1:]
				}
			}
			if s.Len() != int64(len(m)) {
				t.Fatalf("seed %d op %d: len %d want %d", seed, op, s.Len(), len(m))
			}
			if op%50 == 0 && len(m) > 0 {
				a, b := m[r.Intn(len(m))].id, m[r.Intn(len(m))].id
				if b.Less(a) {
					a, b = b, a
				}
				var want []modelEntry
				for _, e := range m {
					if !e.id.Less(a) && !b.Less(e.id) {
						want = append(want, e)
					}
				}
				got := collect(s, a, b, false)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d op %d: range\n got %v\nwant %v", seed, op, got, want)
				}
				rg := collect(s, a, b, true)
				for i, j := 0, len(rg)-1; i < j; i, j = i+1, j-1 {
					rg[i], rg[j] = rg[j], rg[i]
				}
				if fmt.Sprint(rg) != fmt.Sprint(want) {
					t.Fatalf("seed %d op %d: revrange\n got %v\nwant %v", seed, op, rg, want)
				}
				c := s.Clone()
				if fmt.Sprint(collect(c, ID{}, MaxID, false)) != fmt.Sprint(collect(s, ID{}, MaxID, false)) {
					t.Fatalf("clone differs")
				}
			}
		}
	}
}

func TestGroups(t *testing.T) {
	s := New()
	g := s.CreateGroup([]byte("g"), ID{}, 0)
	if s.CreateGroup([]byte("g"), ID{}, 0) != nil {
		t.Fatal("duplicate group")
	}
	a := g.CreateConsumer([]byte("a"), 1)
	b := g.CreateConsumer([]byte("b"), 1)
	for i := uint64(5); i > 0; i-- {
		g.AddPending(ID{i, 0}, a, 10, 1)
	}
	p := g.Pending(ID{3, 0})
	g.Assign(p, b)
	if a.PendingLen() != 4 || b.PendingLen() != 1 || g.PendingLen() != 5 {
		t.Fatal("counts")
	}
	c := s.Clone()
	if !g.Ack(ID{3, 0}) || g.Ack(ID{3, 0}) || b.PendingLen() != 0 {
		t.Fatal("ack")
	}
	if n := g.DeleteConsumer([]byte("a")); n != 4 || g.PendingLen() != 0 {
		t.Fatal("delconsumer", n)
	}
	cg := c.Group([]byte("g"))
	if cg.PendingLen() != 5 || cg.Consumer([]byte("b")).PendingLen() != 1 {
		t.Fatal("clone shares state")
	}
}
