package rdb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
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
			"last bytes with EOF":  iotest.DataErrReader(bytes.NewReader(append(bytes.Clone(file), trail...))),
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
		// The file's last bytes come with io.EOF, nothing after them.
		ks := keyspace.New(16)
		if _, rest, err := rdb.LoadKeyspaceFrom(ks, iotest.DataErrReader(bytes.NewReader(file)), opt, noFuncs); err != nil || len(rest) != 0 {
			t.Fatalf("file ending with io.EOF: %v, %d bytes past the end", err, len(rest))
		}
		sameDump(t, "file ending with io.EOF", dump(ks), want)
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

// mixedFile is a file of n keys shaped like bench/replbench's load: by
// i%10 five strings, an integer, a hash, a list, a set and a sorted set
// of 8 elements.
func mixedFile(b *testing.B, n int) []byte {
	ks := keyspace.New(16)
	db := ks.DBs[0]
	opt := rdb.DefaultOptions()
	for i := range n {
		k := fmt.Sprintf("key:%d", i)
		var o *keyspace.Object
		switch t := i % 10; {
		case t < 5:
			o = keyspace.NewString(fmt.Appendf(nil, "value:%d:%040d", i, 0))
		case t == 5:
			o = keyspace.NewInt(int64(i * 7))
		default:
			var p []byte
			for j := range 8 {
				switch t {
				case 6:
					p = fmt.Appendf(p, "HSET\x00field%d\x00v%d-%d\x00", j, i, j)
				case 7:
					p = fmt.Appendf(p, "RPUSH\x00e%d-%d\x00", j, i)
				case 8:
					p = fmt.Appendf(p, "SADD\x00%d\x00", i+j*3)
				case 9:
					p = fmt.Appendf(p, "ZADD\x00%d\x00m%d-%d\x00", j*10, j, i)
				}
			}
			// Built through a DUMP payload of a plain encoding: the
			// decoder picks the encodings.
			o = plainObject(b, t, bytes.Split(bytes.TrimSuffix(p, []byte{0}), []byte{0}), opt)
		}
		db.Add(k, o)
	}
	var out bytes.Buffer
	if err := rdb.WriteKeyspace(&out, ks, nil, nil, rdb.EncodeOptions{Compress: true}); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// plainObject decodes a value of the plain encoding of type t (6 hash, 7
// list, 8 set, 9 zset) from cmd, a command's words repeated per element.
func plainObject(b *testing.B, t int, words [][]byte, opt rdb.Options) *keyspace.Object {
	var elems [][]byte
	for i := 0; i < len(words); {
		i++ // the command's name
		per := map[int]int{6: 2, 7: 1, 8: 1, 9: 2}[t]
		elems = append(elems, words[i:i+per]...)
		i += per
	}
	typ := map[int]byte{6: 4, 7: 1, 8: 2, 9: 5}[t] // TypeHash, TypeList, TypeSet, TypeZSet2... as plain types
	var p []byte
	n := len(elems)
	if t == 6 || t == 9 {
		n /= 2
	}
	p = append(p, byte(n))
	for i, e := range elems {
		if t == 9 && i%2 == 0 {
			// ZSET_2's score is a binary double after the member: swap.
			continue
		}
		p = append(p, byte(len(e)))
		p = append(p, e...)
		if t == 9 {
			var sc [8]byte
			f, _ := strconv.ParseFloat(string(elems[i-1]), 64)
			binary.LittleEndian.PutUint64(sc[:], math.Float64bits(f))
			p = append(p, sc[:]...)
		}
	}
	o, _, err := rdb.DecodeValue(typ, p, opt)
	if err != nil {
		b.Fatalf("type %d: %v", t, err)
	}
	return o
}

// BenchmarkLoadFrom loads a file of 200,000 mixed keys as it is read.
func BenchmarkLoadFrom(b *testing.B) {
	file := mixedFile(b, 200_000)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	opt := rdb.DefaultOptions()
	start := cpuTime()
	for b.Loop() {
		if _, _, err := rdb.LoadKeyspaceFrom(keyspace.New(16), bytes.NewReader(file), opt, noFuncs); err != nil {
			b.Fatal(err)
		}
	}
	reportCPUPer(b, start, 200_000, "key")
}
