package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// outcome is what a Reader made of a stream: the commands, in order, and
// the error that stopped it (nil: the stream ended between commands).
type outcome struct {
	cmds [][][]byte
	err  error
}

func (o outcome) String() string {
	return fmt.Sprintf("%d commands, err %v", len(o.cmds), o.err)
}

// feedReader gives data to a fresh Reader in reads of the sizes next
// returns (as a connection would get them), parsing after each read and
// discarding what it returned, and returns what it parsed.
func feedReader(data []byte, authed bool, next func() int) (outcome, *Reader) {
	r := &Reader{MaxBulk: 512 << 20, Authenticated: authed}
	var o outcome
	for len(data) > 0 {
		chunk := data[:min(next(), len(data))]
		data = data[len(chunk):]
		for len(chunk) > 0 {
			n := copy(r.ReadBuf(0), chunk)
			r.Filled(n)
			chunk = chunk[n:]
		}
		for {
			args, err := r.Next(nil)
			if err == ErrIncomplete {
				break
			}
			if err != nil {
				o.err = err
				return o, r
			}
			cmd := make([][]byte, len(args))
			for i, a := range args {
				cmd[i] = bytes.Clone(a)
			}
			o.cmds = append(o.cmds, cmd)
		}
		r.Discard()
	}
	if r.Buffered() {
		o.err = ErrIncomplete
	}
	return o, r
}

// wholeParse is the reference: Parser.Parse on the whole stream.
func wholeParse(data []byte, authed bool) outcome {
	p := Parser{MaxBulk: 512 << 20, Authenticated: authed}
	var o outcome
	for len(data) > 0 {
		args, n, err := p.Parse(data, nil)
		if err != nil {
			o.err = err
			return o
		}
		if args == nil {
			args = [][]byte{}
		}
		o.cmds = append(o.cmds, args)
		data = data[n:]
	}
	return o
}

func sameOutcome(a, b outcome) bool {
	if len(a.cmds) != len(b.cmds) {
		return false
	}
	for i := range a.cmds {
		if !sameArgs(a.cmds[i], b.cmds[i]) {
			return false
		}
	}
	var pa, pb *ProtocolError
	switch {
	case errors.As(a.err, &pa) && errors.As(b.err, &pb):
		return pa.Msg == pb.Msg
	default:
		return a.err == b.err
	}
}

func fixed(n int) func() int { return func() int { return n } }

// TestReaderSplits: however a stream is cut into reads, the Reader
// parses the same commands, and reaches the same verdict, as Parse on the
// whole stream: for every case of the parser's table and for pipelines
// with big bulks, cut at every point and byte by byte.
func TestReaderSplits(t *testing.T) {
	big1 := bytes.Repeat([]byte("b"), BigArg)
	big2 := bytes.Repeat([]byte("c"), 3*BigArg+5)
	streams := []struct {
		name   string
		data   []byte
		authed bool
	}{
		{"pipeline", []byte("*1\r\n$4\r\nPING\r\nPING\r\n*0\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n\r\n*-1\r\n*1\r\n$5\r\na\r\n\x00b\r\n"), true},
		{"big bulks", bytes.Join([][]byte{
			AppendCommand(nil, []byte("SET"), []byte("k"), big1),
			AppendCommand(nil, []byte("ECHO"), big2, []byte("x"), big1),
			AppendCommand(nil, []byte("PING")),
		}, nil), true},
		{"big bulk then error", append(AppendCommand(nil, []byte("SET"), big1), "*1\r\n$x\r\n"...), true},
	}
	for _, tc := range parseCases {
		if tc.incomplete {
			continue // checked below: incomplete however it is cut
		}
		streams = append(streams, struct {
			name   string
			data   []byte
			authed bool
		}{tc.name, []byte(tc.in), !tc.unauth})
	}
	for _, s := range streams {
		want := wholeParse(s.data, s.authed)
		check := func(how string, next func() int) {
			t.Helper()
			got, _ := feedReader(s.data, s.authed, next)
			if !sameOutcome(got, want) {
				t.Fatalf("%s cut %s: got %v, want %v", s.name, how, got, want)
			}
		}
		check("byte by byte", fixed(1))
		step := 1
		if len(s.data) > 4096 {
			step = 997 // big bodies: every split point would take long
		}
		for k := 1; k < len(s.data); k += step {
			first := true
			check("at "+strconv.Itoa(k), func() int {
				if first {
					first = false
					return k
				}
				return len(s.data)
			})
		}
	}
	for _, tc := range parseCases {
		if !tc.incomplete {
			continue
		}
		got, _ := feedReader([]byte(tc.in), !tc.unauth, fixed(1))
		if got.err != ErrIncomplete || len(got.cmds) != 0 {
			t.Fatalf("%s byte by byte: got %v, want incomplete", tc.name, got)
		}
	}
}

