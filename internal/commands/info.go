package commands

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// INFO, in Redis's text layout: "# Section\r\nfield:value\r\n...", sections
// separated by an empty line, fixed section order whatever the request.

func init() {
	engine.Register(&engine.Command{Name: "info", Arity: -1, Flags: engine.FlagLoading | engine.FlagStale, ACL: "@dangerous", Group: "server",
		Tips:    "nondeterministic_output request_policy:all_shards response_policy:special",
		Summary: "Returns information and statistics about the server.", Since: "1.0.0", Complexity: "O(1)",
		Handler: cmdInfo})
}

// infoSections is every section in output order; a section's generator
// appends its fields.
var infoSections = []struct {
	name, title string
	inDefault   bool
	gen         func(e *engine.Env, b *engine.InfoBuilder)
}{
	{"server", "Server", true, infoServer},
	{"clients", "Clients", true, infoClients},
	{"memory", "Memory", true, infoMemory},
	{"persistence", "Persistence", true, infoPersistence},
	{"stats", "Stats", true, infoStats},
	{"replication", "Replication", true, infoReplication},
	{"cpu", "CPU", true, infoCPU},
	{"modules", "Modules", true, func(*engine.Env, *engine.InfoBuilder) {}},
	{"commandstats", "Commandstats", false, engine.InfoCommandStats},
	{"errorstats", "Errorstats", true, engine.InfoErrorStats},
	{"latencystats", "Latencystats", false, engine.InfoLatencyStats},
	{"cluster", "Cluster", true, func(e *engine.Env, b *engine.InfoBuilder) {
		b.KV("cluster_enabled", map[bool]string{true: "1", false: "0"}[e.Cluster() != nil])
	}},
	{"keyspace", "Keyspace", true, infoKeyspace},
}

func cmdInfo(c *engine.Ctx) {
	sections := make([]string, len(c.Args)-1)
	for i := range sections {
		sections[i] = c.Arg(i + 1)
	}
	c.W.Verbatim("txt", InfoString(c.Env, sections...))
}

// InfoString returns the INFO text of e for the given sections (none: the
// default ones; "all", "everything" and "default" expand as in Redis 7).
// It is called under the server lock.
func InfoString(e *engine.Env, sections ...string) string {
	want := map[string]bool{}
	if len(sections) == 0 {
		want["default"] = true
	}
	for _, s := range sections {
		want[strings.ToLower(s)] = true
	}
	all := want["all"] || want["everything"]
	var b engine.InfoBuilder
	n := 0
	for _, s := range infoSections {
		if !all && !want[s.name] && !(want["default"] && s.inDefault) {
			continue
		}
		if n > 0 {
			b.WriteString("\r\n")
		}
		n++
		b.WriteString("# " + s.title + "\r\n")
		s.gen(e, &b)
	}
	return b.String()
}

func infoServer(e *engine.Env, b *engine.InfoBuilder) {
	now := e.Clock.NowUs()
	uptime := int64(time.Since(e.Started) / time.Second)
	exe, _ := os.Executable()
	b.KV("redis_version", config.RedisVersion)
	b.KV("abacus_version", e.Version)
	b.KV("redis_git_sha1", "00000000")
	b.KV("redis_git_dirty", "0")
	b.KV("redis_build_id", "0")
	b.KV("redis_mode", "standalone")
	b.KV("os", osName())
	b.Int("arch_bits", strconv.IntSize)
	b.KV("monotonic_clock", "Go runtime monotonic clock")
	b.KV("multiplexing_api", pollerName())
	b.KV("go_version", runtime.Version())
	b.Int("process_id", int64(os.Getpid()))
	b.KV("process_supervised", "no")
	b.KV("run_id", e.RunID)
	if e.Host != nil {
		b.Int("tcp_port", int64(e.Host.Port()))
	} else {
		b.Int("tcp_port", e.Cfg.Int(config.Port))
	}
	b.Int("server_time_usec", now)
	b.Int("uptime_in_seconds", uptime)
	b.Int("uptime_in_days", uptime/86400)
	b.Int("hz", e.Cfg.Int(config.Hz))
	b.Int("configured_hz", e.Cfg.Int(config.Hz))
	b.Int("lru_clock", (now/1e6)&(1<<24-1))
	b.KV("executable", exe)
	b.KV("config_file", e.Cfg.File)
	b.KV("io_threads_active", "0")
}

