package conn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-done
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

func TestRawIOReadEOF(t *testing.T) {
	sc, cc := tcpPair(t)
	r := newRawIO(sc)
	if r == nil {
		t.Fatal("no raw I/O for a TCP connection")
	}
	cc.Write([]byte("hello"))
	cc.Close()
	var got []byte
	buf := make([]byte, 3)
	for {
		n, err := r.read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("a read returned 0 bytes without EOF")
		}
	}
	if string(got) != "hello" {
		t.Fatalf("read %q", got)
	}
}

// TestRawIOLargeWrite writes more than the socket buffers hold, so the
// write meets EAGAIN and waits, while the reader drains slowly and a read
// runs on the same connection at the same time.
func TestRawIOLargeWrite(t *testing.T) {
	sc, cc := tcpPair(t)
	r := newRawIO(sc)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	got := make(chan []byte)
	go func() {
		var b []byte
		buf := make([]byte, 4096)
		for len(b) < len(payload) {
			n, err := cc.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
		cc.Write([]byte("bye"))
		got <- b
	}()
	readDone := make(chan string)
	go func() {
		buf := make([]byte, 16)
		n, err := r.read(buf)
		if err != nil {
			readDone <- err.Error()
			return
		}
		readDone <- string(buf[:n])
	}()
	n, err := r.write(payload)
	if err != nil || n != len(payload) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, payload) {
		t.Fatalf("the peer received %d bytes, not the %d written", len(b), len(payload))
	}
	if s := <-readDone; s != "bye" {
		t.Fatalf("concurrent read: %q", s)
	}
}

func TestRawIODeadlineAndClose(t *testing.T) {
	sc, _ := tcpPair(t)
	r := newRawIO(sc)
	sc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	sc.SetReadDeadline(time.Time{})
	done := make(chan error)
	go func() {
		_, err := r.read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	sc.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed connection: %v", err)
	}
	if _, err := r.write([]byte("x")); err == nil {
		t.Fatal("write on a closed connection succeeded")
	}
}

func TestRawIOOnlyTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if newRawIO(a) != nil {
		t.Fatal("raw I/O for a pipe")
	}
}
