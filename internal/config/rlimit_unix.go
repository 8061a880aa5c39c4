//go:build unix

package config

import "syscall"

// reservedFDs is what Redis keeps aside from maxclients for its own files
// (CONFIG_MIN_RESERVED_FDS).
const reservedFDs = 32

// applyMaxClients makes sure the process may open maxclients connections,
// raising the soft RLIMIT_NOFILE up to the hard one if needed, with Redis's
// error when it cannot.
func applyMaxClients(v int64) error {
	need := uint64(v) + reservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil
	}
	if lim.Cur >= need {
		return nil
	}
	if lim.Max >= need {
		want := lim
		want.Cur = need
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			return nil
		}
	}
	best := lim.Max
	if best > lim.Cur {
		want := lim
		want.Cur = best
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) != nil {
			best = lim.Cur
		}
	}
	return verr("The operating system is not able to handle the specified number of clients, try with %d", int64(best)-reservedFDs)
}