func osName() string {
	name := map[string]string{"linux": "Linux", "darwin": "Darwin", "freebsd": "FreeBSD", "windows": "Windows"}[runtime.GOOS]
	if name == "" {
		name = runtime.GOOS
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return name + " " + strings.TrimSpace(string(rel)) + " " + arch
	}
	return name + " " + arch
}

func pollerName() string {
	switch runtime.GOOS {
	case "linux":
		return "epoll"
	case "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	case "windows":
		return "iocp"
	}
	return "go netpoller"
}

func infoClients(e *engine.Env, b *engine.InfoBuilder) {
	var clients []*engine.Session
	if e.Host != nil {
		clients = e.Host.Clients()
	}
	var maxIn, maxOut, blocked int64
	if e.Host != nil {
		maxIn, maxOut = e.Host.RecentMaxBuffers()
	}
	for _, s := range clients {
		if s.Blocked || strings.ContainsRune(s.Flags, 'b') {
			blocked++
		}
	}
	b.Int("connected_clients", int64(len(clients)))
	b.KV("cluster_connections", "0")
	b.Int("maxclients", e.Cfg.Int(config.MaxClients))
	b.Int("client_recent_max_input_buffer", maxIn)
	b.Int("client_recent_max_output_buffer", maxOut)
	b.Int("blocked_clients", blocked)
	tclients, _, _, _ := e.TrackingCounts()
	b.Int("tracking_clients", int64(tclients))
	b.Int("clients_in_timeout_table", int64(e.BlockedWithTimeout())) // blocking.go
}

func infoMemory(e *engine.Env, b *engine.InfoBuilder) {
	r := readMemReport(e) // memory_report.go: what each figure means
	m := engine.ReadMemStats()
	u := func(n int64) uint64 { return uint64(max(n, 0)) }
	sysMem := systemMemory()
	maxmem, _ := strconv.ParseUint(e.Cfg.Str(config.MaxMemory), 10, 64)
	b.Int("used_memory", r.used)
	b.KV("used_memory_human", bytesToHuman(u(r.used)))
	b.Int("used_memory_rss", r.rss)
	b.KV("used_memory_rss_human", bytesToHuman(u(r.rss)))
	b.Int("used_memory_peak", r.peak)
	b.KV("used_memory_peak_human", bytesToHuman(u(r.peak)))
	b.KV("used_memory_peak_perc", percent(u(r.used), u(r.peak)))
	b.Int("used_memory_overhead", r.overhead)
	b.Int("used_memory_startup", r.startup)
	b.Int("used_memory_dataset", r.dataset)
	b.KV("used_memory_dataset_perc", percent(u(r.dataset), u(r.used-r.startup)))
	b.Int("allocator_allocated", r.allocated)
	b.Int("allocator_active", r.active)
	b.Int("allocator_resident", r.resident)
	b.KV("total_system_memory", strconv.FormatUint(sysMem, 10))
	b.KV("total_system_memory_human", bytesToHuman(sysMem))
	infoScriptMemory(e, b) // scripting_info.go
	b.KV("maxmemory", strconv.FormatUint(maxmem, 10))
	b.KV("maxmemory_human", bytesToHuman(maxmem))
	b.KV("maxmemory_policy", e.Cfg.Str(config.MaxMemoryPolicy))
	b.Float("allocator_frag_ratio", ratioOf(r.active, r.allocated))
	b.Int("allocator_frag_bytes", r.active-r.allocated)
	b.Float("allocator_rss_ratio", ratioOf(r.resident, r.active))
	b.Int("allocator_rss_bytes", r.resident-r.active)
	b.Float("rss_overhead_ratio", ratioOf(r.rss, r.resident))
	b.Int("rss_overhead_bytes", r.rss-r.resident)
	b.Float("mem_fragmentation_ratio", ratioOf(r.rss, r.used))
	b.Int("mem_fragmentation_bytes", r.rss-r.used)
	// Constants: Abacus has no replication backlog or replica buffers,
	// and its AOF buffer is counted in used memory (Redis leaves
	// it out of what it compares with maxmemory).
	b.KV("mem_not_counted_for_evict", "0")
	b.KV("mem_replication_backlog", "0")
	b.KV("mem_total_replication_buffers", "0")
	b.KV("mem_clients_slaves", "0")
	b.Int("mem_clients_normal", r.clients)
	var links int64
	if cl, ok := e.Cluster().(interface{ LinksMemory() int64 }); ok {
		links = cl.LinksMemory()
	}
	b.Int("mem_cluster_links", links)
	b.KV("mem_aof_buffer", "0")
	b.KV("mem_allocator", "go")
	b.KV("active_defrag_running", "0") // the Go runtime has no defragmenter (docs/design.md)
	b.KV("lazyfree_pending_objects", "0")
	b.KV("lazyfreed_objects", "0")
	b.KV("go_heap_objects", strconv.FormatUint(m.Objects, 10))
	b.KV("go_memory_total", strconv.FormatUint(m.Total, 10))
	b.KV("go_gc_cycles", strconv.FormatUint(m.GCCycles, 10))
	b.KV("go_memory_limit", strconv.FormatUint(m.Limit, 10))
}

