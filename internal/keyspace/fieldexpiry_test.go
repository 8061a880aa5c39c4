package keyspace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
)

const fxT0 = 1_700_000_000_000

var fxLim = hash.DefaultLimits()

// fxHash stores a hash at key whose fields f0..f(n-1) expire at the given
// times (0: none).
func fxHash(db *DB, key string, ats ...int64) *Object {
	h := hash.New()
	for i, at := range ats {
		f := []byte("f" + strconv.Itoa(i))
		h.Set(db.ks.Now, f, []byte("v"), fxLim)
		if at != 0 {
			h.SetExpiry(db.ks.Now, f, at, hash.CondNone)
		}
	}
	o := NewValue(TypeHash, h)
	db.Set(key, o, false)
	return o
}

// fxCheck verifies the heap order, every object's fpos, and that each
// indexed value's key still holds it.
func fxCheck(t *testing.T, db *DB) {
	t.Helper()
	for i, e := range db.fexp {
		if int(e.o.fpos) != i+1 {
			t.Fatalf("entry %d: fpos %d", i, e.o.fpos)
		}
		if i > 0 && db.fexp[(i-1)/2].at > e.at {
			t.Fatalf("heap order broken at %d", i)
		}
		if db.dict.Get(e.o.Key) != e.o {
			t.Fatalf("indexed object %q is not the one stored", e.o.Key)
		}
	}
}

// physLen counts the fields a hash physically holds, expired or not.
func physLen(o *Object) int { return o.Val().(*hash.Hash).Len(math.MinInt64) }

func TestFieldExpiryCycle(t *testing.T) {
	ks := New(2)
	ks.Now = fxT0
	db := ks.DBs[0]
	var touched []string
	ks.Touched = func(_ *DB, key string) { touched = append(touched, key) }

	o := fxHash(db, "h", fxT0+100, fxT0+200, 0)
	fxHash(db, "plain", 0, 0)
	if db.FieldExpiresLen() != 1 {
		t.Fatalf("indexed %d values, want 1", db.FieldExpiresLen())
	}
	fxCheck(t, db)

	ks.Now = fxT0 + 99
	if n := ks.ExpireCycle(100); n != 0 {
		t.Fatalf("reclaimed %d before any field expired", n)
	}
	ks.Now = fxT0 + 100
	touched = nil
	if n := ks.ExpireCycle(100); n != 1 {
		t.Fatalf("reclaimed %d, want 1 field", n)
	}
	if physLen(o) != 2 || db.fexp[0].at != fxT0+200 {
		t.Fatalf("after the first field: %d fields, next %d", physLen(o), db.fexp[0].at)
	}
	if len(touched) != 0 {
		t.Errorf("reclaiming a field signalled %v", touched)
	}
	ks.Now = fxT0 + 500
	ks.ExpireCycle(100)
	if physLen(o) != 1 || db.FieldExpiresLen() != 0 {
		t.Fatalf("after the second field: %d fields, %d indexed", physLen(o), db.FieldExpiresLen())
	}
	if db.Peek("h") != o || ks.Stats.ExpiredFields != 2 {
		t.Fatalf("h gone or counter %d", ks.Stats.ExpiredFields)
	}

	// The last field expiring takes the key with it, signalled.
	fxHash(db, "g", fxT0+600, fxT0+600)
	ks.Now = fxT0 + 600
	touched = nil
	if n := ks.ExpireCycle(100); n != 3 {
		t.Fatalf("reclaimed %d, want 2 fields and the key", n)
	}
	if db.Peek("g") != nil || len(touched) != 1 || touched[0] != "g" {
		t.Fatalf("g still there or not signalled: %v", touched)
	}
	fxCheck(t, db)
}

func TestFieldExpiryFollowsKey(t *testing.T) {
	ks := New(2)
	ks.Now = fxT0
	db, db1 := ks.DBs[0], ks.DBs[1]
	o := fxHash(db, "a", fxT0+10)

	// RENAME and MOVE: Take then Set.
	db.Take("a")
	if db.FieldExpiresLen() != 0 || o.fpos != 0 {
		t.Fatal("Take left the entry")
	}
	db.Set("b", o, false)
	db1.Set("c", db.Take("b"), false)
	if db.FieldExpiresLen() != 0 || db1.FieldExpiresLen() != 1 {
		t.Fatalf("after the move: %d and %d indexed", db.FieldExpiresLen(), db1.FieldExpiresLen())
	}
	// Replacing the value drops the old object's entry.
	fxHash(db1, "c", 0)
	if db1.FieldExpiresLen() != 0 || o.fpos != 0 {
		t.Fatal("the replaced value is still indexed")
	}
	// SWAPDB carries the index along.
	fxHash(db, "d", fxT0+10)
	ks.Swap(0, 1)
	if db.FieldExpiresLen() != 0 || db1.FieldExpiresLen() != 1 {
		t.Fatalf("after SWAPDB: %d and %d indexed", db.FieldExpiresLen(), db1.FieldExpiresLen())
	}
	ks.Now = fxT0 + 10
	ks.ExpireCycle(10)
	if db1.Peek("d") != nil {
		t.Fatal("d survived its last field in the swapped database")
	}
	// DEL and FLUSHDB.
	fxHash(db, "e", fxT0+50)
	p := fxHash(db, "f", fxT0+50)
	db.Delete("e")
	if db.FieldExpiresLen() != 1 {
		t.Fatal("DEL left the entry")
	}
	db.Flush()
	if db.FieldExpiresLen() != 0 || p.fpos != 0 {
		t.Fatal("FLUSHDB left the index")
	}
	// A key expiring as a whole leaves the index too.
	q := fxHash(db, "g", fxT0+1000)
	db.SetExpire(q, fxT0+20)
	ks.Now = fxT0 + 20
	ks.ExpireCycle(10)
	if db.Peek("g") != nil || db.FieldExpiresLen() != 0 {
		t.Fatal("the expired key is still indexed")
	}
}

