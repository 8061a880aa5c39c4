package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHashSlot checks keys against the slots redis-server 7.0.15's CLUSTER
// KEYSLOT gives them, hash tags and their corner cases included.
func TestHashSlot(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":            12739,
		"foo":                  12182,
		"bar":                  5061,
		"hello":                866,
		"{user1000}.following": 3443,
		"foo{}{bar}":           8363, // empty tag: the whole key
		"foo{{bar}}zap":        4015, // the tag is "{bar"
		"foo{bar}{zap}":        5061, // the first tag: "bar"
		"{}":                   15257,
		"{":                    4092,
		"}":                    12090,
		"a{b":                  13340,
		"":                     0,
		"{a}":                  15495,
	} {
		if got := HashSlot([]byte(key)); got != want {
			t.Errorf("HashSlot(%q) = %d, want %d", key, got, want)
		}
		if got := HashSlotString(key); got != want {
			t.Errorf("HashSlotString(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestCRC16 checks the two-bytes-a-step CRC against the plain one.
func TestCRC16(t *testing.T) {
	plain := func(b []byte) uint16 {
		var c uint16
		for _, x := range b {
			c = c<<8 ^ crc16tab[byte(c>>8)^x]
		}
		return c
	}
	if got := crc16([]byte("123456789")); got != 0x31c3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		b := make([]byte, n%40)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if crc16(b) != plain(b) {
			t.Fatalf("crc16(%x) = %#x, want %#x", b, crc16(b), plain(b))
		}
	}
}

// checkSlots compares every database's slot index with its keys.
func checkSlots(t *testing.T, ks *Keyspace, what string) {
	t.Helper()
	for _, db := range ks.DBs {
		want := map[int][]string{}
		db.ForEach(func(o *Object) {
			s := HashSlotString(o.Key)
			want[s] = append(want[s], o.Key)
		})
		got := 0
		for s := range NumSlots {
			if n := db.CountKeysInSlot(s); n != len(want[s]) {
				t.Fatalf("%s: db %d slot %d: count %d, want %d", what, db.ID, s, n, len(want[s]))
			}
			got += db.CountKeysInSlot(s)
		}
		if got != db.Len() {
			t.Fatalf("%s: db %d: %d keys indexed, %d stored", what, db.ID, got, db.Len())
		}
		for s, keys := range want {
			var listed []string
			for _, k := range db.KeysInSlot(s, len(keys)+5) {
				listed = append(listed, string(k))
			}
			slices.Sort(keys)
			slices.Sort(listed)
			if !slices.Equal(keys, listed) {
				t.Fatalf("%s: db %d slot %d: listed %q, want %q", what, db.ID, s, listed, keys)
			}
		}
		// Every indexed object is the one the table holds.
		if x := db.dict.slots; x != nil {
			for s, sk := range x.slots {
				if sk == nil {
					continue
				}
				for o, i := range sk.pos {
					if sk.objs[i] != o || db.dict.Get(o.Key) != o || HashSlotString(o.Key) != s {
						t.Fatalf("%s: db %d slot %d: stale entry %q", what, db.ID, s, o.Key)
					}
				}
			}
		}
	}
}

// TestSlotIndexFollowsWrites runs the undo tests' random writes (sets,
// deletes, expiry, flushes, SWAPDB, moves) on a keyspace with few slots in
// use, inside journals that are rolled back or committed, under snapshots,
// and checks the index after each step.
func TestSlotIndexFollowsWrites(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		ks := New(3)
		ks.Now = 1000
		if seed%2 == 0 {
			ks.IndexSlots() // on before the first key; otherwise built below
		}
		for i := 0; i < 60; i++ {
			db := ks.DBs[r.IntN(3)]
			o := NewString([]byte("v"))
			if r.IntN(3) == 0 {
				o.Expire = 1000 + int64(r.IntN(50))
			}
			db.Set(fmt.Sprintf("{t%d}k%d", r.IntN(3), r.IntN(40)), o, false)
		}
		ks.IndexSlots()
		checkSlots(t, ks, fmt.Sprint("seed ", seed, " start"))
		for step := 0; step < 6; step++ {
			what := fmt.Sprint("seed ", seed, " step ", step)
			switch r.IntN(4) {
			case 0:
				ks.BeginUndo()
				mutate(ks, r, 40)
				ks.Rollback()
			case 1:
				ks.BeginUndo()
				mutate(ks, r, 40)
				ks.Commit()
			case 2:
				ks.BeginSnapshot(ks.Now)
				mutate(ks, r, 40)
				ks.EndSnapshot()
			default:
				mutate(ks, r, 40)
			}
			checkSlots(t, ks, what)
		}
		from := New(3)
		from.DBs[1].Set("{t1}loaded", NewString([]byte("x")), false)
		ks.Adopt(from)
		checkSlots(t, ks, fmt.Sprint("seed ", seed, " adopted"))
	}
}

// TestSlotIndexOrder checks Redis's listing order: newest first, an
// overwritten key keeping its place, and count bounding the listing.
func TestSlotIndexOrder(t *testing.T) {
	ks := New(1)
	ks.IndexSlots()
	db := ks.DBs[0]
	for _, k := range []string{"{s}a", "{s}b", "{s}c", "{s}d"} {
		db.Set(k, NewString([]byte("1")), false)
	}
	db.Set("{s}b", NewString([]byte("2")), false)
	db.Delete("{s}c")
	slot := HashSlotString("s")
	got := fmt.Sprintf("%q", db.KeysInSlot(slot, 10))
	if want := `["{s}d" "{s}b" "{s}a"]`; got != want {
		t.Fatalf("KeysInSlot = %s, want %s", got, want)
	}
	if got := fmt.Sprintf("%q", db.KeysInSlot(slot, 2)); got != `["{s}d" "{s}b"]` {
		t.Fatalf("KeysInSlot count 2 = %s", got)
	}
	if n := db.CountKeysInSlot(slot); n != 3 {
		t.Fatalf("CountKeysInSlot = %d, want 3", n)
	}
	// Many removals compact the slot's list without losing its order.
	for i := range 100 {
		db.Set(fmt.Sprint("{s}x", i), NewString([]byte("1")), false)
	}
	for i := range 99 {
		db.Delete(fmt.Sprint("{s}x", i))
	}
	got = fmt.Sprintf("%q", db.KeysInSlot(slot, 10))
	if want := `["{s}x99" "{s}d" "{s}b" "{s}a"]`; got != want {
		t.Fatalf("after compaction KeysInSlot = %s, want %s", got, want)
	}
}

// TestDelKeysInSlot checks that every key of the slot goes, expired ones
// included, with the writes signalled and the callback called per key,
// and that other slots are left alone.
func TestDelKeysInSlot(t *testing.T) {
	ks := New(1)
	ks.Now = 1000
	ks.IndexSlots()
	db := ks.DBs[0]
	var touched []string
	ks.Touched = func(_ *DB, key string) { touched = append(touched, key) }
	db.Set("{s}a", NewString([]byte("1")), false)
	o := NewString([]byte("1"))
	o.Expire = 500 // expired, not reclaimed yet
	db.Set("{s}b", o, false)
	db.Set("other", NewString([]byte("1")), false)
	touched = nil
	var deleted []string
	if n := db.DelKeysInSlot(HashSlotString("s"), func(k string) { deleted = append(deleted, k) }); n != 2 {
		t.Fatalf("DelKeysInSlot = %d, want 2", n)
	}
	if fmt.Sprint(deleted) != "[{s}b {s}a]" || fmt.Sprint(touched) != "[{s}b {s}a]" {
		t.Fatalf("deleted %v, touched %v", deleted, touched)
	}
	if db.Len() != 1 || db.ExpiresLen() != 0 || db.Peek("other") == nil {
		t.Fatalf("left %d keys, %d TTLs", db.Len(), db.ExpiresLen())
	}
	if ks.Stats.ExpiredKeys != 0 {
		t.Fatalf("a deleted key counted as expired")
	}
}

// TestSlotIndexOff checks that without IndexSlots no table has an index
// and the slot calls answer nothing.
func TestSlotIndexOff(t *testing.T) {
	ks := New(2)
	db := ks.DBs[0]
	db.Set("foo", NewString([]byte("1")), false)
	db.Flush()
	db.Set("foo", NewString([]byte("1")), false)
	if db.dict.slots != nil || ks.SlotsIndexed() {
		t.Fatal("index made with cluster mode off")
	}
	if db.CountKeysInSlot(12182) != 0 || db.KeysInSlot(12182, 10) != nil || db.DelKeysInSlot(12182, nil) != 0 {
		t.Fatal("slot calls answered with the index off")
	}
	if db.Len() != 1 {
		t.Fatal("DelKeysInSlot deleted with the index off")
	}
}

func BenchmarkHashSlot(b *testing.B) {
	key := []byte("user:1000:profile")
	for b.Loop() {
		HashSlot(key)
	}
}
