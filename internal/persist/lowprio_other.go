//go:build !linux

package persist

// runLow runs f: threads have no priority of their own to lower here
// (lowprio_linux.go).
func runLow(f func()) { f() }

// bell is how the loop wakes the encoder waiting for a batch (a
// channel here; an eventfd on Linux, lowprio_linux.go says why).
type bell struct{ ch chan struct{} }

func newBell() *bell { return &bell{ch: make(chan struct{}, 1)} }

// ring wakes the wait in progress or the next one.
func (b *bell) ring() {
	select {
	case b.ch <- struct{}{}:
	default:
	}
}

// wait returns once ring was called since the last wait returned.
func (b *bell) wait() { <-b.ch }

func (b *bell) close() {}