// TestFieldExpiryBudget checks that one cycle reclaims at most its budget,
// leaving the rest for the next cycles, and deletes the key at the end.
func TestFieldExpiryBudget(t *testing.T) {
	ks := New(1)
	ks.Now = fxT0
	db := ks.DBs[0]
	ats := make([]int64, 1000)
	for i := range ats {
		ats[i] = fxT0 + 1
	}
	o := fxHash(db, "big", ats...)
	ks.Now = fxT0 + 1
	for round := 1; round <= 5; round++ {
		n := ks.ExpireCycle(200)
		want := 200
		if round == 5 {
			want = 201 // the last fields and the key
		}
		if n != want {
			t.Fatalf("round %d reclaimed %d, want %d", round, n, want)
		}
		if round < 5 && physLen(o) != 1000-200*round {
			t.Fatalf("round %d: %d fields left", round, physLen(o))
		}
	}
	if db.Len() != 0 {
		t.Fatal("the emptied hash was not deleted")
	}
	if n := ks.ExpireCycle(200); n != 0 {
		t.Fatalf("a cycle with nothing due did %d", n)
	}
}

// TestFieldExpiryRandom drives many hashes through random TTL changes,
// persists, deletions and time steps, checking after each cycle with a
// large budget that no expired field is left anywhere and that the index is
// exactly the set of hashes with field TTLs.
func TestFieldExpiryRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	ks := New(1)
	ks.Now = fxT0
	db := ks.DBs[0]
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	for step := 0; step < 3000; step++ {
		k := keys[r.IntN(len(keys))]
		o := db.Lookup(k)
		switch op := r.IntN(10); {
		case o == nil || op == 0:
			n := 1 + r.IntN(20)
			ats := make([]int64, n)
			for i := range ats {
				if r.IntN(2) == 0 {
					ats[i] = ks.Now + 1 + int64(r.IntN(500))
				}
			}
			fxHash(db, k, ats...)
		case op < 5:
			h := o.Val().(*hash.Hash)
			f := []byte("f" + strconv.Itoa(r.IntN(20)))
			switch r.IntN(3) {
			case 0:
				h.SetExpiry(ks.Now, f, ks.Now+1+int64(r.IntN(500)), hash.CondNone)
			case 1:
				h.Persist(ks.Now, f)
			default:
				h.Set(ks.Now, f, []byte("w"), fxLim)
			}
			if h.Len(ks.Now) == 0 {
				db.Delete(k)
			} else {
				db.UpdateFieldExpiry(o)
			}
		case op < 6:
			db.Delete(k)
		default:
			ks.Now += int64(r.IntN(60))
			ks.ExpireCycle(1 << 20)
			fxCheck(t, db)
			indexed := 0
			db.ForEach(func(o *Object) {
				h := o.Val().(*hash.Hash)
				if h.Len(math.MinInt64) != h.Len(ks.Now) {
					t.Fatalf("step %d: %q holds expired fields after the cycle", step, o.Key)
				}
				if h.Len(ks.Now) == 0 {
					t.Fatalf("step %d: %q is empty", step, o.Key)
				}
				at, has := h.NextExpiry()
				if has != (o.fpos > 0) {
					t.Fatalf("step %d: %q has TTLs %v, indexed %v", step, o.Key, has, o.fpos > 0)
				}
				if has {
					indexed++
					if db.fexp[o.fpos-1].at > at {
						t.Fatalf("step %d: %q indexed at %d, next field expires at %d", step, o.Key, db.fexp[o.fpos-1].at, at)
					}
				}
			})
			if indexed != db.FieldExpiresLen() {
				t.Fatalf("step %d: %d indexed, %d hashes with TTLs", step, db.FieldExpiresLen(), indexed)
			}
		}
	}
}

// TestFieldExpiryLookup checks that a lookup reclaims the expired fields it
// meets and that a hash whose fields have all expired is gone for every
// lookup (EXISTS, TYPE, DEL, the hash commands), before any cycle runs.
func TestFieldExpiryLookup(t *testing.T) {
	ks := New(1)
	ks.Now = fxT0
	db := ks.DBs[0]
	var touched []string
	ks.Touched = func(_ *DB, key string) { touched = append(touched, key) }
	o := fxHash(db, "some", fxT0+10, fxT0+20, 0)
	fxHash(db, "all", fxT0+10, fxT0+10)
	fxHash(db, "del", fxT0+10)

	ks.Now = fxT0 + 10
	touched = nil
	if db.Lookup("some") != o || physLen(o) != 2 || db.fexp[o.fpos-1].at != fxT0+20 {
		t.Fatalf("lookup of a partly expired hash: %d fields left", physLen(o))
	}
	if db.Lookup("all") != nil || db.Peek("all") != nil {
		t.Fatal("a hash whose fields all expired is still there")
	}
	if db.Delete("del") {
		t.Fatal("DEL reported a hash whose fields all expired")
	}
	if db.Peek("del") != nil || len(touched) != 2 {
		t.Fatalf("del still stored, or signals %v", touched)
	}
	if ks.Stats.ExpiredFields != 4 || ks.Stats.ExpiredKeys != 0 {
		t.Fatalf("counted %d fields, %d keys", ks.Stats.ExpiredFields, ks.Stats.ExpiredKeys)
	}
	fxCheck(t, db)
}
