//go:build !linux

package persist

// runLow runs f: threads have no priority of their own to lower here
// (lowprio_linux.go).
func runLow(f func()) { f() }
