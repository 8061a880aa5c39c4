package commands_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Random command streams (fixed seeds) sent to Abacus and redis-server,
// every reply byte-compared, and the dirty and hit counters compared
// every 100 commands.

const bmStreamLen = 3000

// bmRunStream sends n commands from gen to both servers, passing each
// command and its reply to seen if it is not nil.
func bmRunStream(t *testing.T, d *servertest.Diff, n int, gen func() []string, seen func(args []string, reply string)) {
	t.Helper()
	a0, r0 := bmSnap(t, d)
	for i := 0; i < n; i++ {
		args := gen()
		reply := d.Do(args...)
		if seen != nil {
			seen(args, reply)
		}
		if i%100 == 99 {
			bmCheckDeltas(t, d, "stream up to command "+strconv.Itoa(i), a0, r0)
			a0, r0 = bmSnap(t, d)
			if t.Failed() {
				t.FailNow() // one divergence cascades; stop at the first
			}
		}
	}
}

// bmGen generates bitmap commands over a few keys.
type bmGen struct {
	r    *rand.Rand
	keys []string
}

func (g *bmGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *bmGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// index returns a range index: mostly small, either sign, sometimes huge.
func (g *bmGen) index() string {
	switch g.r.IntN(10) {
	case 0:
		return g.pick("9223372036854775807", "-9223372036854775808", "100000", "-100000")
	case 1, 2:
		return strconv.Itoa(-g.r.IntN(40))
	default:
		return strconv.Itoa(g.r.IntN(40))
	}
}

// offset returns a bit offset: mostly inside a few hundred bytes.
func (g *bmGen) offset() string {
	switch g.r.IntN(20) {
	case 0:
		return strconv.Itoa(g.r.IntN(40000))
	case 1:
		return g.pick("-1", "x", "4294967296")
	default:
		return strconv.Itoa(g.r.IntN(400))
	}
}

func (g *bmGen) value() string {
	switch g.r.IntN(5) {
	case 0:
		return strconv.FormatInt(g.r.Int64N(2000000)-1000000, 10)
	case 1:
		return ""
	default:
		b := make([]byte, g.r.IntN(30))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return string(b)
	}
}

func (g *bmGen) fieldType() string {
	if g.r.IntN(30) == 0 {
		return g.pick("u64", "i65", "u0", "x8")
	}
	if g.r.IntN(2) == 0 {
		return "i" + strconv.Itoa(1+g.r.IntN(64))
	}
	return "u" + strconv.Itoa(1+g.r.IntN(63))
}

func (g *bmGen) fieldValue() string {
	switch g.r.IntN(4) {
	case 0:
		return strconv.FormatInt(int64(g.r.Uint64()), 10)
	case 1:
		return strconv.Itoa(g.r.IntN(600) - 300)
	default:
		return strconv.FormatInt(g.r.Int64N(1<<uint(g.r.IntN(62)+1))-(1<<uint(g.r.IntN(62))), 10)
	}
}

func (g *bmGen) next() []string {
	k := g.key()
	switch n := g.r.IntN(100); {
	case n < 20:
		v := strconv.Itoa(g.r.IntN(2))
		if g.r.IntN(40) == 0 {
			v = "2"
		}
		return []string{"SETBIT", k, g.offset(), v}
	case n < 30:
		return []string{"GETBIT", k, g.offset()}
	case n < 42:
		args := []string{"BITCOUNT", k}
		switch g.r.IntN(4) {
		case 0:
		case 1:
			args = append(args, g.index(), g.index())
		default:
			args = append(args, g.index(), g.index(), g.pick("BIT", "BYTE", "bit", "byte"))
		}
		return args
	case n < 54:
		args := []string{"BITPOS", k, strconv.Itoa(g.r.IntN(2))}
		switch g.r.IntN(5) {
		case 0:
		case 1:
			args = append(args, g.index())
		case 2:
			args = append(args, g.index(), g.index())
		default:
			args = append(args, g.index(), g.index(), g.pick("BIT", "BYTE"))
		}
		return args
	case n < 62:
		op := g.pick("AND", "OR", "XOR", "NOT")
		args := []string{"BITOP", op, g.key()}
		srcs := 1
		if op != "NOT" {
			srcs = 1 + g.r.IntN(3)
		}
		for i := 0; i < srcs; i++ {
			args = append(args, g.key())
		}
		return args
	case n < 74:
		args := []string{"BITFIELD", k}
		for i := g.r.IntN(4); i >= 0; i-- {
			if g.r.IntN(4) == 0 {
				args = append(args, "OVERFLOW", g.pick("WRAP", "SAT", "FAIL"))
			}
			typ := g.fieldType()
			off := g.offset()
			if g.r.IntN(4) == 0 {
				off = "#" + strconv.Itoa(g.r.IntN(20))
			}
			switch g.r.IntN(3) {
			case 0:
				args = append(args, "GET", typ, off)
			case 1:
				args = append(args, "SET", typ, off, g.fieldValue())
			default:
				args = append(args, "INCRBY", typ, off, g.fieldValue())
			}
		}
		return args
	case n < 77:
		return []string{"BITFIELD_RO", k, "GET", g.fieldType(), g.offset()}
	case n < 85:
		return []string{"GET", k}
	case n < 88:
		return []string{"STRLEN", k}
	case n < 91:
		return []string{"OBJECT", "ENCODING", k}
	case n < 98:
		return []string{"SET", k, g.value()}
	default:
		return []string{"DEL", k}
	}
}

func TestBitmapsDiffStream(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			d, _ := bmDiff(t)
			g := &bmGen{r: rand.New(rand.NewPCG(seed, 0xb17)), keys: []string{"a", "b", "c", "n"}}
			bmRunStream(t, d, bmStreamLen, g.next, nil)
			for _, k := range g.keys {
				d.Do("GET", k)
			}
		})
	}
}