// millionArgs is an RPUSH of n small arguments.
func millionArgs(n int) ([]byte, [][]byte) {
	args := make([][]byte, 0, n+2)
	args = append(args, []byte("RPUSH"), []byte("list"))
	for i := 0; i < n; i++ {
		args = append(args, []byte("v"+strconv.Itoa(i)))
	}
	return AppendCommand(nil, args...), args
}

// TestReaderMillionArgs: a 1,000,000-argument command parses to the same
// arguments in reads of 1 byte, 7 bytes and random sizes. (Before the
// parse was resumable, 1-byte reads of it took hours.)
func TestReaderMillionArgs(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	data, want := millionArgs(n)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		next func() int
	}{
		{"1-byte", fixed(1)},
		{"7-byte", fixed(7)},
		{"random", func() int { return 1 + rng.IntN(4096) }},
	} {
		got, _ := feedReader(data, true, tc.next)
		if got.err != nil || len(got.cmds) != 1 || !sameArgs(got.cmds[0], want) {
			t.Fatalf("%s reads: %v", tc.name, got)
		}
	}
}

// TestReaderHeaderCostsNothing: a bulk header claiming 512 MB, followed
// by a few bytes, allocates about what arrived, not what it claims.
func TestReaderHeaderCostsNothing(t *testing.T) {
	data := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + string(bytes.Repeat([]byte("x"), 100)))
	got, r := feedReader(data, true, fixed(len(data)))
	if got.err != ErrIncomplete {
		t.Fatalf("got %v", got)
	}
	if m := r.Mem(); m > 256<<10 {
		t.Fatalf("a 512 MB header with 100 bytes holds %d bytes", m)
	}
	if q := r.QueryBuf(); q != 100 {
		t.Fatalf("QueryBuf %d, want the 100 body bytes", q)
	}
	// Grown as bytes arrive: 1 MB more holds about 2 MB at most.
	chunk := bytes.Repeat([]byte("y"), 1<<20)
	for len(chunk) > 0 {
		n := copy(r.ReadBuf(0), chunk)
		r.Filled(n)
		chunk = chunk[n:]
	}
	if m := r.Mem(); m > 3<<20 {
		t.Fatalf("1 MB of a 512 MB body holds %d bytes", m)
	}
}

// TestReaderBigArgsOwnBuffers: a command of large arguments takes about
// its own size, each argument in a buffer of its own of its exact size,
// and arguments survive a rewind.
func TestReaderBigArgsOwnBuffers(t *testing.T) {
	val := bytes.Repeat([]byte("v"), 1<<20+3)
	args := [][]byte{[]byte("RPUSH"), []byte("k")}
	for i := 0; i < 8; i++ {
		args = append(args, val)
	}
	data := AppendCommand(nil, args...)
	data = append(data, "*1\r\n$4\r\nPING\r\n"...)
	r := &Reader{MaxBulk: 512 << 20, Authenticated: true}
	for p := data; len(p) > 0; {
		n := copy(r.ReadBuf(64<<10), p)
		r.Filled(n)
		p = p[n:]
		start := r.Pos()
		got, err := r.Next(nil)
		if err == ErrIncomplete {
			continue
		}
		if err != nil || !sameArgs(got, args) {
			t.Fatalf("got %d args, %v", len(got), err)
		}
		if m := r.Mem(); m > len(data)+len(data)/8 {
			t.Fatalf("a %d-byte command holds %d bytes", len(data), m)
		}
		for _, a := range got[2:] {
			if cap(a) != len(val) {
				t.Fatalf("argument of %d bytes with cap %d", len(a), cap(a))
			}
		}
		// Parsed again after a rewind (a batch not run to its end).
		r.Rewind(start)
		again, err := r.Next(nil)
		if err != nil || !sameArgs(again, args) {
			t.Fatalf("after rewind: %d args, %v", len(again), err)
		}
		break
	}
}

