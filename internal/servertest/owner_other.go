//go:build !linux

package servertest

// listensOn cannot tell who holds a port here: the connection is trusted.
func listensOn(pid, port int) bool { return true }
