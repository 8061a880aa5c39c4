package commands_test

// Helpers of the set tests. Their names start with "sx" so they cannot
// collide with other families' test helpers in this package.

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// sxDiff starts an Abacus instance and a differential pair. With like70,
// Abacus runs with set-max-listpack-entries 0, which turns off the listpack
// encoding Redis 7.0 does not have for sets: its OBJECT ENCODING replies
// must then be redis-server 7.0's exactly. Without it Abacus keeps its
// default (listpacks, as Redis 7.2) and the tests compare encodings with
// "listpack" standing for 7.0's "hashtable".
func sxDiff(t *testing.T, like70 bool, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	if like70 {
		opts = append(opts, servertest.WithConfig("set-max-listpack-entries", "0"))
	}
	d, inst := servertest.StartDiff(t, opts...)
	// The redis-server is shared by the package's tests: start from and
	// leave behind the default intset limit.
	reset := func() {
		if r := d.R.Do("CONFIG", "SET", "set-max-intset-entries", "512"); r != "+OK\r\n" {
			t.Errorf("resetting set-max-intset-entries: %q", r)
		}
	}
	reset()
	t.Cleanup(reset)
	return d, inst
}

// sxIntsetLimit sets set-max-intset-entries on both servers.
func sxIntsetLimit(t testing.TB, d *servertest.Diff, n int) {
	t.Helper()
	d.Do("CONFIG", "SET", "set-max-intset-entries", strconv.Itoa(n))
}

// sxEncoding asks both servers for key's OBJECT ENCODING and requires the
// same answer, except that without like70 Abacus's "listpack" matches
// Redis 7.0's "hashtable". It returns Redis's answer (nil for no key).
func sxEncoding(t testing.TB, d *servertest.Diff, like70 bool, key string) string {
	t.Helper()
	a, r := d.A.Do("OBJECT", "ENCODING", key), d.R.Do("OBJECT", "ENCODING", key)
	if a != r && !(!like70 && a == "$8\r\nlistpack\r\n" && r == "$9\r\nhashtable\r\n") {
		t.Errorf("OBJECT ENCODING %s\n abacus: %q\n  redis: %q", key, a, r)
	}
	v, err := servertest.Parse(r)
	if err != nil {
		t.Fatalf("OBJECT ENCODING %s: %q", key, r)
	}
	return v.Str
}

// sxDo sends a command to both servers. Ordered replies must be the same
// bytes; unordered ones the same type, length and elements in any order
// (the member order of Redis's hash tables depends on a per-process seed).
func sxDo(t testing.TB, d *servertest.Diff, ordered bool, args ...string) string {
	t.Helper()
	if ordered {
		return d.Do(args...)
	}
	req := servertest.Encode(args...)
	d.A.Write(req)
	d.R.Write(req)
	a, r := d.A.Read(), d.R.Read()
	if a != r && !sxSameUnordered(a, r) {
		t.Errorf("%s\n abacus: %q\n  redis: %q", strings.Join(args, " "), a, r)
	}
	return a
}

// sxSameUnordered reports whether two replies are aggregates of the same
// type holding the same elements, in any order.
func sxSameUnordered(a, r string) bool {
	va, err1 := servertest.Parse(a)
	vr, err2 := servertest.Parse(r)
	if err1 != nil || err2 != nil || va.Kind != vr.Kind || len(va.Items) != len(vr.Items) {
		return false
	}
	switch va.Kind {
	case '*', '~':
	default:
		return false
	}
	return slices.Equal(sxSortedItems(va), sxSortedItems(vr))
}

// sxSortedItems returns the raw texts of an aggregate's elements, sorted.
func sxSortedItems(v servertest.Reply) []string {
	out := make([]string, len(v.Items))
	for i, it := range v.Items {
		out[i] = string(it.Kind) + it.Str
	}
	slices.Sort(out)
	return out
}

// sxMembers decodes a reply of bulk strings (an array or a set).
func sxMembers(t testing.TB, raw string) []string {
	t.Helper()
	v, err := servertest.Parse(raw)
	if err != nil || (v.Kind != '*' && v.Kind != '~') {
		t.Fatalf("expected an array or set of members, got %q (%v)", raw, err)
	}
	out := make([]string, len(v.Items))
	for i, it := range v.Items {
		if it.Kind != '$' {
			t.Fatalf("non-bulk element in %q", raw)
		}
		out[i] = it.Str
	}
	return out
}

// sxScanAll runs a full SSCAN iteration on one server and returns the
// distinct members it saw and the number of calls it took.
func sxScanAll(t testing.TB, c *servertest.Conn, key string, extra ...string) (map[string]bool, int) {
	t.Helper()
	seen := map[string]bool{}
	cursor := "0"
	for calls := 1; ; calls++ {
		v, err := servertest.Parse(c.Do(append([]string{"SSCAN", key, cursor}, extra...)...))
		if err != nil || v.Kind != '*' || len(v.Items) != 2 {
			t.Fatalf("SSCAN %s %s: bad reply %+v (%v)", key, cursor, v, err)
		}
		for _, it := range v.Items[1].Items {
			seen[it.Str] = true
		}
		cursor = v.Items[0].Str
		if cursor == "0" {
			return seen, calls
		}
		if calls > 1_000_000 {
			t.Fatalf("SSCAN %s does not end", key)
		}
	}
}

// sxIsIntMember reports whether m is a member Redis stores in an intset:
// the canonical decimal form of an int64.
func sxIsIntMember(m string) bool {
	v, err := strconv.ParseInt(m, 10, 64)
	return err == nil && strconv.FormatInt(v, 10) == m
}