func percent(part, whole uint64) string {
	if whole == 0 {
		return "0.00%"
	}
	return strconv.FormatFloat(float64(part)*100/float64(whole), 'f', 2, 64) + "%"
}

// bytesToHuman formats a byte count as Redis does (1.02M, 640.99K, 12B).
func bytesToHuman(n uint64) string {
	units := []string{"K", "M", "G", "T", "P"}
	if n < 1024 {
		return strconv.FormatUint(n, 10) + "B"
	}
	d := float64(n) / 1024
	for i, u := range units {
		if d < 1024 || i == len(units)-1 {
			return strconv.FormatFloat(d, 'f', 2, 64) + u
		}
		d /= 1024
	}
	return ""
}

func infoPersistence(e *engine.Env, b *engine.InfoBuilder) {
	b.KV("loading", "0")
	b.KV("async_loading", "0")
	b.KV("current_cow_peak", "0")
	b.KV("current_cow_size", "0")
	b.KV("current_cow_size_age", "0")
	b.KV("current_fork_perc", "0.00")
	e.Persistence().Info(b)
}

func infoStats(e *engine.Env, b *engine.InfoBuilder) {
	st := &e.Stats
	ks := &e.KS.Stats
	ops, in, out := st.Info.Rates()
	b.Int("total_connections_received", st.TotalConnections.Load())
	b.Int("total_commands_processed", st.TotalCommands.Load())
	b.Int("instantaneous_ops_per_sec", ops)
	b.Int("total_net_input_bytes", st.NetInputBytes.Load())
	b.Int("total_net_output_bytes", st.NetOutputBytes.Load())
	b.KV("total_net_repl_input_bytes", "0")
	b.KV("total_net_repl_output_bytes", "0")
	b.Float("instantaneous_input_kbps", float64(in)/1024)
	b.Float("instantaneous_output_kbps", float64(out)/1024)
	b.KV("instantaneous_input_repl_kbps", "0.00")
	b.KV("instantaneous_output_repl_kbps", "0.00")
	b.Int("rejected_connections", st.RejectedConns.Load())
	b.Int("sync_full", st.SyncFull.Load())
	b.Int("sync_partial_ok", st.SyncPartialOK.Load())
	b.Int("sync_partial_err", st.SyncPartialErr.Load())
	b.Int("expired_keys", ks.ExpiredKeys)
	b.Float("expired_stale_perc", ks.ExpiredStalePerc*100)
	b.KV("expired_time_cap_reached_count", "0")
	b.Int("expire_cycle_cpu_milliseconds", ks.ExpireCycleCPUMicros/1000)
	b.Int("evicted_keys", ks.EvictedKeys)
	b.Int("evicted_clients", e.EvictedClients())
	exceededTotal, exceededNow := e.EvictionExceeded()
	b.Int("total_eviction_exceeded_time", exceededTotal.Milliseconds())
	b.Int("current_eviction_exceeded_time", exceededNow.Milliseconds())
	b.Int("keyspace_hits", ks.Hits)
	b.Int("keyspace_misses", ks.Misses)
	b.Int("pubsub_channels", int64(e.NumChannels(engine.SubChannel)))
	b.Int("pubsub_patterns", int64(e.NumPatterns()))
	b.Int("pubsubshard_channels", int64(e.NumChannels(engine.SubShard)))
	b.KV("latest_fork_usec", "0")
	b.KV("total_forks", "0")
	b.Int("migrate_cached_sockets", int64(migrateCaches.Of(e).len()))
	b.KV("slave_expires_tracked_keys", "0")
	b.KV("active_defrag_hits", "0")
	b.KV("active_defrag_misses", "0")
	b.KV("active_defrag_key_hits", "0")
	b.KV("active_defrag_key_misses", "0")
	_, tkeys, titems, tprefixes := e.TrackingCounts()
	b.Int("tracking_total_keys", int64(tkeys))
	b.Int("tracking_total_items", int64(titems))
	b.Int("tracking_total_prefixes", int64(tprefixes))
	b.Int("unexpected_error_replies", st.UnexpectedErrors.Load())
	b.Int("total_error_replies", st.TotalErrorReplies.Load())
	b.KV("dump_payload_sanitizations", "0")
	b.Int("client_output_buffer_limit_disconnections", st.OutputLimitCloses.Load()) // Redis 7.2's field
	// Redis 7.2's fields: refusals by reason, as ACL LOG's reasons count them.
	b.Int("acl_access_denied_auth", e.ACL.Denied.Auth)
	b.Int("acl_access_denied_cmd", e.ACL.Denied.Cmd)
	b.Int("acl_access_denied_key", e.ACL.Denied.Key)
	b.Int("acl_access_denied_channel", e.ACL.Denied.Channel)
	b.Int("panics_recovered", st.PanicsRecovered.Load())
	engine.InfoDecisions(e, b)
}

