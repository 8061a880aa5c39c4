package commands

import (
	"strconv"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The DEBUG subcommands that make or reload data, as Redis 7.0's.

// populateName is Redis's snprintf(buf, 128, "%s:%lu", prefix, j): the
// name is cut at 127 bytes.
func populateName(dst []byte, prefix []byte, j int64) []byte {
	dst = append(dst[:0], prefix...)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, j, 10)
	if len(dst) > 127 {
		dst = dst[:127]
	}
	return dst
}

// cmdDebugPopulate is DEBUG POPULATE count [prefix] [size]: string keys
// prefix:0 ... prefix:count-1 ("key" by default) holding "value:<j>", or,
// with a size, that text cut or padded with zero bytes to size bytes. Keys
// that exist are left alone. Like Redis, nothing is propagated (the AOF
// and replicas do not see these keys) and the dirty count does not move.
func cmdDebugPopulate(c *engine.Ctx) {
	if len(c.Args) > 5 {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try DEBUG HELP.", c.Args[1])
		return
	}
	// Redis's getPositiveLongFromObjectOrReply: one error for both.
	count, ok := num.ParseInt(c.Args[2])
	if !ok || count < 0 {
		c.Error(engine.ErrPositive)
		return
	}
	size := int64(0)
	if len(c.Args) == 5 {
		if size, ok = num.ParseInt(c.Args[4]); !ok || size < 0 {
			c.Error(engine.ErrPositive)
			return
		}
	}
	prefix := []byte("key")
	if len(c.Args) >= 4 {
		prefix = c.Args[3]
	}
	var name, val []byte
	for j := int64(0); j < count; j++ {
		name = populateName(name, prefix, j)
		key := string(name)
		if c.DB.Lookup(key) != nil {
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
		v := append([]byte(nil), val...)
		if size > 0 {
			v = make([]byte, size)
			copy(v, val)
		}
		c.DB.Add(key, keyspace.NewString(v))
	}
	c.W.OK()
}

// cmdDebugLoadAOF is DEBUG LOADAOF: the AOF written out, the data emptied
// and the AOF's files loaded back, with no rewrite. The loaded commands
// are not propagated, and, as Redis resets its dirty count, they do not
// count as changes.
func cmdDebugLoadAOF(c *engine.Ctx) {
	dirty := c.Env.Stats.Dirty.Load()
	err := c.Env.Persistence().LoadAOF()
	c.Env.Stats.Dirty.Store(dirty)
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}

// quicklistPackedMax is the largest threshold Redis accepts (4 GB less
// 1 MB, quicklistisSetPackedThreshold).
const quicklistPackedMax = 1<<32 - 1<<20

// cmdDebugQuicklistPackedThreshold is DEBUG QUICKLIST-PACKED-THRESHOLD
// size. In Redis it decides which list elements get a quicklist node of
// their own ("plain") instead of sharing a listpack; every list command
// behaves the same either way. Abacus's lists keep large elements as they
// keep small ones, so the value is checked as Redis checks it and has no
// further effect.
func cmdDebugQuicklistPackedThreshold(c *engine.Ctx) {
	n, ok := config.ParseMemory(string(c.Args[2]))
	if !ok || n > quicklistPackedMax {
		c.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
		return
	}
	c.W.OK()
}
