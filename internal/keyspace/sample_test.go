package keyspace

import "testing"

// SampleN draws stored objects only, reaches every key, and follows a
// rehash (both tables).
func TestSampleN(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	var out [16]*Object
	if db.SampleN(false, out[:]) || db.SampleN(true, out[:]) {
		t.Fatal("an empty database sampled something")
	}
	seen := map[string]bool{}
	for i := range 300 {
		storeSet(db, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", int64(i%2)*1e12, false)
		if !db.SampleN(false, out[:]) {
			t.Fatal("no sample")
		}
		for _, o := range out {
			if o == nil || db.Peek(o.Key) != o {
				t.Fatalf("sampled %v, not a stored object", o)
			}
			seen[o.Key] = true
		}
	}
	for range 2000 {
		db.SampleN(false, out[:])
		for _, o := range out {
			seen[o.Key] = true
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d of 300 keys sampled", len(seen))
	}
	db.SampleN(true, out[:])
	for _, o := range out {
		if o.Expire == 0 {
			t.Fatalf("volatile sample %q has no TTL", o.Key)
		}
	}
}
