package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// listVal is a stand-in container value for the journal tests.
type listVal struct{ items []string }

func cloneVal(t Type, v any) any {
	l := v.(*listVal)
	return &listVal{items: append([]string(nil), l.items...)}
}

// dump renders every database's keys, types, values and TTLs.
func dump(ks *Keyspace) string {
	var lines []string
	for _, db := range ks.DBs {
		db.ForEach(func(o *Object) {
			v := string(o.Bytes(nil))
			if l, ok := o.Val().(*listVal); ok {
				v = fmt.Sprint(l.items)
			}
			lines = append(lines, fmt.Sprintf("%d %s %v %d %q exp=%d", db.ID, o.Key, o.Type, o.Enc, v, o.Expire))
		})
		lines = append(lines, fmt.Sprintf("%d size=%d expires=%d", db.ID, db.Len(), db.ExpiresLen()))
	}
	sort.Strings(lines)
	return fmt.Sprint(lines, ks.Stats)
}

// TestUndoRandom applies random write sequences inside a journal, then
// rolls back and checks the keyspace equals the state before; and applies
// the same sequences committed, checking they took effect.
func TestUndoRandom(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		ks := New(3)
		ks.Now = 1000
		// Some starting state.
		for i := 0; i < 20; i++ {
			db := ks.DBs[r.IntN(3)]
			k := fmt.Sprint("k", r.IntN(12))
			if r.IntN(3) == 0 {
				db.Set(k, NewValue(TypeList, &listVal{items: []string{"a", "b"}}), false)
			} else {
				o := NewString([]byte(fmt.Sprint(r.IntN(100))))
				if r.IntN(2) == 0 {
					o.Expire = 1000 + int64(r.IntN(50))
				}
				db.Set(k, o, false)
			}
		}
		before := dump(ks)
		ks.BeginUndo(cloneVal)
		mutate(ks, r)
		if ks.UndoLen() == 0 {
			t.Fatalf("seed %d: no state was saved", seed)
		}
		changed := dump(ks)
		ks.Rollback()
		if got := dump(ks); got != before {
			t.Fatalf("seed %d: rollback left\n%s\nwant\n%s\n(after the writes: %s)", seed, got, before, changed)
		}
		if ks.UndoOpen() {
			t.Fatal("journal still open after Rollback")
		}
	}
}

// mutate performs random writes of every kind the journal must cover.
func mutate(ks *Keyspace, r *rand.Rand) {
	for i := 0; i < 40; i++ {
		db := ks.DBs[r.IntN(3)]
		k := fmt.Sprint("k", r.IntN(12))
		ks.SetUndoWrites(true)
		switch r.IntN(8) {
		case 0:
			db.Set(k, NewString([]byte("new")), r.IntN(2) == 0)
		case 1:
			db.Delete(k)
		case 2:
			if o := db.Lookup(k); o != nil {
				if l, ok := o.Val().(*listVal); ok {
					l.items = append(l.items, "pushed") // an in-place change
				} else if o.Enc == EncInt {
					o.SetInt(o.Int() + 1)
				}
				db.Modified(k)
			}
		case 3:
			if o := db.Lookup(k); o != nil {
				db.SetExpire(o, 5000+int64(r.IntN(100)))
			}
		case 4:
			ks.Now += int64(r.IntN(30)) // lazy expiry on later lookups
		case 5:
			if r.IntN(6) == 0 {
				db.Flush()
			}
		case 6:
			if r.IntN(6) == 0 {
				ks.Swap(r.IntN(3), r.IntN(3))
			}
		case 7:
			if o := db.Take(k); o != nil {
				ks.DBs[r.IntN(3)].Set(fmt.Sprint("moved", r.IntN(3)), o, false)
			}
		}
	}
	ks.Now = 1000
}

// TestUndoReadsTakeNoCopies checks that lookups by read-only commands do
// not save anything, so a read-heavy script pays nothing.
func TestUndoReadsTakeNoCopies(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	for i := 0; i < 100; i++ {
		db.Set(fmt.Sprint("k", i), NewInt(int64(i)), false)
	}
	ks.BeginUndo(cloneVal)
	ks.SetUndoWrites(false)
	for i := 0; i < 100; i++ {
		db.LookupRead(fmt.Sprint("k", i))
	}
	if n := ks.UndoLen(); n != 0 {
		t.Fatalf("reads saved %d states", n)
	}
	ks.SetUndoWrites(true)
	db.Lookup("k1")
	db.Lookup("k1")
	db.Set("k1", NewInt(5), false)
	if n := ks.UndoLen(); n != 1 {
		t.Fatalf("one key written three ways saved %d states, want 1", n)
	}
	ks.Commit()
	if o := db.Lookup("k1"); o == nil || o.Int() != 5 {
		t.Fatalf("commit lost the write: %+v", o)
	}
}

// TestUndoWatchers checks a rolled-back write leaves a watcher clean while
// a committed one makes it dirty.
func TestUndoWatchers(t *testing.T) {
	for _, undo := range []bool{true, false} {
		ks := New(1)
		db := ks.DBs[0]
		db.Set("w", NewInt(1), false)
		var w Watcher
		db.Watch(&w, "w")
		ks.BeginUndo(cloneVal)
		ks.SetUndoWrites(true)
		db.Set("w", NewInt(2), false)
		if undo {
			ks.Rollback()
		} else {
			ks.Commit()
		}
		if w.Dirty == undo {
			t.Fatalf("undo=%v: watcher dirty=%v", undo, w.Dirty)
		}
	}
}
