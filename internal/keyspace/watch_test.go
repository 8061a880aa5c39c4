package keyspace

import "testing"

// watchKS makes a keyspace of two databases at time 1000 ms.
func watchKS() *Keyspace {
	ks := New(2)
	ks.Now = 1000
	return ks
}

func setStr(db *DB, key, val string, expire int64) {
	o := NewString([]byte(val))
	o.Expire = expire
	db.Set(key, o, false)
}

func TestWatchTouch(t *testing.T) {
	ks := watchKS()
	db0, db1 := ks.DBs[0], ks.DBs[1]
	var w, other Watcher
	db0.Watch(&w, "k")
	db0.Watch(&w, "k") // once only
	db1.Watch(&other, "k")
	if w.Len() != 1 || db0.Watched() != 1 || db1.Watched() != 1 {
		t.Fatalf("watch counts %d %d %d", w.Len(), db0.Watched(), db1.Watched())
	}
	setStr(db0, "x", "1", 0)
	if w.Dirty || other.Dirty {
		t.Fatal("a write to another key made a watcher dirty")
	}
	setStr(db0, "k", "1", 0)
	if !w.Dirty || other.Dirty {
		t.Fatalf("after SET in db 0: w %v other %v", w.Dirty, other.Dirty)
	}
	db1.Delete("k") // absent: no write
	if other.Dirty {
		t.Fatal("deleting an absent key is no change")
	}
	w.Unwatch()
	if w.Dirty || w.Len() != 0 || db0.Watched() != 0 {
		t.Fatalf("after Unwatch: dirty %v len %d registry %d", w.Dirty, w.Len(), db0.Watched())
	}
	setStr(db0, "k", "2", 0)
	if w.Dirty {
		t.Fatal("an unwatched key made the watcher dirty")
	}
	// Two watchers of one key both see the write; unwatching one keeps
	// the other registered.
	var a, b Watcher
	db0.Watch(&a, "k")
	db0.Watch(&b, "k")
	a.Unwatch()
	db0.Modified("k")
	if a.Dirty || !b.Dirty || db0.Watched() != 1 {
		t.Fatalf("a %v b %v registry %d", a.Dirty, b.Dirty, db0.Watched())
	}
}

func TestWatchExpiry(t *testing.T) {
	ks := watchKS()
	db := ks.DBs[0]

	// Live when watched, expired at EXEC time: changed, reclaimed or not.
	var w Watcher
	setStr(db, "live", "v", 1500)
	db.Watch(&w, "live")
	if w.Expired() {
		t.Fatal("a live key reported expired")
	}
	ks.Now = 1500
	if !w.Expired() {
		t.Fatal("an expired watched key not reported")
	}
	db.Lookup("live") // reclaims it: a change
	if !w.Dirty {
		t.Fatal("reclaiming a key that was live when watched is a change")
	}
	w.Unwatch()

	// Already expired when watched: logically absent, so its reclamation
	// is no change, and EXEC does not fail for it; a new value is.
	setStr(db, "old", "v", 1200)
	ks.Now = 1300
	db.Watch(&w, "old")
	if w.Expired() {
		t.Fatal("a key expired before WATCH counts as expired since")
	}
	db.Lookup("old")
	if w.Dirty {
		t.Fatal("reclaiming a key that had expired before WATCH is no change")
	}
	setStr(db, "old", "new", 0)
	if !w.Dirty {
		t.Fatal("a new value for a key watched while expired is a change")
	}
	w.Unwatch()

	// The active expiry cycle is a reclamation like any other.
	setStr(db, "cyc", "v", 1400)
	db.Watch(&w, "cyc")
	ks.Now = 1400
	ks.ExpireCycle(10)
	if !w.Dirty {
		t.Fatal("the expiry cycle reclaiming a watched live key is a change")
	}
}

