package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// listVal is a stand-in container value for the journal tests.
type listVal struct{ items []string }

func (l *listVal) Encoding() string { return "stand-in" }
func (l *listVal) MemoryUsage() int { return 0 }
func (l *listVal) CloneValue() any  { return &listVal{items: append([]string(nil), l.items...)} }

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
// rolls back and checks the keyspace equals the state before. With 6 keys
// the journal stays below seenScan and finds saved keys by scanning; with
// 40 it passes it and uses its map.
func TestUndoRandom(t *testing.T) {
	for _, nkeys := range []int{6, 12, 40} {
		t.Run(fmt.Sprint(nkeys, "keys"), func(t *testing.T) { testUndoRandom(t, nkeys) })
	}
}

func testUndoRandom(t *testing.T, nkeys int) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		ks := New(3)
		ks.Now = 1000
		// Some starting state.
		for i := 0; i < 2*nkeys; i++ {
			db := ks.DBs[r.IntN(3)]
			k := fmt.Sprint("k", r.IntN(nkeys))
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
		ks.BeginUndo()
		mutate(ks, r, nkeys)
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
func mutate(ks *Keyspace, r *rand.Rand, nkeys int) {
	for i := 0; i < 40; i++ {
		db := ks.DBs[r.IntN(3)]
		k := fmt.Sprint("k", r.IntN(nkeys))
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
	ks.BeginUndo()
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
		ks.BeginUndo()
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

// TestUndoSavesEachKeyOnce checks that however a key is written, in place,
// replaced by new objects, deleted and made again, renamed away and back,
// the journal saves it once (journalPut keeps the entry pointing at the
// key's object, which is how a lookup finds it saved), with the journal
// scanning its entries and with it past seenScan, using its map; and that
// the rollback still puts everything back.
func TestUndoSavesEachKeyOnce(t *testing.T) {
	for _, others := range []int{0, seenScan + 8} {
		ks := New(1)
		db := ks.DBs[0]
		db.Set("n", NewInt(1), false)
		o := NewString([]byte("x"))
		o.Expire = 5000
		db.Set("e", o, false)
		before := dump(ks)
		ks.BeginUndo()
		ks.SetUndoWrites(true)
		for i := 0; i < others; i++ {
			db.Set(fmt.Sprint("x", i), NewInt(int64(i)), false)
		}
		base := ks.UndoLen()
		for i := 0; i < 50; i++ {
			o := db.Lookup("n") // an in-place change, as INCR makes
			o.SetInt(o.Int() + 1)
			db.Modified("n")
			db.Set("n", NewInt(int64(i)), false) // a new object
			db.Lookup("n")
			db.Set("m", NewString([]byte("v")), false) // created
			db.Lookup("m")
			db.Delete("m")
			db.Set("r", db.Take("n"), false) // renamed
			db.Lookup("r")
			db.Set("n", db.Take("r"), false) // and back
			db.Lookup("n")
			db.SetExpire(db.Lookup("e"), 6000+int64(i))
		}
		if n := ks.UndoLen() - base; n != 4 {
			t.Errorf("%d other keys: n, m, r and e saved %d states, want 4", others, n)
		}
		ks.Rollback()
		if got := dump(ks); got != before {
			t.Fatalf("%d other keys: rollback left\n%s\nwant\n%s", others, got, before)
		}
	}
}

// TestUndoIntegerCopy checks the copy an integer gets (the object copied
// whole, then taken out of the table and heap): its value and TTL come
// back, and the restored key sits in the dict and the expiry heap as any.
func TestUndoIntegerCopy(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	ks.Now = 1000
	for i := 0; i < 10; i++ {
		o := NewInt(int64(i))
		o.Expire = 2000 + int64(i)
		db.Set(fmt.Sprint("k", i), o, false)
	}
	before := dump(ks)
	ks.BeginUndo()
	ks.SetUndoWrites(true)
	for i := 0; i < 10; i++ {
		k := fmt.Sprint("k", i)
		o := db.Lookup(k)
		o.SetInt(o.Int() + 100)
		db.Modified(k)
		db.SetExpire(o, 0)
	}
	ks.Rollback()
	if got := dump(ks); got != before {
		t.Fatalf("rollback left\n%s\nwant\n%s", got, before)
	}
	// The restored objects expire in order through the heap.
	ks.Now = 2005
	if n := ks.ExpireCycle(100); n != 6 {
		t.Fatalf("expire cycle reclaimed %d keys, want 6", n)
	}
	if n := db.Len(); n != 4 {
		t.Fatalf("%d keys left, want 4", n)
	}
}

// TestUndoLargeJournalLetGo checks that a journal of many keys does not
// keep its memory once closed, and that the next journal works.
func TestUndoLargeJournalLetGo(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	for i := 0; i < 3*entriesKeep; i++ {
		db.Set(fmt.Sprint("k", i), NewInt(int64(i)), false)
	}
	ks.BeginUndo()
	ks.SetUndoWrites(true)
	for i := 0; i < 3*entriesKeep; i++ {
		db.Delete(fmt.Sprint("k", i))
	}
	ks.Commit()
	if u := &ks.undo; cap(u.entries) != 0 || cap(u.objs) != 0 || u.seen != nil {
		t.Fatalf("closed journal kept %d entries' room, %d objs, map %v", cap(u.entries), cap(u.objs), u.seen != nil)
	}
	db.Set("a", NewInt(1), false)
	before := dump(ks)
	ks.BeginUndo()
	ks.SetUndoWrites(true)
	for i := 0; i < seenScan+2; i++ {
		db.Set(fmt.Sprint("n", i), NewInt(int64(i)), false)
	}
	o := db.Lookup("a")
	o.SetInt(7)
	ks.Rollback()
	if got := dump(ks); got != before {
		t.Fatalf("rollback left\n%s\nwant\n%s", got, before)
	}
}

// BenchmarkUndoIncr10 is the journal's share of a transactional script of
// 10 INCRs on distinct keys: open, ten lookups and in-place changes of
// integers, commit (journal=off: the same writes without a journal).
func BenchmarkUndoIncr10(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprint("journal=", on), func(b *testing.B) {
			ks := New(1)
			db := ks.DBs[0]
			keys := make([]string, 10)
			for i := range keys {
				keys[i] = fmt.Sprint("k", i)
				db.Set(keys[i], NewInt(0), false)
			}
			b.ReportAllocs()
			for b.Loop() {
				if on {
					ks.BeginUndo()
					ks.SetUndoWrites(true)
				}
				for _, k := range keys {
					o := db.Lookup(k)
					o.SetInt(o.Int() + 1)
					db.Modified(k)
				}
				if on {
					ks.Commit()
				}
			}
		})
	}
}