// TestReaderQueryBuf: QueryBuf counts as Redis's query buffer: from the
// element being parsed, a big body as it is read.
func TestReaderQueryBuf(t *testing.T) {
	r := &Reader{MaxBulk: 512 << 20, Authenticated: true}
	feed := func(s string) {
		n := copy(r.ReadBuf(0), s)
		r.Filled(n)
		for {
			if _, err := r.Next(nil); err != nil {
				break
			}
		}
		r.Discard()
	}
	feed("*2\r\n$3\r\nGET\r\n$3\r\nke")
	if q := r.QueryBuf(); q != 2 {
		t.Fatalf("QueryBuf %d, want 2 (the body begun)", q)
	}
	feed("y\r\n*1\r\n")
	if q := r.QueryBuf(); q != 0 {
		t.Fatalf("QueryBuf %d, want 0", q)
	}
	feed("$40000\r\nabc")
	if q := r.QueryBuf(); q != 3 {
		t.Fatalf("QueryBuf %d, want 3 (the big body begun)", q)
	}
}

// BenchmarkReaderCommand parses one command of 16-byte arguments arriving
// in 16 KB reads: the time per byte is the same from 1 KB to 100 MB
// commands (it was quadratic before the parse could resume).
func BenchmarkReaderCommand(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20, 16 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			n := size / 23 // "$16\r\n" + 16 + "\r\n"
			args := make([][]byte, n)
			for i := range args {
				args[i] = fmt.Appendf(nil, "%016d", i)
			}
			data := AppendCommand(nil, args...)
			b.SetBytes(int64(len(data)))
			// One connection's Reader, as a server reuses it.
			r := Reader{MaxBulk: 512 << 20, Authenticated: true}
			var argv [][]byte
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for p := data; ; {
					k := copy(r.ReadBuf(16<<10), p)
					r.Filled(k)
					p = p[k:]
					got, err := r.Next(argv[:0])
					if err == nil {
						argv = got
						break
					}
					if err != ErrIncomplete || len(p) == 0 {
						b.Fatal(err)
					}
				}
				if len(argv) != n {
					b.Fatalf("%d args", len(argv))
				}
				r.Discard()
			}
		})
	}
}

// FuzzReaderSplits: any bytes, cut into reads of any one size, give the
// Reader the commands and the verdict Parse gives on the whole.
func FuzzReaderSplits(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\nPING\r\n"), uint8(1), true)
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$\x003\r\nk\r\n"), uint8(3), true)
	f.Add([]byte("*11\r\n$1\r\na\r\n"), uint8(2), false)
	f.Add([]byte("ECHO \"a\\x41\"\r\n*0\r\n*-1\r\n"), uint8(5), true)
	f.Fuzz(func(t *testing.T, data []byte, cut uint8, authed bool) {
		want := wholeParse(data, authed)
		got, _ := feedReader(data, authed, fixed(int(cut)%32+1))
		if !sameOutcome(got, want) {
			t.Fatalf("%q in reads of %d: got %v, want %v", data, int(cut)%32+1, got, want)
		}
	})
}

