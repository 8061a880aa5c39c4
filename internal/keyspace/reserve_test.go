package keyspace

import (
	"strconv"
	"testing"
)

func TestReserveSkipsRehash(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	db.Reserve(1000, 10)
	if got := len(db.dict.t[0]); got != 1024 {
		t.Fatalf("table of %d buckets, want 1024", got)
	}
	for i := range 1000 {
		db.Add("k"+strconv.Itoa(i), NewInt(int64(i)))
		if db.dict.rehashing() {
			t.Fatalf("rehashing after %d keys", i+1)
		}
	}
	// A database with keys keeps its table.
	db.Reserve(1<<20, 0)
	if got := len(db.dict.t[0]); got != 1024 {
		t.Fatalf("table of %d buckets after a second Reserve, want 1024", got)
	}
	if db.Len() != 1000 {
		t.Fatalf("Len %d", db.Len())
	}
}
