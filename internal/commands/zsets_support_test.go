package commands_test

import (
	"iter"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/servertest"
)

func zsItoa(v int64) string { return strconv.FormatInt(v, 10) }

// zsFakeSet is a plain set value for tests of the zset algebra while the
// set family has no SADD: it offers what the algebra reads of a set.
type zsFakeSet struct{ members []string }

func (s *zsFakeSet) Len() int { return len(s.members) }
func (s *zsFakeSet) Contains(m []byte) bool {
	for _, x := range s.members {
		if x == string(m) {
			return true
		}
	}
	return false
}
func (s *zsFakeSet) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, x := range s.members {
			if !yield([]byte(x)) {
				return
			}
		}
	}
}
func (s *zsFakeSet) Encoding() string { return "hashtable" }

// zsAddSet creates a plain set at key on both servers: SADD on
// redis-server, and on Abacus SADD too when the set family has it, a value
// put straight into the keyspace otherwise.
func zsAddSet(t *testing.T, d *servertest.Diff, inst *servertest.Instance, key string, members ...string) {
	t.Helper()
	args := append([]string{"SADD", key}, members...)
	if r := d.R.Do(args...); r[0] != ':' {
		t.Fatalf("SADD on redis-server: %q", r)
	}
	r := d.A.Do(args...)
	if r[0] == ':' {
		return
	}
	if !strings.HasPrefix(r, "-ERR unknown command") {
		t.Fatalf("SADD on abacus: %q", r)
	}
	inst.Srv.Lock()
	defer inst.Srv.Unlock()
	db := inst.Srv.Env.KS.DBs[0]
	db.Set(key, keyspace.NewValue(keyspace.TypeSet, &zsFakeSet{members: members}), false)
}

// zsScanAll runs a complete ZSCAN of key on c and returns member -> score
// and the number of calls. It fails on a member returned twice.
func zsScanAll(t testing.TB, c *servertest.Conn, key string, extra ...string) (map[string]string, int) {
	t.Helper()
	got := map[string]string{}
	cursor, calls := "0", 0
	for {
		r := servertest.MustParse(t, c.Do(append([]string{"ZSCAN", key, cursor}, extra...)...))
		if r.Kind != '*' || len(r.Items) != 2 {
			t.Fatalf("ZSCAN reply %+v", r)
		}
		calls++
		kv := r.Items[1].Strings()
		for i := 0; i+1 < len(kv); i += 2 {
			if _, dup := got[kv[i]]; dup {
				t.Fatalf("ZSCAN returned %q twice", kv[i])
			}
			got[kv[i]] = kv[i+1]
		}
		cursor = r.Items[0].Str
		if cursor == "0" {
			return got, calls
		}
		if calls > 1_000_000 {
			t.Fatalf("ZSCAN does not end")
		}
	}
}

// zsSameScan compares complete ZSCANs of key on both servers as maps:
// the order of a skiplist scan is the server's own.
func zsSameScan(t *testing.T, d *servertest.Diff, key string, extra ...string) {
	t.Helper()
	a, _ := zsScanAll(t, d.A, key, extra...)
	r, _ := zsScanAll(t, d.R, key, extra...)
	if !maps.Equal(a, r) {
		t.Errorf("ZSCAN %s %v:\n abacus: %v\n  redis: %v", key, extra, a, r)
	}
}
