package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"
)

// TestObjectLayout pins what the dict's speed and the memory per key rely
// on: an Object is 64 bytes (a size class of its own, no waste, one cache
// line), and what a chain walk reads lies in its first 32 bytes.
func TestObjectLayout(t *testing.T) {
	var o Object
	if n := unsafe.Sizeof(o); n != 64 {
		t.Errorf("Object is %d bytes, want 64", n)
	}
	for name, end := range map[string]uintptr{
		"Key":  unsafe.Offsetof(o.Key) + unsafe.Sizeof(o.Key),
		"next": unsafe.Offsetof(o.next) + unsafe.Sizeof(o.next),
		"htag": unsafe.Offsetof(o.htag) + unsafe.Sizeof(o.htag),
	} {
		if end > 32 {
			t.Errorf("%s ends at byte %d, beyond the first 32", name, end)
		}
	}
}

// TestDictModel runs random puts, gets and deletes against a map, through
// growth, rehashing and shrinking, and checks every answer and, now and
// then, that a full scan returns exactly the model's keys.
func TestDictModel(t *testing.T) {
	for _, space := range []int{8, 300, 20000} {
		r := rand.New(rand.NewPCG(uint64(space), 1))
		d := newDict()
		model := map[string]*Object{}
		for step := 0; step < 60000; step++ {
			k := "k:" + strconv.Itoa(r.IntN(space))
			switch op := r.IntN(10); {
			case op < 5:
				o := &Object{Key: k}
				old := d.Put(o)
				if old != model[k] {
					t.Fatalf("space %d step %d: Put(%q) replaced %p, model %p", space, step, k, old, model[k])
				}
				model[k] = o
			case op < 8:
				if got := d.Get(k); got != model[k] {
					t.Fatalf("space %d step %d: Get(%q) = %p, model %p", space, step, k, got, model[k])
				}
			default:
				if got := d.Delete(k); got != model[k] {
					t.Fatalf("space %d step %d: Delete(%q) = %p, model %p", space, step, k, got, model[k])
				}
				delete(model, k)
			}
			if d.Len() != len(model) {
				t.Fatalf("space %d step %d: Len %d, model %d", space, step, d.Len(), len(model))
			}
			if step%5000 == 0 {
				seen := map[string]int{}
				var c uint64
				for {
					c = d.Scan(c, func(o *Object) { seen[o.Key]++ })
					if c == 0 {
						break
					}
				}
				if len(seen) != len(model) {
					t.Fatalf("space %d step %d: scan saw %d keys, model has %d", space, step, len(seen), len(model))
				}
				for k := range model {
					if seen[k] == 0 {
						t.Fatalf("space %d step %d: scan missed %q", space, step, k)
					}
				}
			}
		}
	}
}

// TestDictScanAcrossResize checks SCAN's guarantee while the table grows
// and shrinks between calls: a key present for the whole scan is returned.
func TestDictScanAcrossResize(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 20; round++ {
		d := newDict()
		stable := map[string]bool{}
		for i := 0; i < 500; i++ {
			k := "s:" + strconv.Itoa(i)
			stable[k] = true
			d.Put(&Object{Key: k})
		}
		seen := map[string]bool{}
		var c uint64
		tmp := 0
		for calls := 0; ; calls++ {
			c = d.Scan(c, func(o *Object) { seen[o.Key] = true })
			if c == 0 {
				break
			}
			// Grow or shrink with keys that come and go, for a while (a
			// table that keeps growing faster than the scan moves would
			// keep it going forever).
			if calls > 300 {
				continue
			}
			if round%2 == 0 {
				for i := 0; i < r.IntN(200); i++ {
					d.Put(&Object{Key: "t:" + strconv.Itoa(tmp)})
					tmp++
				}
			} else if tmp > 0 {
				for i := 0; i < r.IntN(200) && tmp > 0; i++ {
					tmp--
					d.Delete("t:" + strconv.Itoa(tmp))
				}
			} else {
				for i := 0; i < 5000; i++ {
					d.Put(&Object{Key: "t:" + strconv.Itoa(tmp)})
					tmp++
				}
			}
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("round %d: scan missed %q", round, k)
			}
		}
	}
}

// TestDictTagCollisions puts keys whose hashes share the tag byte and the
// bucket in one chain: the key bytes still decide.
// (24 keys sharing the low 5 bits stay in one bucket: the table has 32
// buckets until it holds 32 keys.)
func TestDictTagCollisions(t *testing.T) {
	d := newDict()
	var same []string
	first := d.hash("c:0")
	for i := 0; len(same) < 24; i++ {
		k := "c:" + strconv.Itoa(i)
		if h := d.hash(k); tagOf(h) == tagOf(first) && h&31 == first&31 {
			same = append(same, k)
		}
	}
	objs := map[string]*Object{}
	for _, k := range same {
		objs[k] = &Object{Key: k}
		if old := d.Put(objs[k]); old != nil {
			t.Fatalf("Put(%q) replaced %q", k, old.Key)
		}
	}
	for d.rehashing() {
		d.rehashStep(100)
	}
	if n := len(d.t[0]); n != 32 {
		t.Fatalf("table has %d buckets, want 32", n)
	}
	chain := 0
	for o := d.t[0][first&31]; o != nil; o = o.next {
		chain++
	}
	if chain != len(same) {
		t.Fatalf("chain of %d, want %d", chain, len(same))
	}
	for _, k := range same {
		if got := d.Get(k); got != objs[k] {
			t.Fatalf("Get(%q) = %v", k, got)
		}
	}
	for i, k := range same {
		if i%2 == 0 {
			if got := d.Delete(k); got != objs[k] {
				t.Fatalf("Delete(%q) = %v", k, got)
			}
		}
	}
	for i, k := range same {
		want := objs[k]
		if i%2 == 0 {
			want = nil
		}
		if got := d.Get(k); got != want {
			t.Fatalf("after deletes, Get(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestPrefetchReadOnly: prefetching present, absent and empty keys, more
// than a chunk of them, on an empty table and in the middle of a rehash,
// changes nothing.
func TestPrefetchReadOnly(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	var keys [][]byte
	for i := 0; i < 40; i++ {
		keys = append(keys, []byte("p:"+strconv.Itoa(i)))
	}
	keys = append(keys, []byte{}, nil)
	db.Prefetch(keys, 1) // empty table
	// 1025 keys: the table of 1024 buckets has just started growing.
	for i := 0; i < 1025; i++ {
		db.Set("p:"+strconv.Itoa(i*3), NewInt(int64(i)), false)
	}
	if !db.dict.rehashing() {
		t.Fatal("the table is not rehashing")
	}
	for step := 1; step <= 2; step++ {
		d := db.dict
		t0, t1, idx, used := len(d.t[0]), len(d.t[1]), d.rehashIdx, d.used
		db.Prefetch(keys, step)
		if len(d.t[0]) != t0 || len(d.t[1]) != t1 || d.rehashIdx != idx || d.used != used {
			t.Fatalf("step %d: prefetch changed the table", step)
		}
	}
}
