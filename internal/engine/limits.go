package engine

import (
	"math"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/rdb"
)

// The quicklist node sizes of list-max-listpack-size -1 to -5: 4 KiB
// doubled up to 64 KiB.
const (
	listNodeKiB    = 4 << 10
	maxListNodeExp = 5
)

// HashLimits are the current hash-max-listpack-* settings; passed to every
// insert, so CONFIG SET applies from the next write on.
func HashLimits(c *Ctx) hash.Limits {
	return hash.Limits{
		MaxListpackEntries: clampInt(c.Env.Cfg.Int(config.HashMaxListpackEntries)),
		MaxListpackValue:   clampInt(c.Env.Cfg.Int(config.HashMaxListpackValue)),
	}
}

func clampInt(v int64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// SetLimits are the current set-max-* settings, passed to every write so
// that CONFIG SET applies to existing sets from their next write, as in
// Redis.
func SetLimits(c *Ctx) set.Limits {
	clamp := func(v int64) int { return int(min(v, math.MaxInt32)) }
	return set.Limits{
		MaxIntsetEntries:   clamp(c.Env.Cfg.Int(config.SetMaxIntsetEntries)),
		MaxListpackEntries: clamp(c.Env.Cfg.Int(config.SetMaxListpackEntries)),
		MaxListpackValue:   clamp(c.Env.Cfg.Int(config.SetMaxListpackValue)),
	}
}

// ZSetLimits are the compact-encoding thresholds the configuration sets now.
func ZSetLimits(c *Ctx) zset.Limits {
	return zset.Limits{
		MaxEntries: zsClampInt(c.Env.Cfg.Int(config.ZSetMaxListpackEntries)),
		MaxValue:   zsClampInt(c.Env.Cfg.Int(config.ZSetMaxListpackValue)),
	}
}

func zsClampInt(v int64) int {
	if v > math.MaxInt {
		return math.MaxInt
	}
	return int(v)
}

// DumpOptions are the settings DUMP writes with.
func DumpOptions(c *Ctx) rdb.EncodeOptions {
	opt := rdb.EncodeOptions{Compress: c.Env.Cfg.Bool(config.RDBCompression), Now: c.Now}
	if fill := c.Env.Cfg.Int(config.ListMaxListpackSize); fill < 0 {
		opt.ListNodeBytes = listNodeKiB << min(-fill-1, maxListNodeExp-1)
	}
	return opt
}

// LoadOptions are the thresholds a restored value is built with.
func LoadOptions(c *Ctx) rdb.Options {
	return rdb.Options{
		Hash:     HashLimits(c),
		Set:      SetLimits(c),
		ZSet:     ZSetLimits(c),
		ListFill: int(max(min(c.Env.Cfg.Int(config.ListMaxListpackSize), math.MaxInt32), math.MinInt32)),
		Now:      c.Now,
		LFU:      c.Env.Policy().LFU(),
	}
}
