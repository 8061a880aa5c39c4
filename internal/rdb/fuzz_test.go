package rdb

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// Fuzz targets: arbitrary bytes never panic or hang the decoder, and what
// it accepts re-encodes to something it decodes to the same value.

func seedPayloads(f *testing.F) [][]byte {
	files, _ := filepath.Glob("testdata/*/*.dump")
	var out [][]byte
	for _, name := range files {
		p, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(p) < 4096 {
			out = append(out, p)
		}
	}
	return append(out, tsSeeds()...)
}

const fuzzNow = 1_700_000_000_000

func checkReencode(t *testing.T, body []byte, typ byte, opt Options) {
	o, _, err := DecodeValue(typ, body, opt)
	if err != nil {
		return
	}
	want := describe(o, fuzzNow)
	b, typ2, err := AppendValue(nil, o, EncodeOptions{Compress: true, Now: fuzzNow})
	if err != nil {
		t.Fatalf("re-encoding a decoded value: %v", err)
	}
	o2, n, err := DecodeValue(typ2, b, opt)
	if err != nil || n != len(b) {
		t.Fatalf("re-decoding: %v (%d of %d bytes)", err, n, len(b))
	}
	if got := describe(o2, fuzzNow); got != want && !shrunk(got, want) {
		t.Fatalf("round trip changed the value:\ngot  %.300s\nwant %.300s", got, want)
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, p := range seedPayloads(f) {
		f.Add(p[0], p[1:len(p)-10])
	}
	f.Add(byte(TypeString), []byte{0xc3, 0x05, 0x08, 1, 'a', 'b', 4 << 5, 1})
	opt := DefaultOptions()
	opt.Now = fuzzNow
	opt.Hash.MaxListpackEntries = 4 // reach the conversions with small inputs
	opt.Set.MaxIntsetEntries = 4
	opt.Set.MaxListpackEntries = 4
	opt.ZSet.MaxEntries = 4
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		checkReencode(t, body, typ, opt)
	})
}

func FuzzRestorePayload(f *testing.F) {
	for _, p := range seedPayloads(f) {
		f.Add(p)
	}
	opt := DefaultOptions()
	opt.Now = fuzzNow
	f.Fuzz(func(t *testing.T, p []byte) {
		// As given: the footer almost never matches, which must be refused.
		if _, err := Restore(p, opt); err == nil {
			if _, err := VerifyPayload(p); err != nil {
				t.Fatal("Restore accepted a payload VerifyPayload refuses")
			}
		}
		// With the footer fixed up, the value decoder runs on the bytes.
		if len(p) < 1 {
			return
		}
		body := p[:len(p)-min(len(p)-1, 10)]
		q := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), Version)
		q = binary.LittleEndian.AppendUint64(q, checksum(q))
		if _, err := VerifyPayload(q); err != nil {
			t.Fatalf("fixed-up payload refused: %v", err)
		}
		_, _ = Restore(q, opt)
		checkReencode(t, body[1:], body[0], opt)
	})
}

// FuzzLoadFile feeds whole files to the loader, with the checksum fixed up
// (and, on a coin flip, zeroed) so the structure is what gets exercised.
func FuzzLoadFile(f *testing.F) {
	if b, err := os.ReadFile("testdata/redis70.rdb"); err == nil {
		f.Add(b[:min(len(b), 2000)], true)
	}
	f.Add([]byte("REDIS0010\xfa\x09redis-ver\x067.0.15\xfe\x00\xfb\x01\x00\x00\x01k\x01v\xff"), false)
	f.Add(tsFileSeed(), false)
	f.Add([]byte("REDIS0012\xfe\x01\xfc\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01k\xc0\x05\xff"), true)
	opt := DefaultOptions()
	opt.Now = fuzzNow
	f.Fuzz(func(t *testing.T, b []byte, zero bool) {
		if len(b) >= 9+8+1 {
			b = append([]byte(nil), b...)
			crc := uint64(0)
			if !zero {
				crc = checksum(b[:len(b)-8])
			}
			binary.LittleEndian.PutUint64(b[len(b)-8:], crc)
		}
		keys := 0
		l := &Loader{Opt: opt,
			Key:      func(int, *keyspace.Object) error { keys++; return nil },
			Function: func([]byte) error { return nil }}
		info, err := l.Load(b)
		if err == nil {
			n := 0
			for _, c := range info.Keys {
				n += c
			}
			if n != keys {
				t.Fatalf("info counts %d keys, %d handed over", n, keys)
			}
		}
	})
}
