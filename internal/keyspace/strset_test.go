package keyspace

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

func storeSet(db *DB, key, val string, at int64, keepTTL bool) {
	db.StoreString(db.Lookup(key), []byte(key), []byte(val), at, keepTTL)
}

func TestStoreStringNewKey(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	for _, tc := range []struct {
		val string
		enc uint8
	}{
		{"12345", EncInt}, {"-7", EncInt}, {"007", EncEmbstr}, {"", EncEmbstr},
		{"value-of-sixteen", EncEmbstr}, {string(bytes.Repeat([]byte("x"), 44)), EncEmbstr},
		{string(bytes.Repeat([]byte("x"), 45)), EncRaw},
	} {
		key := "k:" + tc.val
		buf := []byte(key)
		db.StoreString(nil, buf, []byte(tc.val), 0, false)
		buf[0] = 'X' // the key was copied
		o := db.Lookup(key)
		if o == nil || o.Key != key || o.Type != TypeString || o.Enc != tc.enc {
			t.Fatalf("%q: got %+v", tc.val, o)
		}
		if got := string(o.Bytes(nil)); got != tc.val {
			t.Fatalf("%q: value %q", tc.val, got)
		}
		// The value shares the key's allocation: growing it must not
		// touch the key.
		if o.Enc != EncInt {
			o.SetRaw(append(o.Raw(), "tail"...))
			if o.Key != key {
				t.Fatalf("%q: key became %q after an append", tc.val, o.Key)
			}
		}
	}
	// The empty key.
	db.StoreString(nil, []byte{}, []byte("v"), 0, false)
	if o := db.Lookup(""); o == nil || string(o.Raw()) != "v" {
		t.Fatalf("empty key: %+v", o)
	}
}

func TestStoreStringOverwrite(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	ks.Now = 5000
	storeSet(db, "k", "first-value", 0, false)
	o := db.Lookup("k")
	buf := &o.Raw()[0]
	ks.Now = 9000
	storeSet(db, "k", "second", 0, false)
	if db.Lookup("k") != o {
		t.Fatal("a string key got a new object")
	}
	if string(o.Raw()) != "second" || o.Enc != EncEmbstr || &o.Raw()[0] != buf || o.LRU != 9 {
		t.Fatalf("after overwrite: %q enc %d LRU %d, same buffer %v", o.Raw(), o.Enc, o.LRU, &o.Raw()[0] == buf)
	}
	storeSet(db, "k", "42", 0, false)
	if o.Enc != EncInt || o.Int() != 42 || o.Raw() != nil {
		t.Fatalf("int overwrite: %+v", o)
	}
	storeSet(db, "k", "back-to-text", 0, false)
	if o.Enc != EncEmbstr || o.Int() != 0 || string(o.Raw()) != "back-to-text" {
		t.Fatalf("text after int: %+v", o)
	}
	// A big buffer left by APPEND is not kept for a small value.
	o.SetRaw(append(o.Raw(), bytes.Repeat([]byte("y"), 4096)...))
	o.Enc = EncRaw
	storeSet(db, "k", "small", 0, false)
	if cap(o.Raw()) > 64 || string(o.Raw()) != "small" {
		t.Fatalf("kept a buffer of %d bytes for %q", cap(o.Raw()), o.Raw())
	}
	o.Owned = true
	storeSet(db, "k", "7", 0, false)
	if o.Owned {
		t.Fatal("Owned survived SET")
	}
}

