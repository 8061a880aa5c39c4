package keyspace

import "fmt"

// Value is what the data structure of a stored non-string value provides:
// the types of internal/ds (*hash.Hash, *list.List, *set.Set, *zset.Set,
// *ts.Series) implement it, and everything that works on values of any
// type (COPY, OBJECT ENCODING, MEMORY USAGE, the undo journal, background
// saves) goes through it rather than through the value's concrete type.
//
// Strings are not Values: they live inline in the Object, and the Object's
// own methods (Encoding, Copy) handle them. The value's type is not part
// of the contract either: it is Object.Type, fixed when the object is made,
// because the ds packages stay leaves that cannot name keyspace.Type.
//
// An object may hold a value that does not implement Value (tests store
// stand-ins); such a value cannot be copied, and OBJECT ENCODING calls it
// "unknown".
type Value interface {
	// Encoding is the name OBJECT ENCODING replies with.
	Encoding() string
	// MemoryUsage estimates the bytes the value holds (MEMORY USAGE adds
	// the key's and the object's own overhead).
	MemoryUsage() int
	// CloneValue returns a deep copy, sharing nothing with the receiver,
	// of the same dynamic type. It is the type's typed Clone; it returns
	// any because the ds packages cannot name Value.
	CloneValue() any
}

// Encoding is OBJECT ENCODING's answer for o: "int", "embstr" or "raw" for
// a string, its Value's Encoding for any other type.
func (o *Object) Encoding() string {
	if o.Type == TypeString {
		switch o.Enc {
		case EncInt:
			return "int"
		case EncEmbstr:
			return "embstr"
		}
		return "raw"
	}
	if v, ok := o.Val().(Value); ok {
		return v.Encoding()
	}
	return "unknown"
}

// Copy returns a new object holding a deep copy of o's value, as COPY
// stores it (Redis's dupStringObject and the types' dup functions): no
// key and no TTL; a string keeps its encoding, and a copied integer is a
// private object (Owned: dupStringObject never returns a shared integer,
// so OBJECT REFCOUNT says 1). ok is false when o's value does not
// implement Value.
func (o *Object) Copy() (c *Object, ok bool) {
	if o.Type != TypeString {
		v, ok := o.Val().(Value)
		if !ok {
			return nil, false
		}
		return NewValue(o.Type, v.CloneValue()), true
	}
	if o.Enc == EncInt {
		c = NewInt(o.Int())
		c.Owned = true
		return c, true
	}
	c = NewRaw(nil)
	if raw := o.Raw(); raw != nil {
		c.SetRaw(append([]byte(nil), raw...))
	}
	c.Enc = o.Enc
	return c, true
}

// cloneValue deep-copies v, a non-string object's value, for the undo
// journal and snapshots, which must be able to copy every value they meet.
func cloneValue(v any) any {
	cv, ok := v.(Value)
	if !ok {
		panic(fmt.Sprintf("keyspace: a %T value cannot be copied: it does not implement Value", v))
	}
	return cv.CloneValue()
}
