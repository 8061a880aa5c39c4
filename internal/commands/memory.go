package commands

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP.

func init() {
	plain := func(summary string, h func(*engine.Ctx)) *engine.Command {
		return &engine.Command{Arity: 2, Handler: h, Summary: summary, Since: "4.0.0", Complexity: "O(1)",
			Tips: "nondeterministic_output request_policy:all_shards response_policy:special"}
	}
	engine.Register(&engine.Command{Name: "memory", Arity: -2, Group: "server",
		Summary: "A container for memory diagnostics commands.", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"usage": {Arity: -3, Flags: engine.FlagReadonly, First: 2, Last: 2, Step: 1, KeyFlags: "RO", Handler: cmdMemoryUsage,
				Summary: "Estimates the memory usage of a key.", Since: "4.0.0", Complexity: "O(N) where N is the number of samples."},
			"stats":        plain("Returns details about memory usage.", cmdMemoryStats),
			"doctor":       plain("Outputs a memory problems report.", cmdMemoryDoctor),
			"malloc-stats": plain("Returns the allocator statistics.", cmdMemoryMallocStats),
			"purge": {Arity: 2, Handler: cmdMemoryPurge, Tips: "request_policy:all_shards response_policy:all_succeeded",
				Summary: "Asks the allocator to release memory.", Since: "4.0.0", Complexity: "Depends on how much memory is allocated, could be slow"},
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Handler: cmdMemoryHelp,
				Summary: "Returns helpful text about the different subcommands.", Since: "4.0.0", Complexity: "O(1)"},
		},
	})
}

// Sizes of Redis's structures that MEMORY USAGE counts, so that the
// estimate of a string key matches redis-server's (a key holding "bar" is
// 56 bytes in both): a dict entry and an object header.
const (
	dictEntrySize = 24
	robjSize      = 16
)

// mallocSize rounds an allocation up to jemalloc's size class: 8, then
// multiples of 16 up to 128, then four classes per doubling.
func mallocSize(n int) int {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	p := 128
	for p*2 < n {
		p *= 2
	}
	step := p / 4
	return (n + step - 1) / step * step
}

// sdsAlloc is the allocation of an sds string of length n: header, bytes
// and terminator.
func sdsAlloc(n int) int {
	hdr := 17
	switch {
	case n < 32:
		hdr = 1
	case n < 256:
		hdr = 3
	case n < 65536:
		hdr = 5
	case n < 1<<32:
		hdr = 9
	}
	return mallocSize(hdr + n + 1)
}

// ObjectMemory estimates the bytes a key and its value hold.
func ObjectMemory(o *keyspace.Object) int {
	keyLen := len(o.Key)
	key := sdsAlloc(keyLen)
	if keyLen == 0 {
		key = mallocSize(3 + 1) // an empty sds gets the 8-bit header
	}
	return dictEntrySize + key + valueMemory(o)
}

func valueMemory(o *keyspace.Object) int {
	if o.Type == keyspace.TypeString {
		switch o.Enc {
		case keyspace.EncInt:
			return robjSize
		case keyspace.EncEmbstr:
			return mallocSize(robjSize + 3 + len(o.Raw()) + 1)
		default:
			n := len(o.Raw())
			hdr := 3
			if n >= 256 {
				hdr = 5
			}
			if n >= 65536 {
				hdr = 9
			}
			return robjSize + mallocSize(hdr+n+1)
		}
	}
	if m, ok := o.Val().(keyspace.Value); ok {
		return robjSize + m.MemoryUsage()
	}
	return robjSize
}

func cmdMemoryUsage(c *engine.Ctx) {
	for i := 3; i < len(c.Args); i++ {
		if !c.ArgIs(i, "samples") || i+1 >= len(c.Args) {
			c.Error(engine.ErrSyntax)
			return
		}
		n, ok := c.Int(i + 1)
		if !ok {
			return
		}
		if n < 0 {
			c.Error(engine.ErrSyntax)
			return
		}
		i++
	}
	// Like Redis, a key whose TTL passed but that is not reclaimed yet is
	// still measured.
	o := c.DB.Peek(c.Key(2))
	if o == nil {
		c.W.Null()
		return
	}
	c.W.Int(int64(ObjectMemory(o)))
}

