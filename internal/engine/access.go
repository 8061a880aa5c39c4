package engine

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Policy is a maxmemory-policy, numbered as config's enum lists them.
type Policy int64

// The eviction policies, in config's order for maxmemory-policy.
const (
	VolatileLRU Policy = iota
	VolatileLFU
	VolatileRandom
	VolatileTTL
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
	NoEviction
)

// LFU reports whether the policy keeps LFU counters rather than access times.
func (p Policy) LFU() bool { return p == VolatileLFU || p == AllKeysLFU }

// Volatile reports whether the policy evicts only keys with a TTL.
func (p Policy) Volatile() bool { return p <= VolatileTTL }

// Policy is the maxmemory-policy in force.
func (e *Env) Policy() Policy { return Policy(e.Cfg.Int(config.MaxMemoryPolicy)) }

// setAccess tells the keyspace how this command's lookups update the keys'
// access metadata: the policy's LFU or LRU, and the client's NO-TOUCH
// (which TOUCH itself ignores, as in Redis).
func (e *Env) setAccess(s *Session, cmd *Command) {
	e.KS.Access = keyspace.Access{
		LFU:          e.Policy().LFU(),
		LFULogFactor: int(e.Cfg.Int(config.LFULogFactor)),
		LFUDecayTime: int(e.Cfg.Int(config.LFUDecayTime)),
		NoTouch:      s.NoTouch && cmd.Name != "touch",
	}
}
