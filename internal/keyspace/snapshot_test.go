package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

type snapModel map[string]string // "db/key" -> value@expire

func modelNow(ks *Keyspace) snapModel {
	m := snapModel{}
	for _, db := range ks.DBs {
		db.ForEach(func(o *Object) {
			if o.Expire != 0 && o.Expire <= ks.Now {
				return
			}
			m[fmt.Sprintf("%d/%s", db.ID, o.Key)] = fmt.Sprintf("%s@%d", o.Bytes(nil), o.Expire)
		})
	}
	return m
}

// A snapshot walked one to three keys at a time, with random writes,
// deletes, renames across databases, TTL changes, in-place overwrites,
// FLUSHDB, SWAPDB and rolled-back undo journals between the slices,
// yields exactly the keyspace at the moment, each key once. Tables are
// caught mid-rehash at the moment too.
func TestSnapshotIsPointInTime(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		ks := New(4)
		ks.Now = 1000
		for i := 0; i < 200+r.IntN(300); i++ {
			db := ks.DBs[r.IntN(3)] // db 3 starts empty
			o := NewString([]byte(fmt.Sprint("v", i)))
			if r.IntN(4) == 0 {
				o.Expire = 500 + int64(r.IntN(2000)) // some already due
			}
			db.Set(fmt.Sprint("k", r.IntN(400)), o, false)
		}
		want := modelNow(ks)
		rehashing := false
		for _, db := range ks.DBs {
			rehashing = rehashing || db.dict.rehashing()
		}
		ks.BeginSnapshot(ks.Now)
		got := snapModel{}
		seen := map[string]bool{}
		more := true
		for step := 0; more; step++ {
			more = ks.NextSnapshotSlice(1+r.IntN(3), func(db int, o *Object) {
				k := fmt.Sprintf("%d/%s", db, o.Key)
				if seen[k] {
					t.Fatalf("seed %d: %s written twice", seed, k)
				}
				seen[k] = true
				got[k] = fmt.Sprintf("%s@%d", o.Bytes(nil), o.Expire)
			})
			for n := r.IntN(6); n > 0; n-- {
				snapMutate(r, ks, step)
			}
		}
		ks.EndSnapshot()
		if len(got) != len(want) {
			t.Fatalf("seed %d (rehashing %v): %d keys, want %d", seed, rehashing, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("seed %d (rehashing %v): %s = %q, want %q", seed, rehashing, k, got[k], v)
			}
		}
	}
}

func snapMutate(r *rand.Rand, ks *Keyspace, step int) {
	db := ks.DBs[r.IntN(len(ks.DBs))]
	key := fmt.Sprint("k", r.IntN(500))
	switch r.IntN(12) {
	case 0, 1, 2:
		db.Set(key, NewString([]byte(fmt.Sprint("new", step))), r.IntN(2) == 0)
	case 3:
		db.Delete(key)
	case 4:
		if o := db.Lookup(key); o != nil {
			db.SetExpire(o, ks.Now+int64(r.IntN(5000)))
		}
	case 5:
		if o := db.Take(key); o != nil {
			ks.DBs[r.IntN(len(ks.DBs))].Set(fmt.Sprint("k", r.IntN(500)), o, false)
		}
	case 6:
		cur := db.Lookup(key)
		db.StoreString(cur, []byte(key), []byte(fmt.Sprint("in-place", step)), 0, r.IntN(2) == 0)
	case 7:
		if r.IntN(8) == 0 {
			db.Flush()
		}
	case 8:
		if r.IntN(4) == 0 {
			ks.Swap(r.IntN(len(ks.DBs)), r.IntN(len(ks.DBs)))
		}
	case 9:
		ks.Now += int64(r.IntN(300)) // keys expire lazily and actively
		ks.ExpireCycle(5)
	default:
		// A script that writes, deletes, flushes and is rolled back.
		ks.BeginUndo()
		for n := r.IntN(5); n > 0; n-- {
			d := ks.DBs[r.IntN(len(ks.DBs))]
			k := fmt.Sprint("k", r.IntN(500))
			switch r.IntN(4) {
			case 0:
				d.Delete(k)
			case 1:
				if r.IntN(3) == 0 {
					d.Flush()
				}
			default:
				d.Set(k, NewString([]byte("script")), false)
			}
		}
		ks.Rollback()
	}
}
