package commands_test

// Helpers of the hash family's tests. Their names start with "hh" so they
// cannot collide with other families' test helpers in this package.

import (
	"slices"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// hhDiff starts an Abacus instance and a differential pair with the shared
// redis-server, both with the default hash-max-listpack-* limits (restored
// on redis-server when the test ends, as the server is shared).
func hhDiff(t *testing.T, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	d, inst := servertest.StartDiff(t, opts...)
	hhLimits(t, d, "512", "64")
	t.Cleanup(func() { d.R.Do("CONFIG", "SET", "hash-max-listpack-entries", "512", "hash-max-listpack-value", "64") })
	return d, inst
}

// hhLimits sets hash-max-listpack-entries and -value on both servers.
func hhLimits(t testing.TB, d *servertest.Diff, entries, value string) {
	t.Helper()
	if r := d.Do("CONFIG", "SET", "hash-max-listpack-entries", entries, "hash-max-listpack-value", value); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET hash limits: %q", r)
	}
}

// hhUnordered lists the commands whose replies follow the table order in
// the hashtable encoding, which differs between the two servers.
var hhUnordered = map[string]bool{"hgetall": true, "hkeys": true, "hvals": true, "hrandfield": true}

// hhDo sends a command to both servers and compares the replies byte for
// byte. The one exception: a whole-hash reply of a hash in the hashtable
// encoding (as both servers report through OBJECT ENCODING, which is
// compared too) is compared as a multiset of its elements, or of its
// field-value pairs.
func hhDo(t testing.TB, d *servertest.Diff, args ...string) string {
	t.Helper()
	req := servertest.Encode(args...)
	d.A.Write(req)
	d.R.Write(req)
	a, r := d.A.Read(), d.R.Read()
	if a == r {
		return a
	}
	name := strings.ToLower(args[0])
	if hhUnordered[name] && len(args) >= 2 && d.Do("OBJECT", "ENCODING", args[1]) == "$9\r\nhashtable\r\n" {
		pairs := name == "hgetall" || len(args) == 4
		if hhSameElements(t, a, r, pairs) {
			return a
		}
	}
	t.Errorf("%s\n abacus: %.300q\n  redis: %.300q", strings.Join(args, " "), a, r)
	return a
}

// hhSameElements reports whether two aggregate replies have the same type,
// length and elements in any order; with pairs, elements are taken two by
// two (field and value), or as the two-element arrays of RESP3.
func hhSameElements(t testing.TB, a, r string, pairs bool) bool {
	t.Helper()
	va, err1 := servertest.Parse(a)
	vr, err2 := servertest.Parse(r)
	if err1 != nil || err2 != nil || va.Kind != vr.Kind || len(va.Items) != len(vr.Items) {
		return false
	}
	return slices.Equal(hhElements(va, pairs), hhElements(vr, pairs))
}

func hhElements(v servertest.Reply, pairs bool) []string {
	var out []string
	for i := 0; i < len(v.Items); i++ {
		it := v.Items[i]
		switch {
		case len(it.Items) == 2:
			out = append(out, it.Items[0].Str+"\x00"+it.Items[1].Str)
		case pairs && i+1 < len(v.Items):
			out = append(out, it.Str+"\x00"+v.Items[i+1].Str)
			i++
		default:
			out = append(out, it.Str)
		}
	}
	slices.Sort(out)
	return out
}

// hhLines runs commands written one per line (split on spaces; "#" starts
// a comment line) through hhDo.
func hhLines(t testing.TB, d *servertest.Diff, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hhDo(t, d, strings.Fields(line)...)
	}
}

// hhScanAll runs a whole HSCAN iteration on one connection and returns the
// field/value pairs seen (or fields, with NOVALUES among args), sorted and
// deduplicated, and the number of calls it took.
func hhScanAll(t testing.TB, c *servertest.Conn, key string, args ...string) ([]string, int) {
	t.Helper()
	noValues := slices.ContainsFunc(args, func(s string) bool { return strings.EqualFold(s, "novalues") })
	seen := map[string]bool{}
	cursor := "0"
	calls := 0
	for {
		calls++
		if calls > 100000 {
			t.Fatal("HSCAN does not terminate")
		}
		v, err := servertest.Parse(c.Do(append([]string{"HSCAN", key, cursor}, args...)...))
		if err != nil || v.Kind != '*' || len(v.Items) != 2 {
			t.Fatalf("bad HSCAN reply %+v %v", v, err)
		}
		items := v.Items[1].Items
		if noValues {
			for _, it := range items {
				seen[it.Str] = true
			}
		} else {
			if len(items)%2 != 0 {
				t.Fatalf("HSCAN returned an odd number of items: %+v", items)
			}
			for i := 0; i < len(items); i += 2 {
				seen[items[i].Str+"="+items[i+1].Str] = true
			}
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
	return out, calls
}
