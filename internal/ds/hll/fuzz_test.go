package hll

import (
	"bytes"
	"errors"
	"testing"
)

// endsInCutXZero reports whether the last opcode of a sparse value is an
// XZERO missing its second byte. Such values are corrupt but may still be
// accepted (Redis reads a NUL there), and rewriting that opcode can leave a
// value whose meaning depends on the byte past its end, so results on them
// are not compared with the model.
func endsInCutXZero(b []byte) bool {
	if len(b) <= HeaderSize || b[encOffset] != encSparse {
		return false
	}
	p := HeaderSize
	for p < len(b) {
		if isXZero(b[p]) {
			if p+1 == len(b) {
				return true
			}
			p += 2
		} else {
			p++
		}
	}
	return false
}

func fuzzSeeds(f *testing.F) [][]byte {
	g, _, _ := Add(nil, DefaultSparseMaxBytes, []byte("a"), []byte("b"), []byte("c"))
	d, _, _ := Add(nil, 0, []byte("a"), []byte("b"), []byte("c"))
	sparse := func(ops ...byte) []byte { return append(New()[:HeaderSize:HeaderSize], ops...) }
	return [][]byte{
		New(), g, d, {}, []byte("HYLL"),
		sparse(0x7f, 0xfe), sparse(0x7f, 0xfd, 0x83), sparse(0x3f, 0x3f, 0x3f, 0x3e, 0x7f),
		sparse(0x7f, 0x00, 0x84, 0x7e), sparse(0x80, 0x81, 0x82, 0x83, 0x7f, 0xf0, 0x00),
	}
}

// FuzzAdd: Add never panics, refuses bad headers without touching the
// value, never fails on a valid value, and on a valid value agrees with the
// register model.
func FuzzAdd(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, []byte("x\x00yy\x00zzz"), uint16(i*300))
	}
	f.Fuzz(func(t *testing.T, value, elemBytes []byte, limit uint16) {
		elems := bytes.Split(elemBytes, []byte{0})
		orig := value
		value = bytes.Clone(value) // Add works in place; fuzz inputs are read-only
		valid := Validate(value)
		out, changed, err := Add(value, int(limit), elems...)
		switch {
		case checkHeader(orig) != nil:
			if !errors.Is(err, ErrNotHLL) || !bytes.Equal(out, orig) {
				t.Fatalf("bad header: err %v, value changed %v", err, !bytes.Equal(out, orig))
			}
			return
		case err != nil && !errors.Is(err, ErrCorrupt):
			t.Fatalf("unexpected error %v", err)
		case valid != nil || endsInCutXZero(orig):
			return
		case err != nil:
			t.Fatalf("valid value refused: %v", err)
		}
		var m model
		copy(m[:], decode(t, orig)[:])
		want := false
		for _, e := range elems {
			want = m.add(e) || want
		}
		if changed != want || *decode(t, out) != [Registers]uint8(m) {
			t.Fatalf("changed %v (want %v) or registers differ from the model", changed, want)
		}
		if changed && cacheValid(out) {
			t.Fatal("cache valid after a change")
		}
	})
}

// FuzzCount: Count, CountMany and Merge never panic and refuse exactly the
// values Validate refuses (Count trusts a valid cache, as Redis does).
func FuzzCount(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		valid := Validate(value)
		orig := value
		value = bytes.Clone(value) // Count writes the cache in place
		_, _, err := Count(value)
		if checkHeader(orig) == nil && cacheValid(orig) {
			if err != nil {
				t.Fatalf("cached Count failed: %v", err)
			}
		} else if !errors.Is(err, valid) {
			t.Fatalf("Count error %v, Validate %v", err, valid)
		}
		copy(value, orig) // undo the cache update
		if _, err := CountMany(New(), value); !errors.Is(err, valid) {
			t.Fatalf("CountMany error %v, Validate %v", err, valid)
		}
		m, err := Merge(nil, DefaultSparseMaxBytes, value)
		if !errors.Is(err, valid) {
			t.Fatalf("Merge error %v, Validate %v", err, valid)
		}
		if err == nil && *decode(t, m) != *decode(t, orig) {
			t.Fatal("Merge into a new key changed registers")
		}
		if !bytes.Equal(value, orig) {
			t.Fatal("a read modified its input")
		}
	})
}
