package servertest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ReplicaStream is a raw connection to redis-server that has done a full
// resynchronisation as a replica would: what it reads after the RDB
// payload is the primary's command stream, the reference for what a
// write propagates.
type ReplicaStream struct {
	t    testing.TB
	conn *Conn
}

// AttachReplica connects to the redis-server at addr as a replica (PSYNC
// with the EOF and PSYNC2 capabilities), reads the +FULLRESYNC line and
// the RDB payload in either of its forms (a bulk length, or the EOF
// marker of a diskless sync), and then acknowledges offset 0 every 100
// ms until the test ends, as a replica acknowledges every second: a
// diskless primary starts streaming on the first acknowledgement that
// arrives after it has reaped its RDB child, which it does later than the
// payload ends.
func AttachReplica(t testing.TB, addr string) *ReplicaStream {
	t.Helper()
	c := Dial(t, addr)
	for _, cmd := range [][]string{
		{"REPLCONF", "listening-port", "0"},
		{"REPLCONF", "capa", "eof", "capa", "psync2"},
	} {
		if r := c.Do(cmd...); r != "+OK\r\n" {
			t.Fatalf("%v: %q", cmd, r)
		}
	}
	c.Write(Encode("PSYNC", "?", "-1"))
	c.C.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := readLine(c.R)
	if err != nil || !strings.HasPrefix(line, "+FULLRESYNC ") {
		t.Fatalf("PSYNC answered %q (%v)", line, err)
	}
	if err := skipRDB(c.R); err != nil {
		t.Fatalf("reading the RDB payload: %v", err)
	}
	ack := Encode("REPLCONF", "ACK", "0")
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := c.C.Write(ack); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return &ReplicaStream{t: t, conn: c}
}

// readLine reads one CRLF-terminated line without its terminator,
// skipping the bare newlines a primary sends as keepalives while it
// prepares the payload.
func readLine(r *bufio.Reader) (string, error) {
	for {
		s, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if s == "\n" {
			continue
		}
		return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r"), nil
	}
}

// skipRDB consumes "$<len>\r\n<len bytes>" (no trailing CRLF) or
// "$EOF:<40-byte mark>\r\n<payload><mark>".
func skipRDB(r *bufio.Reader) error {
	hdr, err := readLine(r)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(hdr, "$") {
		return fmt.Errorf("payload header %q", hdr)
	}
	if mark, ok := strings.CutPrefix(hdr, "$EOF:"); ok {
		if len(mark) != 40 {
			return fmt.Errorf("EOF mark %q", mark)
		}
		var tail []byte
		for !bytes.HasSuffix(tail, []byte(mark)) {
			b, err := r.ReadByte()
			if err != nil {
				return err
			}
			tail = append(tail, b)
		}
		return nil
	}
	n, err := strconv.Atoi(hdr[1:])
	if err != nil {
		return fmt.Errorf("payload header %q", hdr)
	}
	_, err = io.CopyN(io.Discard, r, int64(n))
	return err
}

// Next returns the next command of the stream, skipping the primary's
// keepalives (PING, REPLCONF GETACK). It fails the test when nothing
// arrives within timeout.
func (s *ReplicaStream) Next(timeout time.Duration) [][]byte {
	s.t.Helper()
	for {
		s.conn.C.SetReadDeadline(time.Now().Add(timeout))
		argv, err := readCommand(s.conn.R)
		if err != nil {
			s.t.Fatalf("replica stream: %v", err)
		}
		if len(argv) > 0 {
			switch strings.ToUpper(string(argv[0])) {
			case "PING", "REPLCONF":
				continue
			}
		}
		return argv
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([][]byte, error) {
	n, err := readHeader(r, '*')
	if err != nil {
		return nil, err
	}
	argv := make([][]byte, n)
	for i := range argv {
		m, err := readHeader(r, '$')
		if err != nil {
			return nil, err
		}
		b := make([]byte, m+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		argv[i] = b[:m]
	}
	return argv, nil
}

// readHeader reads a "<kind><length>" line with a length of 0 or more.
func readHeader(r *bufio.Reader, kind byte) (int, error) {
	line, err := readLine(r)
	if err != nil {
		return 0, err
	}
	if len(line) < 2 || line[0] != kind {
		return 0, fmt.Errorf("expected a %q header, got %q", kind, line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad header %q", line)
	}
	return n, nil
}