// Span gives back a batch's bytes exactly as they arrived, the big bodies
// kept out of the buffer included, for any range of command boundaries.
func TestReaderSpan(t *testing.T) {
	big := bytes.Repeat([]byte("b"), BigArg+10)
	cmds := [][]byte{
		[]byte("*2\r\n$3\r\nGET\r\n$1\r\na\r\n"),
		append(append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$"+strconv.Itoa(len(big))+"\r\n"), big...), "\r\n"...),
		[]byte("\r\n"),
		append(append([]byte("*3\r\n$3\r\nSET\r\n$"+strconv.Itoa(len(big))+"\r\n"), big...), "\r\n$1\r\nv\r\n"...),
		[]byte("*1\r\n$4\r\nPING\r\n"),
	}
	stream := bytes.Join(cmds, nil)
	var r Reader
	r.MaxBulk, r.Authenticated = 1<<30, true
	pos := []int{0}
	for fed := 0; len(pos) < len(cmds)+1; {
		// A few bytes at a time, so that the big bodies go out of the
		// buffer.
		room := r.ReadBuf(0)
		n := copy(room, stream[fed:min(fed+1000, len(stream))])
		r.Filled(n)
		fed += n
		for {
			if _, err := r.Next(nil); err != nil {
				break
			}
			pos = append(pos, r.Pos())
		}
	}
	for i := range pos {
		for j := i; j < len(pos); j++ {
			var got []byte
			r.Span(pos[i], pos[j], func(b []byte) { got = append(got, b...) })
			if want := bytes.Join(cmds[i:j], nil); !bytes.Equal(got, want) {
				t.Fatalf("Span(%d, %d): %d bytes, want %d", i, j, len(got), len(want))
			}
		}
	}
}

// TestReaderKeepsBusyBuffer: batches of a few hundred KB reuse one buffer
// (no growth, no drop per batch); a buffer over keepInput, or one left
// mostly unused for idleShrink batches, goes back to readChunk.
func TestReaderKeepsBusyBuffer(t *testing.T) {
	batch := func(r *Reader, n, size int) {
		cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(size) + "\r\n" + strings.Repeat("v", size) + "\r\n")
		data := bytes.Repeat(cmd, n)
		for len(data) > 0 {
			m := copy(r.ReadBuf(0), data)
			r.Filled(m)
			data = data[m:]
		}
		var args [][]byte
		for i := 0; i < n; i++ {
			var err error
			if args, err = r.Next(args[:0]); err != nil || len(args) != 3 || len(args[2]) != size {
				t.Fatalf("command %d: %v %d args", i, err, len(args))
			}
		}
		r.Discard()
	}
	var r Reader
	r.MaxBulk, r.Authenticated = 512<<20, true
	batch(&r, 50, 8000)
	big := r.Mem()
	r.TakeFreed() // the buffers it grew through
	if big < 400_000 {
		t.Fatalf("buffer %d after a 400 KB batch", big)
	}
	for i := 0; i < 20; i++ {
		batch(&r, 50, 8000)
		if freed := r.TakeFreed(); r.Mem() != big || freed != 0 {
			t.Fatalf("batch %d: buffer %d (was %d), freed %d", i, r.Mem(), big, freed)
		}
	}
	// Small batches: kept for idleShrink-1 of them, then let go.
	for i := 1; i < idleShrink; i++ {
		batch(&r, 1, 10)
		if r.Mem() != big {
			t.Fatalf("small batch %d: buffer %d, want %d kept", i, r.Mem(), big)
		}
	}
	batch(&r, 1, 10)
	if r.Mem() != readChunk || r.TakeFreed() != big {
		t.Fatalf("after %d small batches: buffer %d", idleShrink, r.Mem())
	}
	// Over keepInput: let go after the batch.
	batch(&r, 200, 8000)
	if r.Mem() != readChunk {
		t.Fatalf("after a 1.6 MB batch: buffer %d, want %d", r.Mem(), readChunk)
	}
}

// BenchmarkReaderLargeBatches reads batches of 50 SETs of 8 KB values,
// as bench/evictbench's churn sends them: the bytes allocated per batch
// are the input buffer's growth and drops.
func BenchmarkReaderLargeBatches(b *testing.B) {
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$8000\r\n" + strings.Repeat("v", 8000) + "\r\n")
	data := bytes.Repeat(cmd, 50)
	var r Reader
	r.MaxBulk, r.Authenticated = 512<<20, true
	var args [][]byte
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for range b.N {
		for d := data; len(d) > 0; {
			m := copy(r.ReadBuf(0), d)
			r.Filled(m)
			d = d[m:]
		}
		for range 50 {
			var err error
			if args, err = r.Next(args[:0]); err != nil {
				b.Fatal(err)
			}
		}
		r.Discard()
	}
}