func TestWatchFlush(t *testing.T) {
	ks := watchKS()
	db := ks.DBs[0]
	var present, absent, expired Watcher
	setStr(db, "p", "v", 0)
	setStr(db, "e", "v", 900) // expired, not reclaimed
	db.Watch(&present, "p")
	db.Watch(&absent, "a")
	db.Watch(&expired, "e")
	db.Flush()
	if !present.Dirty || absent.Dirty || expired.Dirty {
		t.Fatalf("flush: present %v absent %v expired %v", present.Dirty, absent.Dirty, expired.Dirty)
	}
	// The expired watch is now of an absent key.
	setStr(db, "e", "v", 0)
	if !expired.Dirty {
		t.Fatal("a write after the flush went unseen")
	}
}

func TestWatchSwap(t *testing.T) {
	type tc struct {
		name      string
		in0, in1  int64 // -1 absent, 0 persistent, else expire time
		wantDirty bool
		wantExp   bool // EXEC would fail for expiry (Watcher.Expired)
	}
	for _, c := range []tc{
		{"absent both", -1, -1, false, false},
		{"in watched db", 0, -1, true, false},
		{"in other db", -1, 0, true, false},
		{"in both", 0, 0, true, false},
		{"expired here, absent there", 900, -1, false, false},
		{"expired here, live there", 900, 0, true, false},
		{"expired here, expired there", 900, 800, false, false},
		{"absent here, expired there", -1, 900, false, false},
		{"live here, expired there", 0, 900, true, true},
	} {
		ks := watchKS()
		if c.in0 >= 0 {
			setStr(ks.DBs[0], "k", "v", c.in0)
		}
		if c.in1 >= 0 {
			setStr(ks.DBs[1], "k", "v", c.in1)
		}
		var w Watcher
		ks.DBs[0].Watch(&w, "k")
		ks.Swap(0, 1)
		if w.Dirty != c.wantDirty || w.Expired() != c.wantExp {
			t.Errorf("%s: dirty %v expired %v, want %v %v", c.name, w.Dirty, w.Expired(), c.wantDirty, c.wantExp)
		}
	}
}

// TestWatchNoWatchersCost checks that writes stay allocation-free when
// nothing is watched and the registry is empty again after UNWATCH.
func TestWatchNoWatchersCost(t *testing.T) {
	ks := watchKS()
	db := ks.DBs[0]
	o := NewInt(1)
	db.Set("k", o, false)
	var w Watcher
	db.Watch(&w, "other")
	w.Unwatch()
	if n := testing.AllocsPerRun(100, func() { db.Modified("k") }); n != 0 {
		t.Fatalf("Modified allocates %v times", n)
	}
}

// TestWatchJournal: writes of a script that is undone leave watchers as
// they were; those of a script that stands are seen.
func TestWatchJournal(t *testing.T) {
	ks := watchKS()
	db := ks.DBs[0]
	setStr(db, "k", "v", 0)
	setStr(db, "old", "v", 900) // expired, not reclaimed
	var clean, already, old Watcher
	db.Watch(&clean, "k")
	db.Watch(&already, "k")
	db.Watch(&old, "old")
	already.Dirty = true

	ks.StartWatchJournal()
	setStr(db, "k", "w", 0)
	db.Lookup("old") // reclaims it: the watch becomes one of an absent key
	db.Delete("k")   // the undo writes touch the key again
	setStr(db, "k", "v", 0)
	ks.EndWatchJournal(true)
	if clean.Dirty || !already.Dirty || old.Dirty {
		t.Fatalf("after undo: clean %v already %v old %v", clean.Dirty, already.Dirty, old.Dirty)
	}
	// The expired flag is back: setting the key now is still a change, but
	// its reclamation would not have been.
	if !old.keys[0].expired {
		t.Fatal("the expired flag was not restored")
	}

	ks.StartWatchJournal()
	setStr(db, "k", "x", 0)
	ks.EndWatchJournal(false)
	if !clean.Dirty {
		t.Fatal("a kept write went unseen")
	}
	setStr(db, "other", "x", 0)
	if len(ks.wj.dirtied) != 0 || ks.wj.on {
		t.Fatal("the journal still records")
	}
}
