package commands_test

// Helpers shared by the strings, keys and expire tests. Their names start
// with "sk" so they cannot collide with other families' test helpers in
// this package.

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// skFuzzy lists the commands whose replies depend on the moment they run
// (TTLs count down): the two servers may differ by this much.
var skFuzzy = map[string]int64{"ttl": 1, "pttl": 1000, "expiretime": 1, "pexpiretime": 1000}

// skDo sends a command to both servers and compares the replies: byte for
// byte, except that TTL readings may differ by the clock drift between the
// two servers, and KEYS replies are compared as sets.
func skDo(t testing.TB, d *servertest.Diff, args ...string) string {
	t.Helper()
	name := strings.ToLower(args[0])
	tol, fuzzy := skFuzzy[name]
	if name == "object" && len(args) > 1 && strings.EqualFold(args[1], "idletime") {
		// Whole seconds of each server's clock (redis-server's cached
		// at hz): a second boundary between the key's last access and
		// the reading can fall on one server only.
		tol, fuzzy = 1, true
	}
	if !fuzzy && name != "keys" {
		return d.Do(args...)
	}
	req := servertest.Encode(args...)
	d.A.Write(req)
	d.R.Write(req)
	a, r := d.A.Read(), d.R.Read()
	if a == r {
		return a
	}
	if name == "keys" && strings.HasPrefix(a, "*") && strings.HasPrefix(r, "*") {
		as, rs := servertest.MustStrings(t, a), servertest.MustStrings(t, r)
		slices.Sort(as)
		slices.Sort(rs)
		if slices.Equal(as, rs) {
			return a
		}
	}
	if fuzzy && strings.HasPrefix(a, ":") && strings.HasPrefix(r, ":") {
		av, _ := strconv.ParseInt(strings.TrimSpace(a[1:]), 10, 64)
		rv, _ := strconv.ParseInt(strings.TrimSpace(r[1:]), 10, 64)
		if av >= 0 && rv >= 0 && av-rv <= tol && rv-av <= tol {
			return a
		}
	}
	t.Errorf("%q\n abacus: %q\n  redis: %q", args, a, r)
	return a
}

// skLines runs commands written one per line (split on spaces; "#"
// starts a comment line) through skDo.
func skLines(t testing.TB, d *servertest.Diff, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		skDo(t, d, strings.Fields(line)...)
	}
}

// skScanAll runs a full SCAN iteration (args after the cursor) on one
// connection and returns the keys seen, sorted and deduplicated.
func skScanAll(t testing.TB, c *servertest.Conn, args ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	cursor := "0"
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("SCAN does not terminate")
		}
		v, err := servertest.Parse(c.Do(append([]string{"SCAN", cursor}, args...)...))
		if err != nil || v.Kind != '*' || len(v.Items) != 2 {
			t.Fatalf("bad SCAN reply %+v %v", v, err)
		}
		for _, k := range v.Items[1].Items {
			seen[k.Str] = true
		}
		cursor = v.Items[0].Str
		if cursor == "0" {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// skNonString stores a list at key in database db on both servers, with
// RPUSH.
func skNonString(t testing.TB, d *servertest.Diff, inst *servertest.Instance, db int, key string) {
	t.Helper()
	req := []string{"RPUSH", key, "a", "b"}
	for name, c := range map[string]*servertest.Conn{"redis": servertest.Dial(t, d.R.Addr), "abacus": inst.Raw(t)} {
		c.Do("SELECT", strconv.Itoa(db))
		if got := c.Do(req...); !strings.HasPrefix(got, ":") {
			t.Fatalf("RPUSH on %s: %q", name, got)
		}
	}
}

// skGen draws the arguments of random command streams over a small key
// space, so that commands keep meeting each other's keys.
type skGen struct {
	r    *rand.Rand
	keys []string
}

func newSkGen(seed uint64, nkeys int) *skGen {
	g := &skGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := 0; i < nkeys; i++ {
		g.keys = append(g.keys, "k"+strconv.Itoa(i))
	}
	return g
}

func (g *skGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *skGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *skGen) intn(n int) string { return strconv.Itoa(g.r.IntN(n)) }

// value returns a string value: integers (small, shared-range, large,
// edge), floats, short and long text, binary.
func (g *skGen) value() string {
	switch g.r.IntN(12) {
	case 0:
		return strconv.Itoa(g.r.IntN(20) - 5)
	case 1:
		return strconv.Itoa(9995 + g.r.IntN(10))
	case 2:
		return g.pick("9223372036854775807", "-9223372036854775808", "9223372036854775806", "-9223372036854775807")
	case 3:
		return g.pick("1.5", "-0.25", "3e2", "0.1", "1e-3", "007", "+5", " 5", "5 ", "0x10", "")
	case 4:
		return strings.Repeat("x", 40+g.r.IntN(10)) // around the embstr limit
	case 5:
		return "bin\x00\r\n\xff" + g.intn(10)
	default:
		return g.pick("a", "b", "hello", "world", "ohmytext", "mynewtext", "abcdef") + g.intn(3)
	}
}

// farExpireAt returns an absolute time, in seconds or ms, long after any
// test finishes, so TTL replies are stable.
func (g *skGen) farExpireAt(ms bool) string {
	s := int64(4102444800 + g.r.IntN(1000)) // 2100-01-01 and a bit
	if ms {
		return strconv.FormatInt(s*1000+int64(g.r.IntN(1000)), 10)
	}
	return strconv.FormatInt(s, 10)
}

// skCounters are the INFO fields that count what commands do: changes
// (Redis's server.dirty, what Ctx.Dirty counts), keyspace hits and misses,
// expired keys.
var skCounters = []string{"rdb_changes_since_last_save", "keyspace_hits", "keyspace_misses", "expired_keys"}

func skReadCounters(t testing.TB, c *servertest.Conn) []int64 {
	t.Helper()
	v, err := servertest.Parse(c.Do("INFO", "all"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(skCounters))
	found := 0
	for _, line := range strings.Split(v.Str, "\r\n") {
		for i, name := range skCounters {
			if n, ok := strings.CutPrefix(line, name+":"); ok {
				d, err := strconv.ParseInt(n, 10, 64)
				if err != nil {
					t.Fatalf("bad INFO line %q", line)
				}
				out[i] = d
				found++
			}
		}
	}
	if found != len(skCounters) {
		t.Fatalf("INFO lacks some of %q", skCounters)
	}
	return out
}

// skDirtyCheck compares how much each server's counters moved since the
// last call: Abacus must count changes, hits and misses as Redis does.
type skDirtyCheck struct{ a, r []int64 }

func newSkDirtyCheck(t testing.TB, d *servertest.Diff) *skDirtyCheck {
	return &skDirtyCheck{a: skReadCounters(t, d.A), r: skReadCounters(t, d.R)}
}

func (c *skDirtyCheck) check(t testing.TB, d *servertest.Diff, what string) {
	t.Helper()
	a, r := skReadCounters(t, d.A), skReadCounters(t, d.R)
	for i, name := range skCounters {
		if a[i]-c.a[i] != r[i]-c.r[i] {
			t.Errorf("%s: %s moved by %d on abacus, %d on redis", what, name, a[i]-c.a[i], r[i]-c.r[i])
		}
	}
	c.a, c.r = a, r
}
