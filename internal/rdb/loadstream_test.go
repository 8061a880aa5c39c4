package rdb_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"testing/iotest"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// pieces delivers its bytes a few at a time, each read a random size up
// to most.
type pieces struct {
	b    []byte
	most int
	rnd  *rand.Rand
}

func (p *pieces) Read(out []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(out[:min(len(out), 1+p.rnd.IntN(p.most))], p.b)
	p.b = p.b[n:]
	return n, nil
}

// streamFixture is redis70.rdb's keys plus many small keys and strings
// larger than the loader's window, written by WriteKeyspace.
func streamFixture(t *testing.T) []byte {
	b, err := os.ReadFile("testdata/redis70.rdb")
	if err != nil {
		t.Fatal(err)
	}
	ks := keyspace.New(16)
	var funcs [][]byte
	keep := func(code []byte) error { funcs = append(funcs, bytes.Clone(code)); return nil }
	if _, err := rdb.LoadKeyspace(ks, b, rdb.DefaultOptions(), keep); err != nil {
		t.Fatal(err)
	}
	db := ks.DBs[1]
	for i := range 20000 {
		k := fmt.Sprintf("k:%d", i)
		db.Add(k, keyspace.NewString([]byte(fmt.Sprintf("value %d %x", i, i*7919))))
	}
	for i, n := range []int{300 << 10, 1 << 20, 5 << 20} {
		v := make([]byte, n)
		for j := range v {
			v[j] = byte(j*31 + i)
		}
		k := fmt.Sprintf("big:%d", i)
		db.Add(k, keyspace.NewString(v))
	}
	var out bytes.Buffer
	if err := rdb.WriteKeyspace(&out, ks, []string{"repl-offset", "42"}, funcs, rdb.EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func noFuncs([]byte) error { return nil }

// dump renders every key of ks.
func dump(ks *keyspace.Keyspace) map[string]string {
	m := map[string]string{}
	for _, db := range ks.DBs {
		db.ForEach(func(o *keyspace.Object) {
			m[fmt.Sprintf("%d/%s", db.ID, o.Key)] = fmt.Sprintf("%d %s", o.Expire, content(o))
		})
	}
	return m
}

func sameDump(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d keys, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: key %s differs", what, k)
		}
	}
}

// A file read as it arrives, in pieces of any size, loads what loading it
// whole does, and hands back the bytes read past its end.
func TestLoadFromPieces(t *testing.T) {
	small, err := os.ReadFile("testdata/redis70.rdb")
	if err != nil {
		t.Fatal(err)
	}
	big := streamFixture(t)
	opt := rdb.DefaultOptions()
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, file := range [][]byte{small, big} {
		whole := keyspace.New(16)
		winfo, err := rdb.LoadKeyspace(whole, file, opt, noFuncs)
		if err != nil {
			t.Fatal(err)
		}
		want := dump(whole)
		trail := []byte("*1\r\n$4\r\nPING\r\n")
		srcs := map[string]io.Reader{
			"pieces of up to 7":    &pieces{b: append(bytes.Clone(file), trail...), most: 7, rnd: rnd},
			"pieces of up to 100k": &pieces{b: append(bytes.Clone(file), trail...), most: 100 << 10, rnd: rnd},
			"one read":             bytes.NewReader(append(bytes.Clone(file), trail...)),
		}
		if len(file) < 1<<20 {
			srcs["bytes"] = iotest.OneByteReader(bytes.NewReader(append(bytes.Clone(file), trail...)))
		}
		for name, src := range srcs {
			ks := keyspace.New(16)
			info, rest, err := rdb.LoadKeyspaceFrom(ks, src, opt, noFuncs)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// What the loader read past the end, and what it left unread,
			// are the trailing bytes.
			more, _ := io.ReadAll(src)
			if got := string(rest) + string(more); got != string(trail) {
				t.Fatalf("%s: bytes past the end %q", name, got)
			}
			if info.EOFOffset != winfo.EOFOffset || info.Checksum != winfo.Checksum {
				t.Fatalf("%s: EOF at %d checksum %x, want %d %x", name, info.EOFOffset, info.Checksum, winfo.EOFOffset, winfo.Checksum)
			}
			sameDump(t, name, dump(ks), want)
		}
	}
}

// A stream that ends early, or whose bytes were altered, fails.
func TestLoadFromBad(t *testing.T) {
	file := streamFixture(t)
	opt := rdb.DefaultOptions()
	for _, cut := range []int{0, 5, 9, 100, len(file) / 3, len(file) - 9, len(file) - 1} {
		_, _, err := rdb.LoadKeyspaceFrom(keyspace.New(16), bytes.NewReader(file[:cut]), opt, noFuncs)
		var ce *rdb.CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("stream cut at %d bytes: %v", cut, err)
		}
	}
	for _, at := range []int{len(file) / 2, len(file) - 12} {
		bad := bytes.Clone(file)
		bad[at] ^= 1
		if _, _, err := rdb.LoadKeyspaceFrom(keyspace.New(16), bytes.NewReader(bad), opt, noFuncs); err == nil {
			t.Errorf("byte %d flipped: accepted", at)
		}
	}
	// A read error is returned as it is.
	boom := errors.New("link down")
	src := io.MultiReader(bytes.NewReader(file[:len(file)/2]), iotest.ErrReader(boom))
	if _, _, err := rdb.LoadKeyspaceFrom(keyspace.New(16), src, opt, noFuncs); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
}