func TestStoreStringTTL(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	ks.Now = 1000
	storeSet(db, "a", "v", 5000, false)
	if o := db.Lookup("a"); o.Expire != 5000 || db.ExpiresLen() != 1 {
		t.Fatalf("new key with TTL: expire %d, heap %d", o.Expire, db.ExpiresLen())
	}
	storeSet(db, "a", "w", 0, true) // KEEPTTL
	if o := db.Lookup("a"); o.Expire != 5000 || db.ExpiresLen() != 1 {
		t.Fatalf("KEEPTTL: expire %d, heap %d", o.Expire, db.ExpiresLen())
	}
	storeSet(db, "a", "x", 7000, false) // new TTL on the same object
	if o := db.Lookup("a"); o.Expire != 7000 || db.ExpiresLen() != 1 {
		t.Fatalf("new TTL: expire %d, heap %d", o.Expire, db.ExpiresLen())
	}
	storeSet(db, "a", "y", 0, false) // plain SET drops the TTL
	if o := db.Lookup("a"); o.Expire != 0 || db.ExpiresLen() != 0 {
		t.Fatalf("plain SET: expire %d, heap %d", o.Expire, db.ExpiresLen())
	}
	// A key of another type is replaced by a new object; KEEPTTL keeps
	// its TTL.
	db.Set("l", NewValue(TypeList, "list"), false)
	db.SetExpire(db.Lookup("l"), 8000)
	storeSet(db, "l", "s", 0, true)
	if o := db.Lookup("l"); o.Type != TypeString || o.Val() != nil || o.Expire != 8000 || db.ExpiresLen() != 1 {
		t.Fatalf("over a list with KEEPTTL: %+v, heap %d", o, db.ExpiresLen())
	}
	// An expired key is not overwritten in place: the lookup reclaims it.
	ks.Now = 9000
	storeSet(db, "l", "t", 0, false)
	if o := db.Lookup("l"); o.Expire != 0 || string(o.Raw()) != "t" || ks.Stats.ExpiredKeys != 1 || db.ExpiresLen() != 0 {
		t.Fatalf("after expiry: %+v expired %d heap %d", o, ks.Stats.ExpiredKeys, db.ExpiresLen())
	}
}

// TestStoreStringModel compares random SETs, with and without TTLs, with
// what NewString and Set would have stored.
func TestStoreStringModel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	ks := New(1)
	db := ks.DBs[0]
	model := map[string]string{}
	ttl := map[string]int64{}
	vals := []string{"", "0", "1", "-1", "12345678901234567890", "99999999999999999999", "abc", "x y", "00", " 1",
		string(bytes.Repeat([]byte("z"), 44)), string(bytes.Repeat([]byte("z"), 100))}
	for step := 0; step < 20000; step++ {
		k := "k" + strconv.Itoa(r.IntN(50))
		v := vals[r.IntN(len(vals))]
		var at int64
		if r.IntN(4) == 0 {
			at = int64(1000 + r.IntN(1000))
		}
		keep := at == 0 && r.IntN(3) == 0
		storeSet(db, k, v, at, keep)
		model[k] = v
		if !keep {
			ttl[k] = at
		}
		want := NewString([]byte(v))
		o := db.Lookup(k)
		if o.Enc != want.Enc || string(o.Bytes(nil)) != v || o.Expire != ttl[k] {
			t.Fatalf("step %d: SET %s %q: enc %d expire %d, want enc %d expire %d", step, k, v, o.Enc, o.Expire, want.Enc, ttl[k])
		}
	}
	n := 0
	for _, at := range ttl {
		if at != 0 {
			n++
		}
	}
	if db.ExpiresLen() != n || db.Len() != len(model) {
		t.Fatalf("heap %d (want %d), keys %d (want %d)", db.ExpiresLen(), n, db.Len(), len(model))
	}
}

// TestHotPathAllocs guards what GET and SET of an existing key cost: a
// lookup by a key converted from the request's bytes, and an overwrite of
// a string, allocate nothing. (A key parameter that leaks, say into a map,
// makes every caller's conversion allocate.)
func TestHotPathAllocs(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	key, val := []byte("key:000000012345"), []byte("value-of-sixteen")
	db.StoreString(nil, key, val, 0, false)
	if n := testing.AllocsPerRun(100, func() {
		if db.LookupRead(string(key)) == nil {
			t.Fatal("missing")
		}
	}); n != 0 {
		t.Errorf("LookupRead allocates %.1f times", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		db.StoreString(db.Lookup(string(key)), key, val, 0, false)
	}); n != 0 {
		t.Errorf("SET of an existing string allocates %.1f times", n)
	}
}