// hllGen generates HyperLogLog commands over a few keys, with element
// batches large enough that values go dense during the stream.
type hllGen struct {
	r    *rand.Rand
	keys []string
}

func (g *hllGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *hllGen) next() []string {
	k := g.key()
	switch n := g.r.IntN(100); {
	case n < 45:
		args := []string{"PFADD", k}
		count := g.r.IntN(8)
		if g.r.IntN(10) == 0 {
			count = 50 + g.r.IntN(400)
		}
		for i := 0; i < count; i++ {
			args = append(args, "el:"+strconv.Itoa(g.r.IntN(30000)))
		}
		return args
	case n < 65:
		args := []string{"PFCOUNT", k}
		for i := g.r.IntN(3); i > 0 && g.r.IntN(2) == 0; i-- {
			args = append(args, g.key())
		}
		return args
	case n < 75:
		args := []string{"PFMERGE", k}
		for i := g.r.IntN(3); i > 0; i-- {
			args = append(args, g.key())
		}
		return args
	case n < 93:
		return []string{"GET", k}
	case n < 98:
		return []string{"OBJECT", "ENCODING", k}
	case g.r.IntN(3) == 0:
		return []string{"SET", k, strings.Repeat("x", g.r.IntN(20))}
	default:
		return []string{"DEL", k}
	}
}

