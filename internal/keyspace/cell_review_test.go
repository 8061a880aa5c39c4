package keyspace

import (
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
)

// Review tests of the two-word cell: values whose type descriptors are not
// ordinary named types, journaled inline hashes, and the guard on SetVal.

type genericBox[T any] struct{ v T }

// A generic instantiation and a reflect-made type go through the cell. The
// reflect-made type's descriptor is on the heap: it is kept alive by
// reflect's type caches, not by the cell (whose type word the collector
// does not see), so it must come back intact after collections that had
// no other reference to the type in this function.
func TestCellGenericAndReflectTypes(t *testing.T) {
	mk := func(i int) any {
		st := reflect.StructOf([]reflect.StructField{
			{Name: "A", Type: reflect.TypeOf(0)},
			{Name: "S", Type: reflect.TypeOf("")},
		})
		p := reflect.New(st)
		p.Elem().Field(0).SetInt(int64(i))
		p.Elem().Field(1).SetString("s" + strconv.Itoa(i))
		return p.Interface()
	}
	objs := make([]*Object, 200)
	for i := range objs {
		switch i % 3 {
		case 0:
			objs[i] = NewValue(TypeList, &genericBox[[]string]{v: []string{strconv.Itoa(i)}})
		case 1:
			objs[i] = NewValue(TypeSet, mk(i))
		default:
			objs[i] = NewValue(TypeZSet, genericBox[int]{v: i}) // boxed non-pointer
		}
	}
	for range 3 {
		runtime.GC()
	}
	for i, o := range objs {
		switch i % 3 {
		case 0:
			if b := o.Val().(*genericBox[[]string]); b.v[0] != strconv.Itoa(i) {
				t.Fatalf("%d: generic box %v", i, b.v)
			}
		case 1:
			v := reflect.ValueOf(o.Val()).Elem()
			if v.Field(0).Int() != int64(i) || v.Field(1).String() != "s"+strconv.Itoa(i) || v.Type().Field(1).Name != "S" {
				t.Fatalf("%d: reflect-made value %v", i, v)
			}
		default:
			if b := o.Val().(genericBox[int]); b.v != i {
				t.Fatalf("%d: boxed value %v", i, b)
			}
		}
	}
}

// SetVal on a string object would put an interface's type word where Raw
// reads the length: it must refuse rather than let Raw hand out a slice
// over memory the string does not own.
func TestSetValOnStringPanics(t *testing.T) {
	for _, o := range []*Object{NewString([]byte("hello")), NewInt(7), NewRaw(nil)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetVal on a string object (enc %d) did not panic", o.Enc)
				}
			}()
			o.SetVal(hash.New())
		}()
		if o.Type != TypeString || len(o.Raw()) > 5 {
			t.Fatalf("string object changed: %+v", o)
		}
	}
}

// A journaled inline hash is saved as a separate copy (the journal keeps
// Objects by value, which an inline hash must never be), and after
// rollback the restored hash shares nothing with the one the script
// changed: writes through a pointer to the discarded hash do not show.
func TestUndoInlineHashIndependent(t *testing.T) {
	lim := hash.DefaultLimits()
	ks := New(1)
	db := ks.DBs[0]
	for k := 0; k < 40; k++ {
		o, h := NewHash()
		for j := 0; j < 3+k*5; j++ { // some pass 128 fields: the large form
			h.Set(0, []byte("f"+strconv.Itoa(j)), []byte("v"+strconv.Itoa(j)), lim)
		}
		db.Set("h"+strconv.Itoa(k), o, false)
	}
	var stale []*hash.Hash
	ks.BeginUndo()
	ks.SetUndoWrites(true)
	for k := 0; k < 40; k++ {
		o := db.Lookup("h" + strconv.Itoa(k))
		h := o.Val().(*hash.Hash)
		for j := 0; j < 50; j++ {
			h.Set(0, []byte("f"+strconv.Itoa(j)), []byte("changed-"+strconv.Itoa(j)), lim)
		}
		h.Delete(0, []byte("f1"))
		stale = append(stale, h)
		runtime.GC()
	}
	ks.Rollback()
	runtime.GC()
	for _, h := range stale { // the discarded hashes, still written to
		for j := 0; j < 300; j++ {
			h.Set(0, []byte("f"+strconv.Itoa(j)), []byte("after-"+strconv.Itoa(j)), lim)
		}
	}
	runtime.GC()
	for k := 0; k < 40; k++ {
		o := db.Lookup("h" + strconv.Itoa(k))
		h := o.Val().(*hash.Hash)
		n := 3 + k*5
		if h.Len(0) != n {
			t.Fatalf("h%d: %d fields after rollback, want %d", k, h.Len(0), n)
		}
		for j := 0; j < n; j++ {
			if v, ok := h.Get(0, []byte("f"+strconv.Itoa(j))); !ok || string(v) != "v"+strconv.Itoa(j) {
				t.Fatalf("h%d f%d = %q %v after rollback", k, j, v, ok)
			}
		}
	}
}
