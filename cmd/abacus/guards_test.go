package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A SIGTERM whose final save fails keeps the server up with its data, as
// Redis 7 does; a second SIGTERM after the cause is gone then exits.
func TestSigtermSaveFailureStaysUp(t *testing.T) {
	dir := t.TempDir() + "/data"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := start(t, "--dir", dir, "--save", "3600 1")
	c := servertest.Dial(t, p.addr)
	if r := c.Do("SET", "k", "v"); r != "+OK\r\n" {
		t.Fatalf("SET %q", r)
	}
	if err := os.Remove(dir); err != nil { // the save cannot create its file
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitLog("Errors trying to shut down the server. Check the logs for more information.")
	if !strings.Contains(p.logs(), "Error trying to save the DB, can't exit.") {
		t.Errorf("log:\n%s", p.logs())
	}
	if r := c.Do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("GET after the refused shutdown: %q", r)
	}
	// SHUTDOWN refuses the same way; NOSAVE exits.
	if r := c.Do("SHUTDOWN"); r != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Fatalf("SHUTDOWN: %q", r)
	}
	os.Mkdir(dir, 0o755)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, p.logs())
	}
	if _, err := os.Stat(dir + "/dump.rdb"); err != nil {
		t.Errorf("no snapshot after the second SIGTERM: %v", err)
	}
}

// shutdown-on-sigterm force exits even though the save fails.
func TestSigtermForce(t *testing.T) {
	dir := t.TempDir() + "/data"
	os.Mkdir(dir, 0o755)
	p := start(t, "--dir", dir, "--save", "3600 1", "--shutdown-on-sigterm", "force")
	os.Remove(dir)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, p.logs())
	}
	if !strings.Contains(p.logs(), "Error trying to save the DB. Exit anyway.") {
		t.Errorf("log:\n%s", p.logs())
	}
}

// The port is bound before the dataset loads: a port in use fails the
// start before any loading, with Redis's message.
func TestPortInUseFailsBeforeLoading(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	// A file that is not an RDB: loading it would fail the start with
	// another message, so the bind error shows the order.
	os.WriteFile(dir+"/dump.rdb", []byte("not an rdb file"), 0o644)
	code, out := runExit(t, "", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir)
	if code != 1 {
		t.Fatalf("exit code %d:\n%s", code, out)
	}
	want := fmt.Sprintf("Failed listening on port %d (tcp), aborting.", port)
	if !strings.Contains(out, want) || strings.Contains(out, "RDB") {
		t.Errorf("want %q and no loading in:\n%s", want, out)
	}
}

// Users from "user" lines and from an aclfile; a bad line stops the start
// with Redis's message.
func TestConfigUsers(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/a.conf"
	p := start(t, "--user", "app", "on", ">pw", "~app:*", "+@all")
	c := servertest.Dial(t, p.addr)
	if r := c.Do("AUTH", "app", "pw"); r != "+OK\r\n" {
		t.Fatalf("AUTH app: %q", r)
	}
	if r := c.Do("GET", "other"); !strings.HasPrefix(r, "-NOPERM") {
		t.Fatalf("GET other: %q", r)
	}
	os.WriteFile(conf, []byte("port 0\nuser u1 on bogus\n"), 0o644)
	code, out := runExit(t, "", conf)
	if code != 1 || !strings.Contains(out, ">>> 'user u1 on bogus'\nError in user declaration 'u1': Syntax error") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	aclf := dir + "/users.acl"
	os.WriteFile(aclf, []byte("user ops on >op ~* +@all\n"), 0o644)
	p2 := start(t, "--aclfile", aclf)
	if r := servertest.Dial(t, p2.addr).Do("AUTH", "ops", "op"); r != "+OK\r\n" {
		t.Fatalf("AUTH ops: %q", r)
	}
	os.WriteFile(aclf, []byte("bad line\n"), 0o644)
	code, out = runExit(t, "", "--port", "0", "--aclfile", aclf)
	if code != 1 || !strings.Contains(out, "Aborting Redis startup because of ACL errors: "+aclf+":1 should start with user keyword followed by the username.") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