func TestHLLDiffStream(t *testing.T) {
	for _, tc := range []struct {
		seed   uint64
		sparse string // hll-sparse-max-bytes
	}{{1, "3000"}, {2, "3000"}, {3, "400"}} {
		t.Run("seed"+strconv.FormatUint(tc.seed, 10), func(t *testing.T) {
			d, _ := bmDiff(t)
			d.Do("CONFIG", "SET", "hll-sparse-max-bytes", tc.sparse)
			g := &hllGen{r: rand.New(rand.NewPCG(tc.seed, 0x4811)), keys: []string{"h1", "h2", "h3", "h4"}}
			dense := 0 // GET replies holding a dense value
			bmRunStream(t, d, bmStreamLen, g.next, func(args []string, reply string) {
				if args[0] == "GET" && len(reply) > 12000 {
					dense++
				}
			})
			for _, k := range g.keys {
				d.Do("GET", k)
			}
			t.Logf("%d GETs of dense values", dense)
			if dense < 10 {
				t.Errorf("only %d GETs saw a dense value: the stream does not exercise the dense encoding", dense)
			}
			d.Do("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
		})
	}
}

// TestBitmapsDiffUniqueUsers is the "unique users per day" recipe: one
// bitmap per day with a bit per user id, BITCOUNT for each day's uniques,
// BITOP OR for the users seen on any day and AND for those seen every day;
// and the same ids in one HyperLogLog per day, counted alone, together
// and merged. Everything is compared with redis-server, and the estimates
// with the exact counts.
func TestBitmapsDiffUniqueUsers(t *testing.T) {
	d, _ := bmDiff(t)
	r := rand.New(rand.NewPCG(2024, 7))
	days := []string{"2024-06-01", "2024-06-02", "2024-06-03", "2024-06-04", "2024-06-05"}
	const users = 20000
	// A core of regular users shows up every day, others now and then.
	core := make([]int, 300)
	for i := range core {
		core[i] = r.IntN(users)
	}
	for _, day := range days {
		ids := append([]int(nil), core...)
		for i := 0; i < 1200; i++ {
			ids = append(ids, r.IntN(users))
		}
		for _, id := range ids {
			uid := strconv.Itoa(id)
			d.Do("SETBIT", "users:"+day, uid, "1")
			d.Do("PFADD", "hll:"+day, "user:"+uid)
		}
	}
	exact := map[string]int64{}
	for _, day := range days {
		exact[day] = bmInt(t, d.Do("BITCOUNT", "users:"+day))
		est := bmInt(t, d.Do("PFCOUNT", "hll:"+day))
		if diff := est - exact[day]; diff*50 > exact[day] || -diff*50 > exact[day] {
			t.Errorf("%s: PFCOUNT %d, exact %d: off by more than 2%%", day, est, exact[day])
		}
		d.Do("GET", "users:"+day)
		d.Do("GET", "hll:"+day)
	}
	bitKeys := make([]string, len(days))
	hllKeys := make([]string, len(days))
	for i, day := range days {
		bitKeys[i] = "users:" + day
		hllKeys[i] = "hll:" + day
	}
	d.Do(append([]string{"BITOP", "OR", "users:any"}, bitKeys...)...)
	d.Do(append([]string{"BITOP", "AND", "users:every"}, bitKeys...)...)
	d.Do(append([]string{"BITOP", "AND", "users:first-two"}, bitKeys[:2]...)...)
	anyDay := bmInt(t, d.Do("BITCOUNT", "users:any"))
	everyDay := bmInt(t, d.Do("BITCOUNT", "users:every"))
	d.Do("BITCOUNT", "users:first-two")
	d.Do("GET", "users:any")
	d.Do("GET", "users:every")
	if everyDay < int64(len(bmUnique(core))) || everyDay > anyDay {
		t.Errorf("every-day users %d, any-day %d, core %d", everyDay, anyDay, len(bmUnique(core)))
	}
	union := bmInt(t, d.Do(append([]string{"PFCOUNT"}, hllKeys...)...))
	if diff := union - anyDay; diff*50 > anyDay || -diff*50 > anyDay {
		t.Errorf("PFCOUNT of all days %d, exact %d", union, anyDay)
	}
	d.Do(append([]string{"PFMERGE", "hll:week"}, hllKeys...)...)
	if got := bmInt(t, d.Do("PFCOUNT", "hll:week")); got != union {
		t.Errorf("PFCOUNT after PFMERGE %d, PFCOUNT of the union %d", got, union)
	}
	d.Do("GET", "hll:week")
	// A user's first active day: BITPOS over each day in order.
	for _, day := range days {
		d.Do("BITPOS", "users:"+day, "1")
		d.Do("BITPOS", "users:"+day, "0")
	}
}

func bmInt(t *testing.T, reply string) int64 {
	t.Helper()
	s, ok := strings.CutPrefix(reply, ":")
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "\r\n"), 10, 64)
	if !ok || err != nil {
		t.Fatalf("not an integer reply: %q", reply)
	}
	return n
}

func bmUnique(s []int) map[int]bool {
	m := map[int]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}
