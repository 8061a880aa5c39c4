//go:build !linux

package persist

// lowerEncoderPriority does nothing where threads have no priority of
// their own to set (nice_linux.go).
func lowerEncoderPriority() {}
