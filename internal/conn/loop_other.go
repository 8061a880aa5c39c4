//go:build !linux

package conn

import (
	"errors"
	"net"
)

// Without epoll every client has a goroutine (loop_linux.go).

var errAgain = errors.New("would block")

type handoffKind uint8

const (
	handoffNone handoffKind = iota
	handoffParked
	handoffPaused
	handoffWrite
	handoffLarge
)

type eventLoop struct{}

func newEventLoop(*Server) *eventLoop                     { return nil }
func detach(net.Conn) (int, error)                        { return -1, errors.New("no event loop") }
func (l *eventLoop) add(*client)                          {}
func (l *eventLoop) wake()                                {}
func (l *eventLoop) armBusy()                             {}
func fdRead(int, []byte) (int, error)                     { return 0, errAgain }
func fdWrite(int, []byte) (int, error)                    { return 0, errAgain }
func fdShutdown(int)                                      {}
func fdClose(int)                                         {}
func (c *client) tlsToLoop(*eventLoop) bool               { return false }
func fdWaitWritable(int, func() bool, func() int64) error { return errAgain }
func fdWriteWait(int, []byte, func() bool, func() int64) (int, error) {
	return 0, errAgain
}

// writeReading writes all of p, waiting while the socket is full (the
// input is not read meanwhile without poll).
func (c *client) writeReading(p []byte) (int, error) {
	if c.raw != nil {
		return c.raw.write(p)
	}
	return c.outWrite(p)
}
