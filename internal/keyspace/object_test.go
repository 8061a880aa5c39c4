package keyspace

import (
	"bytes"
	"math"
	"runtime"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
)

func TestObjectStringCell(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 42, math.MaxInt64, math.MinInt64} {
		o := NewInt(v)
		if o.Enc != EncInt || o.Int() != v || o.Raw() != nil || string(o.Bytes(nil)) != strconv.FormatInt(v, 10) {
			t.Errorf("int %d: enc %d Int %d Raw %q Bytes %q", v, o.Enc, o.Int(), o.Raw(), o.Bytes(nil))
		}
		if o.StrLen() != len(strconv.FormatInt(v, 10)) {
			t.Errorf("int %d: StrLen %d", v, o.StrLen())
		}
	}
	b := make([]byte, 5, 100)
	copy(b, "hello")
	o := NewRaw(b)
	if r := o.Raw(); string(r) != "hello" || cap(r) != 100 || &r[0] != &b[0] || o.Int() != 0 || o.StrLen() != 5 {
		t.Fatalf("raw: %q cap %d Int %d", r, cap(r), o.Int())
	}
	o.Raw()[0] = 'j' // writes go to the value
	if string(o.Raw()) != "jello" {
		t.Fatalf("write through Raw: %q", o.Raw())
	}
	// Slack past the 24-bit field is dropped, the length kept.
	big := make([]byte, 3, 3+rawMaxSlack+10)
	o.SetRaw(big)
	if r := o.Raw(); len(r) != 3 || cap(r) != 3+rawMaxSlack {
		t.Fatalf("big slack: len %d cap %d", len(r), cap(r))
	}
	// nil and empty stay apart.
	o.SetRaw(nil)
	if o.Raw() != nil || o.StrLen() != 0 {
		t.Fatal("nil raw")
	}
	o.SetRaw([]byte{})
	if o.Raw() == nil || len(o.Raw()) != 0 {
		t.Fatal("empty raw became nil")
	}
	o.SetString([]byte("-17"))
	if o.Enc != EncInt || o.Int() != -17 || o.Raw() != nil {
		t.Fatalf("SetString int: %+v", o)
	}
	o.SetString(bytes.Repeat([]byte("x"), 50))
	if o.Enc != EncRaw || o.StrLen() != 50 || o.Int() != 0 {
		t.Fatalf("SetString raw: %+v", o)
	}
}

var objSink *Object

// A hash kept inside its Object behaves as one of its own, survives
// collections (the block is reachable only through the object), and costs
// the object and the block: two allocations for a five-field HSET.
func TestNewHashInline(t *testing.T) {
	lim := hash.DefaultLimits()
	var pairs [][]byte
	for i := 0; i < 5; i++ {
		pairs = append(pairs, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
	}
	allocs := testing.AllocsPerRun(50, func() {
		o, h := NewHash()
		objSink = o
		h.ReservePairs(pairs, lim)
		for i := 0; i < len(pairs); i += 2 {
			h.Set(0, pairs[i], pairs[i+1], lim)
		}
	})
	if allocs != 2 {
		t.Errorf("%v allocations, want 2", allocs)
	}
	objs := make([]*Object, 1000)
	for i := range objs {
		o, h := NewHash()
		if o.Val().(*hash.Hash) != h || o.Type != TypeHash {
			t.Fatal("Val is not the inline hash")
		}
		if i%3 == 0 { // some through SetVal, as RESTORE and COPY store them
			o = NewValue(TypeHash, hash.New())
			h = o.Val().(*hash.Hash)
		}
		for j := 0; j < 5+i%200; j++ { // some convert to the large form
			h.Set(0, []byte("f"+strconv.Itoa(j)), []byte(strconv.Itoa(i*j)), lim)
		}
		objs[i] = o
	}
	runtime.GC()
	runtime.GC()
	for i, o := range objs {
		h := o.Val().(*hash.Hash)
		n := 5 + i%200
		if h.Len(0) != n {
			t.Fatalf("hash %d: %d fields, want %d", i, h.Len(0), n)
		}
		if v, ok := h.Get(0, []byte("f"+strconv.Itoa(n-1))); !ok || string(v) != strconv.Itoa(i*(n-1)) {
			t.Fatalf("hash %d: last field %q %v", i, v, ok)
		}
		want := hash.EncListpack
		if n > lim.MaxListpackEntries {
			want = hash.EncHashtable
		}
		if h.Encoding() != want {
			t.Fatalf("hash %d of %d fields: %s", i, n, h.Encoding())
		}
	}
}

// Val and SetVal carry any interface value through the cell, and a value
// reachable only through an object survives collections.
func TestObjectValCell(t *testing.T) {
	type big struct {
		a [4]int
		s string
	}
	objs := []*Object{
		NewValue(TypeList, &big{a: [4]int{1, 2, 3, 4}, s: "x"}),
		NewValue(TypeSet, []string{"a", "b"}),
		NewValue(TypeZSet, map[string]int{"k": 7}),
		NewValue(TypeStream, nil),
	}
	runtime.GC()
	runtime.GC()
	if b := objs[0].Val().(*big); b.a[3] != 4 || b.s != "x" {
		t.Fatalf("pointer value: %+v", b)
	}
	if s := objs[1].Val().([]string); len(s) != 2 || s[1] != "b" {
		t.Fatalf("slice value: %v", s)
	}
	if m := objs[2].Val().(map[string]int); m["k"] != 7 {
		t.Fatalf("map value: %v", m)
	}
	if objs[3].Val() != nil {
		t.Fatalf("nil value: %v", objs[3].Val())
	}
	o, _ := NewHash()
	o.SetVal(hash.New()) // replaces the inline hash
	if o.Enc == encInline || o.Val().(*hash.Hash) == nil {
		t.Fatal("SetVal kept the inline mark")
	}
	if NewInt(5).Val() != nil || NewRaw([]byte("x")).Val() != nil {
		t.Fatal("a string has a Val")
	}
}
