package servertest

import (
	"net"
	"os"
	"os/exec"
	"testing"
)

// TestListensOn: the port's listener is found in the process that holds
// it and not in another one, and a closed port is held by nobody.
func TestListensOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !listensOn(os.Getpid(), port) {
		t.Fatalf("this process listens on %d, listensOn says not", port)
	}
	other := exec.Command("sleep", "5")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	if listensOn(other.Process.Pid, port) {
		t.Fatalf("a child that never listened holds port %d", port)
	}
	ln.Close()
	if listensOn(os.Getpid(), port) {
		t.Fatalf("port %d closed, still held", port)
	}
}
