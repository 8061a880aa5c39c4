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
)

type eventLoop struct{}

func newEventLoop(*Server) *eventLoop  { return nil }
func detach(net.Conn) (int, error)     { return -1, errors.New("no event loop") }
func (l *eventLoop) add(*client)       {}
func (l *eventLoop) wake()             {}
func (l *eventLoop) armBusy()          {}
func fdRead(int, []byte) (int, error)  { return 0, errAgain }
func fdWrite(int, []byte) (int, error) { return 0, errAgain }
func fdShutdown(int)                   {}
func fdClose(int)                      {}
func fdWriteWait(int, []byte, func() bool, func() int64) (int, error) {
	return 0, errAgain
}
