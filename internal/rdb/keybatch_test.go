package rdb_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// The keyspace loader hands keys over in batches (Loader.Prefetch); a
// duplicate key, or a database out of range, is still reported with its
// own record's offset, whole or streamed, before an error found later in
// the file.
func TestLoadBatchedErrors(t *testing.T) {
	file := func(dupAt, dbAt, cutTo int) []byte {
		var out bytes.Buffer
		w := rdb.NewWriter(&out, rdb.MaxVersion, rdb.EncodeOptions{})
		w.SelectDB(0, 0, 0)
		for i := range 40000 {
			k := fmt.Sprintf("key:%d", i)
			if i == dupAt {
				k = "key:7"
			}
			if i == dbAt {
				w.SelectDB(99, 0, 0)
			}
			o := keyspace.NewString([]byte(fmt.Sprintf("value %d", i)))
			o.Key = k
			w.Key(o)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b := out.Bytes()
		if cutTo > 0 {
			b = b[:cutTo]
		}
		return b
	}
	opt := rdb.DefaultOptions()
	for _, c := range []struct {
		name        string
		dupAt, dbAt int
		cut         int
	}{
		{name: "duplicate first in its batch", dupAt: 16 * 100, dbAt: -1},
		{name: "duplicate mid-batch", dupAt: 30001, dbAt: -1},
		{name: "duplicate last", dupAt: 39999, dbAt: -1},
		{name: "database out of range", dupAt: -1, dbAt: 22222},
		{name: "duplicate then truncated", dupAt: 39990, dbAt: -1, cut: -20},
	} {
		b := file(c.dupAt, c.dbAt, 0)
		if c.cut < 0 {
			b = b[:len(b)+c.cut]
		}
		// Key by key: a Loader without Prefetch, adding to a keyspace
		// as the keyspace loader does.
		ks := keyspace.New(16)
		_, want := (&rdb.Loader{Opt: opt, Function: noFuncs, Key: func(db int, o *keyspace.Object) error {
			if db >= len(ks.DBs) {
				return fmt.Errorf("database %d out of range (databases %d)", db, len(ks.DBs))
			}
			n := ks.DBs[db].Len()
			if ks.DBs[db].Add(o.Key, o); ks.DBs[db].Len() == n {
				return fmt.Errorf("duplicate key %q", o.Key)
			}
			return nil
		}}).Load(b)
		_, err := rdb.LoadKeyspace(keyspace.New(16), b, opt, noFuncs)
		if c.cut == 0 && (err == nil || want == nil || err.Error() != want.Error()) {
			t.Errorf("%s: whole load %v, key by key %v", c.name, err, want)
		}
		seen := false
		_, _, serr := rdb.LoadKeyspaceFrom(keyspace.New(16), &pieces{b: b, most: 700, rnd: rand.New(rand.NewPCG(1, 2))}, opt, noFuncs)
		// Streamed, the cut file is decoded up to its cut (no checksum
		// first), so the duplicate before it is what is reported.
		if c.cut < 0 {
			_, want = (&rdb.Loader{Opt: opt, Function: noFuncs, Key: func(db int, o *keyspace.Object) error {
				if o.Key == "key:7" && db == 0 && seen {
					return fmt.Errorf("duplicate key %q", o.Key)
				}
				seen = seen || o.Key == "key:7"
				return nil
			}, SkipChecksum: true}).Load(b)
		}
		if serr == nil || want == nil || serr.Error() != want.Error() {
			t.Errorf("%s: streamed %v, whole %v, key by key %v", c.name, serr, err, want)
		}
	}
}