func cmdMemoryStats(c *engine.Ctx) {
	e := c.Env
	r := readMemReport(e) // memory_report.go
	type dbOver struct{ id, main, expires int64 }
	var dbs []dbOver
	for _, db := range e.KS.DBs {
		if n := int64(db.Len()); n > 0 {
			dbs = append(dbs, dbOver{int64(db.ID), n * perKeyOverhead, int64(db.ExpiresLen()) * 8})
		}
	}
	w := c.W
	w.Map(18 + len(dbs))
	kvi := func(k string, v int64) { w.BulkString(k); w.Int(v) }
	kvf := func(k string, v float64) { w.BulkString(k); w.Double(v) }
	kvi("peak.allocated", r.peak)
	kvi("total.allocated", r.used)
	kvi("startup.allocated", r.startup)
	kvi("replication.backlog", 0)
	kvi("clients.slaves", 0)
	kvi("clients.normal", r.clients)
	kvi("cluster.links", 0)
	kvi("aof.buffer", 0)
	kvi("lua.caches", 0)
	kvi("functions.caches", 0)
	for _, d := range dbs {
		w.BulkString("db." + strconv.FormatInt(d.id, 10))
		w.Map(2)
		kvi("overhead.hashtable.main", d.main)
		kvi("overhead.hashtable.expires", d.expires)
	}
	kvi("overhead.total", r.overhead)
	kvi("keys.count", r.keys)
	perKey := int64(0)
	if r.keys > 0 {
		perKey = (r.used - r.startup) / r.keys
	}
	kvi("keys.bytes-per-key", perKey)
	kvi("dataset.bytes", r.dataset)
	kvf("dataset.percentage", ratio(float64(r.dataset)*100, float64(r.used-r.startup)))
	kvf("peak.percentage", ratio(float64(r.used)*100, float64(r.peak)))
	kvf("fragmentation", ratioOf(r.rss, r.used))
	kvi("fragmentation.bytes", r.rss-r.used)
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func cmdMemoryDoctor(c *engine.Ctx) {
	r := readMemReport(c.Env)
	var b strings.Builder
	var issues []string
	if r.used < 5<<20 {
		b.WriteString("This instance holds less than 5 MB of data: there is nothing worth diagnosing yet.\n")
		c.W.Verbatim("txt", b.String())
		return
	}
	human := func(n int64) string { return bytesToHuman(uint64(max(n, 0))) }
	if r.peak > r.used*3/2 {
		issues = append(issues, fmt.Sprintf("The memory peak (%s) is more than 150%% of the memory in use now (%s): the Go runtime returns freed memory to the system gradually.",
			human(r.peak), human(r.used)))
	}
	if r.rss > 0 && ratioOf(r.rss, r.used) > 1.4 {
		issues = append(issues, fmt.Sprintf("The resident set (%s) is %.2f times the memory in use (%s): garbage the collector has not reclaimed yet, fragmentation, or memory not yet returned to the system. MEMORY PURGE collects and returns it.",
			human(r.rss), ratioOf(r.rss, r.used), human(r.used)))
	}
	if r.keys > 0 && r.clients > r.dataset/2 {
		issues = append(issues, fmt.Sprintf("The clients' buffers (%s) are more than half the dataset (%s): see CLIENT LIST's qbuf and omem, and maxmemory-clients.",
			human(r.clients), human(r.dataset)))
	}
	if len(issues) == 0 {
		b.WriteString("No memory problem detected.\n")
	} else {
		b.WriteString("Memory report:\n\n")
		for i, s := range issues {
			fmt.Fprintf(&b, " * %d. %s\n", i+1, s)
		}
	}
	c.W.Verbatim("txt", b.String())
}

func cmdMemoryMallocStats(c *engine.Ctx) {
	m := engine.ReadMemStats()
	c.W.Verbatim("txt", fmt.Sprintf("Go runtime memory\nheap objects bytes: %d\nheap objects: %d\ntotal mapped: %d\nGC cycles: %d\nmemory limit: %d\n",
		m.Heap, m.Objects, m.Total, m.GCCycles, m.Limit))
}

func cmdMemoryPurge(c *engine.Ctx) {
	c.Env.MeasureMemory() // collects: used_memory is exact after it
	debug.FreeOSMemory()
	c.W.OK()
}

func cmdMemoryHelp(c *engine.Ctx) {
	c.ReplyHelp("MEMORY",
		"DOCTOR",
		"    Return a report on memory problems.",
		"MALLOC-STATS",
		"    Return the Go runtime's memory statistics.",
		"PURGE",
		"    Run the garbage collector and return free memory to the system.",
		"STATS",
		"    Return details of the server's memory usage.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return the bytes used by <key> and its value (an estimate; SAMPLES is",
		"    accepted for compatibility).",
	)
}
