package keyspace

import "testing"

func TestDeleteEvictedRecycles(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	storeSet(db, "a", "value-a", 0, false)
	storeSet(db, "n", "12", 0, false)
	old := db.Lookup("a")
	if !db.DeleteEvicted("a") || db.Lookup("a") != nil {
		t.Fatal("a not deleted")
	}
	if len(ks.spare) != 1 || ks.spare[0] != old || *old != (Object{}) {
		t.Fatalf("spare %v: want a's object, zeroed", ks.spare)
	}
	storeSet(db, "b", "value-b", 1e12, false)
	o := db.Lookup("b")
	if o != old || len(ks.spare) != 0 {
		t.Fatal("b did not take the spare object")
	}
	if string(o.Raw()) != "value-b" || o.Expire != 1e12 || o.Key != "b" || db.ExpiresLen() != 1 {
		t.Fatalf("b: %q expire %d key %q", o.Raw(), o.Expire, o.Key)
	}
	if db.DeleteEvicted("nosuch") || len(ks.spare) != 0 {
		t.Fatal("a missing key recycled something")
	}

	// An open journal or snapshot may hold the removed object: no reuse.
	ks.BeginUndo()
	db.DeleteEvicted("n")
	ks.Commit()
	ks.BeginSnapshot(0)
	db.DeleteEvicted("b")
	ks.EndSnapshot()
	if len(ks.spare) != 0 {
		t.Fatalf("recycled with a journal or snapshot open: %v", ks.spare)
	}
}