func infoReplication(e *engine.Env, b *engine.InfoBuilder) {
	if e.ReplInfo(b) {
		return
	}
	b.KV("role", "master")
	b.KV("connected_slaves", "0")
	b.KV("master_failover_state", "no-failover")
	b.KV("master_replid", e.Stats.Info.ReplID())
	b.KV("master_replid2", strings.Repeat("0", 40))
	b.KV("master_repl_offset", "0")
	b.KV("second_repl_offset", "-1")
	b.KV("repl_backlog_active", "0")
	b.Int("repl_backlog_size", e.Cfg.Int(config.ReplBacklogSize))
	b.KV("repl_backlog_first_byte_offset", "0")
	b.KV("repl_backlog_histlen", "0")
}

func infoCPU(_ *engine.Env, b *engine.InfoBuilder) {
	sys, user := cpuTimes()
	b.KV("used_cpu_sys", fmtSeconds(sys))
	b.KV("used_cpu_user", fmtSeconds(user))
	b.KV("used_cpu_sys_children", "0.000000")
	b.KV("used_cpu_user_children", "0.000000")
}

func fmtSeconds(d time.Duration) string {
	us := d.Microseconds()
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

func infoKeyspace(e *engine.Env, b *engine.InfoBuilder) {
	for _, db := range e.KS.DBs {
		if n := db.Len(); n > 0 {
			b.KV("db"+strconv.Itoa(db.ID), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d", n, db.ExpiresLen(), db.AvgTTL()))
		}
	}
}

// processRSS reads the resident set size from /proc/self/statm (0 where
// there is no /proc).
func processRSS() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// systemMemory reads MemTotal from /proc/meminfo (0 where unavailable).
func systemMemory() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
