package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A snapshot handed out in runs of buckets (NextSnapshotRange) that a
// saver reads later, as a save's encoder does off the lock, yields exactly
// the keyspace at the moment: writes, inserts, deletes, renames, TTL
// changes, expiry, FLUSHDB, SWAPDB and rolled-back scripts between the
// hand-outs and the reads reach a run's bucket only after the guard took
// it over (read it as it was), and the runs read afterwards see no key
// added or removed since the moment. The saver here reads a run whole
// between two commands (the real one makes the guard wait instead).
func TestSnapshotRangesArePointInTime(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		ks := New(4)
		ks.Now = 1000
		for i := 0; i < 200+r.IntN(300); i++ {
			db := ks.DBs[r.IntN(3)]
			o := NewString([]byte(fmt.Sprint("v", i)))
			if r.IntN(4) == 0 {
				o.Expire = 500 + int64(r.IntN(2000))
			}
			db.Set(fmt.Sprint("k", r.IntN(400)), o, false)
		}
		want := modelNow(ks)
		ks.BeginSnapshot(ks.Now)
		got := snapModel{}
		seen := map[string]bool{}
		record := func(db int, o *Object) {
			k := fmt.Sprintf("%d/%s", db, o.Key)
			if seen[k] {
				t.Fatalf("seed %d: %s written twice", seed, k)
			}
			seen[k] = true
			got[k] = fmt.Sprintf("%s@%d", o.Bytes(nil), o.Expire)
		}
		type run struct {
			r     SnapshotRange
			taken map[int]bool
		}
		var pending []*run
		var cur *run
		ks.SetSnapshotGuard(func(p SnapshotPos, o *Object) {
			for _, x := range pending {
				if b, ok := x.r.Has(p); ok && !x.taken[b] {
					x.taken[b] = true
					x.r.Bucket(b, func(o *Object) { record(x.r.DB, o) })
				}
			}
		})
		read := func(x *run) {
			for b := x.r.Lo; b < x.r.Hi; b++ {
				if !x.taken[b] {
					x.r.Bucket(b, func(o *Object) {
						var c Object
						SnapshotLoad(&c, o)
						record(x.r.DB, &c)
					})
				}
			}
		}
		more := true
		for step := 0; more || len(pending) > 0; step++ {
			if more && (len(pending) < 4 || r.IntN(2) == 0) {
				cur = &run{taken: map[int]bool{}}
				var rr SnapshotRange
				rr, more = ks.NextSnapshotRange(1+r.IntN(8), record, func(i int) { cur.taken[i] = true })
				// taken got offsets: make them bucket indexes.
				taken := map[int]bool{}
				for i := range cur.taken {
					taken[rr.Lo+i] = true
				}
				cur.r, cur.taken = rr, taken
				if !rr.Empty() {
					pending = append(pending, cur)
				}
			} else if len(pending) > 0 {
				read(pending[0])
				pending = pending[1:]
			}
			for n := r.IntN(6); n > 0; n-- {
				snapMutate(r, ks, step)
			}
		}
		ks.EndSnapshot()
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d keys, want %d", seed, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("seed %d: %s = %q, want %q", seed, k, got[k], v)
			}
		}
	}
}