// TestReaderWhole: a command whose parse is under way is handed out by
// Whole once, and only once, it has all come and has at least the
// arguments asked for; its arguments, read a range at a time in any
// order, are those Next returns next, big bodies kept apart included.
func TestReaderWhole(t *testing.T) {
	big := bytes.Repeat([]byte("b"), BigArg+5)
	want := [][]byte{[]byte("RPUSH"), []byte("k")}
	for i := 0; i < 20000; i++ {
		want = append(want, []byte(strconv.Itoa(i)))
		if i%5000 == 17 {
			want = append(want, big, []byte{})
		}
	}
	data := AppendCommand(nil, want...)
	data = append(data, "*1\r\n$4\r\nPING\r\n"...)
	rng := rand.New(rand.NewPCG(9, 10))
	r := &Reader{MaxBulk: 512 << 20, Authenticated: true}
	sawIncomplete := false
	for p := data; ; {
		n := copy(r.ReadBuf(1+rng.IntN(8192)), p)
		r.Filled(n)
		p = p[n:]
		if _, ok := r.Whole(int64(len(want) + 1)); ok {
			t.Fatal("Whole with a minimum above the count")
		}
		a, ok := r.Whole(int64(len(want)))
		_, err := r.Next(nil)
		if !ok {
			if err != ErrIncomplete {
				t.Fatalf("Whole false, Next: %v", err)
			}
			sawIncomplete = sawIncomplete || r.Announced() > 0
			continue
		}
		if err != nil || len(p) > 0 && !sawIncomplete {
			t.Fatalf("Whole true, Next: %v", err)
		}
		if a.Len() != len(want) {
			t.Fatalf("Len %d, want %d", a.Len(), len(want))
		}
		var got [][]byte
		for from := 0; from < len(want); from += 999 {
			got = a.AppendRange(got, from, min(from+999, len(want)))
		}
		if !sameArgs(got, want) {
			t.Fatal("ranges in order differ from the command")
		}
		for range 20 {
			from := rng.IntN(len(want))
			to := from + rng.IntN(len(want)-from+1)
			if part := a.AppendRange(nil, from, to); !sameArgs(part, want[from:to]) {
				t.Fatalf("range [%d, %d) differs", from, to)
			}
		}
		break
	}
	if !sawIncomplete {
		t.Fatal("the command never was under way")
	}
}

// Whole hands out a command that is all there before Next looked at it,
// behind another one and before a third, and Next then returns the same
// command; Count reads the announced count from the count line alone
// (0 for an inline command, a count line not all there, or one refused
// before authentication), looking no further than a count line's bytes.
func TestReaderWholeAtFirstSight(t *testing.T) {
	big := [][]byte{[]byte("RPUSH"), []byte("k")}
	for i := 0; i < 3000; i++ {
		big = append(big, []byte(strconv.Itoa(i)))
	}
	var data []byte
	data = AppendCommand(data, []byte("PING"))
	data = AppendCommand(data, big...)
	data = AppendCommand(data, big...)
	r := &Reader{MaxBulk: 512 << 20, Authenticated: true}
	for p := data; len(p) > 0; {
		n := copy(r.ReadBuf(0), p)
		r.Filled(n)
		p = p[n:]
	}
	if n := r.Count(); n != 1 {
		t.Fatalf("Count before PING: %d", n)
	}
	if _, ok := r.Whole(1); !ok {
		t.Fatal("Whole refused a whole PING")
	}
	if args, err := r.Next(nil); err != nil || len(args) != 1 {
		t.Fatalf("Next: %q, %v", args, err)
	}
	for k := 0; k < 2; k++ {
		if n := r.Count(); n != int64(len(big)) {
			t.Fatalf("command %d: Count %d", k, n)
		}
		a, ok := r.Whole(int64(len(big)))
		if !ok {
			t.Fatalf("command %d: Whole refused it", k)
		}
		if got := a.AppendRange(nil, 0, a.Len()); !sameArgs(got, big) {
			t.Fatalf("command %d: Whole's arguments differ", k)
		}
		args, err := r.Next(nil)
		if err != nil || !sameArgs(args, big) {
			t.Fatalf("command %d: Next after Whole: %v", k, err)
		}
	}
	for _, c := range []struct {
		in     string
		authed bool
		want   int64
	}{
		{"*5\r\n$1\r\n", true, 5},
		{"*5\r", true, 0},
		{"PING\r\n", true, 0},
		{"*2000\r\n", false, 0},
		{"*2000\r\n", true, 2000},
		{"*x\r\n", true, 0},
		{"*-1\r\n", true, 0},
		{"*10\r\n", false, 10},
		{"*11\r\n", false, 0},
		{"*99999999999999999999\r\n", true, 0},
		{"*" + strings.Repeat("1", 1<<20), true, 0},
	} {
		r := &Reader{MaxBulk: 512 << 20, Authenticated: c.authed}
		r.Filled(copy(r.ReadBuf(len(c.in)+1), c.in))
		if n := r.Count(); n != c.want {
			t.Errorf("Count of %.20q (authed %v): %d, want %d", c.in, c.authed, n, c.want)
		}
	}
}
