package keyspace

import (
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/ds/zset"
)

// Every data structure a key can hold keeps the Value contract.
var (
	_ Value = (*hash.Hash)(nil)
	_ Value = (*list.List)(nil)
	_ Value = (*set.Set)(nil)
	_ Value = (*zset.Set)(nil)
	_ Value = (*ts.Series)(nil)
)

func TestObjectEncoding(t *testing.T) {
	l := list.New(list.DefaultFill)
	l.PushBack([]byte("a"))
	inline, h := NewHash()
	h.Set(0, []byte("f"), []byte("v"), hash.DefaultLimits())
	for _, c := range []struct {
		o    *Object
		want string
	}{
		{NewString([]byte("12")), "int"},
		{NewString([]byte("short")), "embstr"},
		{NewString(make([]byte, EmbstrMaxLen+1)), "raw"},
		{NewRaw([]byte("x")), "raw"},
		{NewValue(TypeList, l), "quicklist"},
		{inline, "listpack"},
		{NewValue(TypeStream, nil), "unknown"},
		{NewValue(TypeSet, []string{"not a Value"}), "unknown"},
	} {
		if got := c.o.Encoding(); got != c.want {
			t.Errorf("%v %d: Encoding %q, want %q", c.o.Type, c.o.Enc, got, c.want)
		}
	}
}

// Copy shares nothing with the original, keeps a string's encoding and
// makes a copied integer a private object; a value outside the contract
// cannot be copied.
func TestObjectCopy(t *testing.T) {
	for _, o := range []*Object{NewInt(7), NewString([]byte("embstr")), NewRaw([]byte("raw")), NewRaw(nil)} {
		o.Expire, o.Key = 99, "k"
		c, ok := o.Copy()
		if !ok || c.Type != TypeString || c.Enc != o.Enc || string(c.Bytes(nil)) != string(o.Bytes(nil)) {
			t.Fatalf("copy of %+v: %+v %v", o, c, ok)
		}
		if c.Owned != (o.Enc == EncInt) || c.Expire != 0 || c.Key != "" {
			t.Errorf("copy of %+v: owned %v expire %d key %q", o, c.Owned, c.Expire, c.Key)
		}
		if r := c.Raw(); len(r) > 0 && &r[0] == &o.Raw()[0] {
			t.Errorf("copy of %q shares its bytes", r)
		}
	}

	o, h := NewHash()
	h.Set(0, []byte("f"), []byte("v"), hash.DefaultLimits())
	c, ok := o.Copy()
	if !ok || c.Type != TypeHash {
		t.Fatalf("hash copy: %+v %v", c, ok)
	}
	h.Set(0, []byte("f"), []byte("changed"), hash.DefaultLimits())
	if v, _ := c.Val().(*hash.Hash).Get(0, []byte("f")); string(v) != "v" {
		t.Errorf("hash copy sees the original's write: %q", v)
	}

	for _, o := range []*Object{NewValue(TypeStream, nil), NewValue(TypeSet, []string{"a"})} {
		if c, ok := o.Copy(); ok || c != nil {
			t.Errorf("copy of a %T value: %v %v", o.Val(), c, ok)
		}
	}
}
