package resp

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser, as a client could. The
// parser must never panic, never claim more bytes than it was given, make
// progress on every command it returns, and report only ErrIncomplete or
// a *ProtocolError. The same bytes, cut into arguments and encoded as a
// client would, must parse back to those arguments, both as a multibulk
// request and quoted on an inline line.
func FuzzParse(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"), true)
	f.Add([]byte("PING\r\nECHO \"a\\x41\"\r\n"), false)
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$-1\r\n"), true)
	f.Add([]byte("*3000000000\r\n"), true)
	f.Add([]byte("*1\r\n$\x004\r\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, authed bool) {
		p := Parser{MaxBulk: 1 << 20, Authenticated: authed}
		buf := data
		for steps := 0; len(buf) > 0 && steps < 1<<16; steps++ {
			args, n, err := p.Parse(buf, nil)
			if n < 0 || n > len(buf) {
				t.Fatalf("consumed %d of %d", n, len(buf))
			}
			if err != nil {
				var pe *ProtocolError
				if err != ErrIncomplete && !errors.As(err, &pe) {
					t.Fatalf("unexpected error %v", err)
				}
				if n != 0 || len(args) != 0 {
					t.Fatalf("error %v with %d bytes and %d args", err, n, len(args))
				}
				if err == ErrIncomplete && (p.Pending < 0 || p.Pending > len(buf)) {
					t.Fatalf("pending %d of %d", p.Pending, len(buf))
				}
				break
			}
			if n == 0 {
				t.Fatalf("no progress")
			}
			total := 0
			for _, a := range args {
				total += len(a)
			}
			if total > n {
				t.Fatalf("%d argument bytes from %d consumed", total, n)
			}
			buf = buf[n:]
		}

		// Round trip: cut data into arguments at every byte 0xfe.
		cmd := bytes.Split(data, []byte{0xfe})
		enc := AppendCommand(nil, cmd...)
		rp := Parser{MaxBulk: 1 << 30, Authenticated: true}
		got, n, err := rp.Parse(enc, nil)
		if err != nil || n != len(enc) || !sameArgs(got, cmd) {
			t.Fatalf("multibulk round trip of %q: got %q %d %v", cmd, got, n, err)
		}
		for _, cut := range []int{len(enc) - 1, len(enc) / 2} {
			if _, _, err := rp.Parse(enc[:cut], nil); err != ErrIncomplete {
				t.Fatalf("prefix %d of %q: %v", cut, enc, err)
			}
		}
		var line []byte
		for i, a := range cmd {
			if i > 0 {
				line = append(line, ' ')
			}
			line = AppendRepr(line, a)
		}
		line = append(line, '\r', '\n')
		got, n, err = rp.Parse(line, nil)
		if len(line) <= InlineMaxSize && (err != nil || n != len(line) || !sameArgs(got, cmd)) {
			t.Fatalf("inline round trip of %q via %q: got %q %d %v", cmd, line, got, n, err)
		}
	})
}

func sameArgs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
