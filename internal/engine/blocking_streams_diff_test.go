package engine_test

import (
	"testing"
)

// Blocking XREAD and XREADGROUP against redis-server: several readers,
// wake-up order, COUNT, "$", a deleted stream or group, a key
// overwritten with another type, timeouts inside MULTI.

func TestBlockingStreamsDiff(t *testing.T) {
	d := newBkDiff(t, 5)
	d.do(0, "XADD", "s", "1-1", "a", "1")
	d.do(0, "XGROUP", "CREATE", "s", "g", "$")

	// Three readers on "$" and one group reader: an XADD serves all, in
	// the order they blocked.
	d.send(1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	d.blocked(1)
	d.send(2, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(2)
	d.send(3, "XREAD", "BLOCK", "0", "COUNT", "1", "STREAMS", "other", "s", "0", "$")
	d.blocked(3)
	d.send(4, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(4)
	d.do(0, "XADD", "s", "2-1", "b", "2")
	d.recv(1, "XREAD $ served")
	d.recv(2, "XREADGROUP served")
	d.recv(3, "XREAD two keys served")
	d.blocked(1) // c2 found nothing left after c1 and keeps waiting
	d.do(0, "XADD", "s", "3-1", "c", "3")
	d.recv(4, "XREADGROUP c2 served")
	d.blocked(0)

	// A write that adds nothing (XACK, XGROUP) wakes nobody.
	d.send(1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	d.blocked(1)
	d.do(0, "XACK", "s", "g", "2-1")
	d.do(0, "XGROUP", "CREATECONSUMER", "s", "g", "c9")
	d.do(0, "XDEL", "s", "1-1")
	d.blocked(1)
	d.do(0, "XADD", "s", "4-1", "d", "4")
	d.recv(1, "XREAD after unrelated writes")

	// The group destroyed, the stream deleted, the key overwritten: the
	// group readers fail, an XREAD keeps waiting.
	d.do(0, "XGROUP", "SETID", "s", "g", "$")
	d.send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(1)
	d.do(0, "XGROUP", "DESTROY", "s", "g")
	d.recv(1, "XREADGROUP, group destroyed")
	d.do(0, "XGROUP", "CREATE", "s", "g", "$")
	d.send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.send(2, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	d.blocked(2)
	d.do(0, "DEL", "s")
	d.recv(1, "XREADGROUP, stream deleted")
	d.blocked(1)
	d.do(0, "XADD", "s", "5-1", "a", "1")
	d.recv(2, "XREAD after the stream came back")
	d.do(0, "XGROUP", "CREATE", "s", "g", "$")
	d.send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(1)
	d.do(0, "MULTI")
	d.do(0, "DEL", "s")
	d.do(0, "SET", "s", "x")
	d.do(0, "EXEC")
	d.recv(1, "XREADGROUP, key overwritten")
	d.do(0, "DEL", "s")

	// NOACK, and a group reader served with COUNT.
	d.do(0, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	d.send(1, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(1)
	d.do(0, "MULTI")
	d.do(0, "XADD", "s", "1-1", "a", "1")
	d.do(0, "XADD", "s", "2-1", "a", "1")
	d.do(0, "EXEC")
	d.recv(1, "XREADGROUP NOACK COUNT 1")
	d.do(0, "XPENDING", "s", "g")
	d.do(0, "XINFO", "GROUPS", "s")

	// An entry added and deleted before the readers run: they are served
	// with no entries (the stream's last id moved past theirs), and the
	// group's last id stays.
	d.do(0, "XGROUP", "SETID", "s", "g", "$")
	d.send(1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	d.blocked(1)
	d.send(2, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.blocked(2)
	d.do(0, "MULTI")
	d.do(0, "XADD", "s", "7-1", "a", "1")
	d.do(0, "XDEL", "s", "7-1")
	d.do(0, "EXEC")
	d.recv(1, "XREAD, entry gone")
	d.recv(2, "XREADGROUP, entry gone")
	d.do(0, "XINFO", "GROUPS", "s")
	d.do(0, "XPENDING", "s", "g")

	// No wait inside MULTI; a timeout.
	d.do(0, "MULTI")
	d.do(0, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	d.do(0, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
	d.do(0, "EXEC")
	d.do(1, "XREAD", "BLOCK", "10", "STREAMS", "s", "$")
	d.do(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "10", "STREAMS", "s", ">")
}
