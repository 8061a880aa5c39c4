package config

import (
	"math"
)

// The parameters' IDs, in table order. Add a parameter by adding an ID here
// and its entry in table below (and a line in docs/configuration.md).
const (
	Bind ID = iota
	Port
	ProtectedMode
	RequirePass
	Databases
	MaxClients
	Timeout
	TCPKeepalive
	Dir
	DBFilename
	AppendOnly
	AppendFsync
	LogLevel
	LogFile
	ProtoMaxBulkLen
	ClientQueryBufferLimit
	Hz
	HashMaxListpackEntries
	HashMaxListpackValue
	ZSetMaxListpackEntries
	ZSetMaxListpackValue
	SetMaxIntsetEntries
	SetMaxListpackEntries
	SetMaxListpackValue
	ListMaxListpackSize
	HllSparseMaxBytes
	SlowlogLogSlowerThan
	SlowlogMaxLen
	LatencyMonitorThreshold
	MaxMemory
	MaxMemoryPolicy
	Save
	BusyReplyThreshold

	// Process and network.
	Daemonize
	PidFile
	UnixSocket
	UnixSocketPerm
	TCPBacklog
	Supervised
	SyslogEnabled
	SyslogIdent
	SyslogFacility
	AlwaysShowLogo
	SetProcTitle
	IOThreads
	IOThreadsDoReads
	EnableProtectedConfigs
	EnableDebugCommand
	EnableModuleCommand
	ShutdownTimeout
	ShutdownOnSigint
	ShutdownOnSigterm
	OOMScoreAdj
	OOMScoreAdjValues
	DisableTHP
	CrashLogEnabled
	CrashMemcheckEnabled
	ProcTitleTemplate

	// Persistence.
	StopWritesOnBgsaveError
	RDBCompression
	RDBChecksum
	RDBDelSyncFiles
	RDBKeySaveDelay
	KeyLoadDelay
	SanitizeDumpPayload
	AppendFilename
	AppendDirname
	NoAppendfsyncOnRewrite
	AutoAOFRewritePercentage
	AutoAOFRewriteMinSize
	AOFLoadTruncated
	AOFUseRDBPreamble
	AOFTimestampEnabled
	AOFRewriteIncrementalFsync
	RDBSaveIncrementalFsync

	// Replication and cluster (accepted; Abacus is a standalone master).
	ReplicaOf
	MasterAuth
	MasterUser
	ReplicaServeStaleData
	ReplicaReadOnly
	ReplicaIgnoreMaxmemory
	ReplDisklessSync
	ReplDisklessSyncDelay
	ReplBacklogSize
	ReplBacklogTTL
	ReplTimeout
	ReplPingReplicaPeriod
	MinReplicasToWrite
	MinReplicasMaxLag
	ReplicaPriority
	ReplDisklessLoad
	ReplDisklessSyncMaxReplicas
	ReplDisableTCPNodelay
	ReplicaLazyFlush
	ReplicaAnnounced
	ReplicaIgnoreDiskWriteErrors
	ReplicaAnnounceIP
	ReplicaAnnouncePort
	ClusterEnabled
	ClusterConfigFile
	ClusterNodeTimeout
	ClusterPort
	ClusterAnnounceIP
	ClusterAnnouncePort
	ClusterAnnounceBusPort
	ClusterAnnounceTLSPort
	ClusterAnnounceHostname
	ClusterRequireFullCoverage
	ClusterAllowReadsWhenDown
	ClusterAllowPubsubshardWhenDown
	ClusterReplicaValidityFactor
	ClusterMigrationBarrier
	ClusterAllowReplicaMigration
	ClusterReplicaNoFailover
	ClusterPreferredEndpointType
	ClusterLinkSendbufLimit
	TLSPort

	// Memory and keyspace.
	MaxMemorySamples
	MaxMemoryEvictionTenacity
	MaxMemoryClients
	ActiveExpireEffort
	LazyfreeLazyEviction
	LazyfreeLazyExpire
	LazyfreeLazyServerDel
	LazyfreeLazyUserDel
	LazyfreeLazyUserFlush
	ActiveRehashing
	ActiveDefrag
	LFULogFactor
	LFUDecayTime
	JemallocBgThread

	// Encodings.
	ListCompressDepth
	StreamNodeMaxBytes
	StreamNodeMaxEntries

	// Clients, events, monitoring.
	NotifyKeyspaceEvents
	ClientOutputBufferLimit
	DynamicHz
	TrackingTableMaxKeys
	ACLLogMaxLen
	ACLFile
	ACLPubsubDefault
	LatencyTracking
	LatencyTrackingInfoPercentiles
	PropagationErrorBehavior
	ScriptTransactional
	EventLoop
	EventLoopSpin
	// TLS (internal/conn/tls.go).
	TLSCertFile
	TLSKeyFile
	TLSKeyFilePass
	TLSClientCertFile
	TLSClientKeyFile
	TLSClientKeyFilePass
	TLSDHParamsFile
	TLSCACertFile
	TLSCACertDir
	TLSAuthClients
	TLSProtocols
	TLSCiphers
	TLSCiphersuites
	TLSPreferServerCiphers
	TLSSessionCaching
	TLSSessionCacheSize
	TLSSessionCacheTimeout
	TLSReplication
	TLSCluster

	// Abacus's own HTTP endpoint (internal/httpapi).
	HTTPPort
	HTTPBind
	HTTPRequirePass
	HTTPExportSeries
	HTTPExportSeriesMax
	HTTPMetricsPublic
	numParams
)

const (
	maxInt32  = math.MaxInt32
	minInt32  = math.MinInt32
	maxInt64  = math.MaxInt64
	maxUint32 = math.MaxUint32
)

// table is every parameter, with Redis 7's names, defaults, ranges and
// error texts. Ranges and defaults were checked against redis-server 7.0
// (config_test.go compares CONFIG GET of every shared name).
var table = []*Param{
	Bind:                    strP("bind", "127.0.0.1 -::1").multi().immutable().canon(canonBind),
	Port:                    intP("port", "6379", 0, 65535).immutable(),
	ProtectedMode:           boolP("protected-mode", "yes"),
	RequirePass:             strP("requirepass", "").sensitive(),
	Databases:               intP("databases", "16", 1, maxInt32).immutable(),
	MaxClients:              intP("maxclients", "10000", 1, maxUint32).apply(applyMaxClients),
	Timeout:                 intP("timeout", "0", 0, maxInt32),
	TCPKeepalive:            intP("tcp-keepalive", "300", 0, maxInt32),
	Dir:                     strP("dir", ".").protected().canon(canonDir),
	DBFilename:              strP("dbfilename", "dump.rdb").protected().canon(canonName("dbfilename", "filename")),
	AppendOnly:              boolP("appendonly", "no"),
	AppendFsync:             enumP("appendfsync", "everysec", "everysec", "always", "no"),
	LogLevel:                enumP("loglevel", "notice", "debug", "verbose", "notice", "warning"),
	LogFile:                 strP("logfile", "").immutable(),
	ProtoMaxBulkLen:         memP("proto-max-bulk-len", "536870912", 1024*1024, maxInt64),
	ClientQueryBufferLimit:  memP("client-query-buffer-limit", "1073741824", 1024*1024, maxInt64),
	Hz:                      intP("hz", "10", 0, maxInt32).clamp(1, 500),
	HashMaxListpackEntries:  intP("hash-max-listpack-entries", "512", 0, maxInt64).alias("hash-max-ziplist-entries"),
	HashMaxListpackValue:    memP("hash-max-listpack-value", "64", 0, maxInt64).alias("hash-max-ziplist-value"),
	ZSetMaxListpackEntries:  intP("zset-max-listpack-entries", "128", 0, maxInt64).alias("zset-max-ziplist-entries"),
	ZSetMaxListpackValue:    memP("zset-max-listpack-value", "64", 0, maxInt64).alias("zset-max-ziplist-value"),
	SetMaxIntsetEntries:     intP("set-max-intset-entries", "512", 0, maxInt64),
	SetMaxListpackEntries:   intP("set-max-listpack-entries", "128", 0, maxInt64),
	SetMaxListpackValue:     memP("set-max-listpack-value", "64", 0, maxInt64),
	ListMaxListpackSize:     intP("list-max-listpack-size", "-2", minInt32, maxInt32).alias("list-max-ziplist-size"),
	HllSparseMaxBytes:       memP("hll-sparse-max-bytes", "3000", 0, maxInt64),
	SlowlogLogSlowerThan:    intP("slowlog-log-slower-than", "10000", -1, maxInt64),
	SlowlogMaxLen:           intP("slowlog-max-len", "128", 0, maxInt64),
	LatencyMonitorThreshold: intP("latency-monitor-threshold", "0", 0, maxInt64),
	MaxMemory:               memP("maxmemory", "0", 0, maxInt64).unsigned(),
	MaxMemoryPolicy: enumP("maxmemory-policy", "noeviction",
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
	Save:               strP("save", "3600 1 300 100 60 10000").multi().canon(canonSave),
	BusyReplyThreshold: intP("busy-reply-threshold", "5000", 0, maxInt64).alias("lua-time-limit"),

	Daemonize:              boolP("daemonize", "no").immutable(), // "yes" is refused at startup (cmd/abacus)
	PidFile:                strP("pidfile", "").immutable(),
	UnixSocket:             strP("unixsocket", "").immutable(),
	UnixSocketPerm:         intP("unixsocketperm", "0", 0, 0777).octal().immutable(),
	TCPBacklog:             intP("tcp-backlog", "511", 0, maxInt32).immutable(),
	Supervised:             enumP("supervised", "no", "upstart", "systemd", "auto", "no").immutable(),
	SyslogEnabled:          boolP("syslog-enabled", "no").immutable(),
	SyslogIdent:            strP("syslog-ident", "redis").immutable(),
	SyslogFacility:         enumP("syslog-facility", "local0", "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7").immutable(),
	AlwaysShowLogo:         boolP("always-show-logo", "no").immutable(),
	SetProcTitle:           boolP("set-proc-title", "yes").immutable(),
	IOThreads:              intP("io-threads", "1", 1, 128).immutable(),
	IOThreadsDoReads:       boolP("io-threads-do-reads", "no").immutable(),
	EnableProtectedConfigs: enumP("enable-protected-configs", "no", "no", "yes", "local").immutable(),
	EnableDebugCommand:     enumP("enable-debug-command", "no", "no", "yes", "local").immutable(),
	EnableModuleCommand:    enumP("enable-module-command", "no", "no", "yes", "local").immutable(),
	ShutdownTimeout:        intP("shutdown-timeout", "10", 0, maxInt32),
	ShutdownOnSigint:       strP("shutdown-on-sigint", "default").multi().canon(canonShutdownFlags),
	ShutdownOnSigterm:      strP("shutdown-on-sigterm", "default").multi().canon(canonShutdownFlags),
	OOMScoreAdj:            enumP("oom-score-adj", "no", "no", "yes", "relative", "absolute"),
	OOMScoreAdjValues:      strP("oom-score-adj-values", "0 200 800").multi().canon(canonOOMValues),
	DisableTHP:             boolP("disable-thp", "yes").immutable(),
	CrashLogEnabled:        boolP("crash-log-enabled", "yes"),
	CrashMemcheckEnabled:   boolP("crash-memcheck-enabled", "yes"),
	ProcTitleTemplate:      strP("proc-title-template", "{title} {listen-addr} {server-mode}"),

	StopWritesOnBgsaveError:    boolP("stop-writes-on-bgsave-error", "yes"),
	RDBCompression:             boolP("rdbcompression", "yes"),
	RDBChecksum:                boolP("rdbchecksum", "yes").immutable(),
	RDBDelSyncFiles:            boolP("rdb-del-sync-files", "no"),
	RDBKeySaveDelay:            intP("rdb-key-save-delay", "0", minInt32, maxInt32),
	KeyLoadDelay:               intP("key-load-delay", "0", minInt32, maxInt32),
	SanitizeDumpPayload:        enumP("sanitize-dump-payload", "no", "no", "yes", "clients"),
	AppendFilename:             strP("appendfilename", "appendonly.aof").immutable().canon(canonName("appendfilename", "filename")),
	AppendDirname:              strP("appenddirname", "appendonlydir").immutable().canon(canonName("appenddirname", "dirname")),
	NoAppendfsyncOnRewrite:     boolP("no-appendfsync-on-rewrite", "no"),
	AutoAOFRewritePercentage:   intP("auto-aof-rewrite-percentage", "100", 0, maxInt32),
	AutoAOFRewriteMinSize:      memP("auto-aof-rewrite-min-size", "67108864", 0, maxInt64),
	AOFLoadTruncated:           boolP("aof-load-truncated", "yes"),
	AOFUseRDBPreamble:          boolP("aof-use-rdb-preamble", "yes"),
	AOFTimestampEnabled:        boolP("aof-timestamp-enabled", "no"),
	AOFRewriteIncrementalFsync: boolP("aof-rewrite-incremental-fsync", "yes"),
	RDBSaveIncrementalFsync:    boolP("rdb-save-incremental-fsync", "yes"),

	ReplicaOf:                    strP("replicaof", "").alias("slaveof").multi().immutable().canon(canonReplicaOf).validate(checkReplicaOf),
	MasterAuth:                   strP("masterauth", "").sensitive(),
	MasterUser:                   strP("masteruser", "").sensitive(),
	ReplicaServeStaleData:        boolP("replica-serve-stale-data", "yes").alias("slave-serve-stale-data"),
	ReplicaReadOnly:              boolP("replica-read-only", "yes").alias("slave-read-only"),
	ReplicaIgnoreMaxmemory:       boolP("replica-ignore-maxmemory", "yes").alias("slave-ignore-maxmemory"),
	ReplDisklessSync:             boolP("repl-diskless-sync", "yes"),
	ReplDisklessSyncDelay:        intP("repl-diskless-sync-delay", "5", 0, maxInt32),
	ReplBacklogSize:              memP("repl-backlog-size", "1048576", 1, maxInt64).clamp(16384, maxInt64),
	ReplBacklogTTL:               intP("repl-backlog-ttl", "3600", 0, maxInt64),
	ReplTimeout:                  intP("repl-timeout", "60", 1, maxInt32),
	ReplPingReplicaPeriod:        intP("repl-ping-replica-period", "10", 1, maxInt32).alias("repl-ping-slave-period"),
	MinReplicasToWrite:           intP("min-replicas-to-write", "0", 0, maxInt32).alias("min-slaves-to-write"),
	MinReplicasMaxLag:            intP("min-replicas-max-lag", "10", 0, maxInt32).alias("min-slaves-max-lag"),
	ReplicaPriority:              intP("replica-priority", "100", 0, maxInt32).alias("slave-priority"),
	ReplDisklessLoad:             enumP("repl-diskless-load", "disabled", "disabled", "on-empty-db", "swapdb"),
	ReplDisklessSyncMaxReplicas:  intP("repl-diskless-sync-max-replicas", "0", 0, maxInt32),
	ReplDisableTCPNodelay:        boolP("repl-disable-tcp-nodelay", "no"),
	ReplicaLazyFlush:             boolP("replica-lazy-flush", "no").alias("slave-lazy-flush"),
	ReplicaAnnounced:             boolP("replica-announced", "yes"),
	ReplicaIgnoreDiskWriteErrors: boolP("replica-ignore-disk-write-errors", "no"),
	ClusterEnabled:               boolP("cluster-enabled", "no").immutable(),
	// The cluster layer (internal/cluster) reads these; the announce
	// parameters take effect at the next message it sends.
	ClusterConfigFile:               strP("cluster-config-file", "nodes.conf").immutable(),
	ClusterNodeTimeout:              intP("cluster-node-timeout", "15000", 0, maxInt64),
	ClusterPort:                     intP("cluster-port", "0", 0, 65535).immutable(),
	ClusterAnnounceIP:               strP("cluster-announce-ip", ""),
	ClusterAnnouncePort:             intP("cluster-announce-port", "0", 0, 65535),
	ClusterAnnounceBusPort:          intP("cluster-announce-bus-port", "0", 0, 65535),
	ClusterAnnounceTLSPort:          intP("cluster-announce-tls-port", "0", 0, 65535),
	ClusterAnnounceHostname:         strP("cluster-announce-hostname", "").validate(checkHostname),
	ClusterRequireFullCoverage:      boolP("cluster-require-full-coverage", "yes"),
	ClusterAllowReadsWhenDown:       boolP("cluster-allow-reads-when-down", "no"),
	ClusterAllowPubsubshardWhenDown: boolP("cluster-allow-pubsubshard-when-down", "yes"),
	ClusterReplicaValidityFactor:    intP("cluster-replica-validity-factor", "10", 0, maxInt32).alias("cluster-slave-validity-factor"),
	ClusterMigrationBarrier:         intP("cluster-migration-barrier", "1", 0, maxInt32),
	ClusterAllowReplicaMigration:    boolP("cluster-allow-replica-migration", "yes"),
	ClusterReplicaNoFailover:        boolP("cluster-replica-no-failover", "no").alias("cluster-slave-no-failover"),
	ClusterPreferredEndpointType:    enumP("cluster-preferred-endpoint-type", "ip", "ip", "hostname", "unknown-endpoint"),
	ClusterLinkSendbufLimit:         memP("cluster-link-sendbuf-limit", "0", 0, maxInt64).unsigned(),
	ReplicaAnnounceIP:               strP("replica-announce-ip", "").alias("slave-announce-ip"),
	ReplicaAnnouncePort:             intP("replica-announce-port", "0", 0, 65535).alias("slave-announce-port"),
	TLSPort:                         intP("tls-port", "0", 0, 65535).immutable(),

	MaxMemorySamples:          intP("maxmemory-samples", "5", 1, maxInt32),
	MaxMemoryEvictionTenacity: intP("maxmemory-eviction-tenacity", "10", 0, 100),
	MaxMemoryClients:          memP("maxmemory-clients", "0", 0, maxInt64).percent(),
	ActiveExpireEffort:        intP("active-expire-effort", "1", 1, 10),
	LazyfreeLazyEviction:      boolP("lazyfree-lazy-eviction", "no"),
	LazyfreeLazyExpire:        boolP("lazyfree-lazy-expire", "no"),
	LazyfreeLazyServerDel:     boolP("lazyfree-lazy-server-del", "no"),
	LazyfreeLazyUserDel:       boolP("lazyfree-lazy-user-del", "no"),
	LazyfreeLazyUserFlush:     boolP("lazyfree-lazy-user-flush", "no"),
	ActiveRehashing:           boolP("activerehashing", "yes"),
	ActiveDefrag:              boolP("activedefrag", "no").validate(checkActiveDefrag),
	LFULogFactor:              intP("lfu-log-factor", "10", 0, maxInt32),
	LFUDecayTime:              intP("lfu-decay-time", "1", 0, maxInt32),
	JemallocBgThread:          boolP("jemalloc-bg-thread", "yes"),

	ListCompressDepth:    intP("list-compress-depth", "0", 0, maxInt32),
	StreamNodeMaxBytes:   memP("stream-node-max-bytes", "4096", 0, maxInt64),
	StreamNodeMaxEntries: intP("stream-node-max-entries", "100", 0, maxInt64),

	NotifyKeyspaceEvents:           strP("notify-keyspace-events", "").canon(canonKeyspaceEvents),
	ClientOutputBufferLimit:        strP("client-output-buffer-limit", defaultOutputBufferLimits).multi().canon(canonOutputBufferLimit),
	DynamicHz:                      boolP("dynamic-hz", "yes"),
	TrackingTableMaxKeys:           intP("tracking-table-max-keys", "1000000", 0, maxInt64),
	ACLLogMaxLen:                   intP("acllog-max-len", "128", 0, maxInt64),
	ACLFile:                        strP("aclfile", "").immutable(),
	ACLPubsubDefault:               enumP("acl-pubsub-default", "resetchannels", "allchannels", "resetchannels"),
	LatencyTracking:                boolP("latency-tracking", "yes"),
	LatencyTrackingInfoPercentiles: strP("latency-tracking-info-percentiles", "50 99 99.9").multi().canon(canonPercentiles),
	PropagationErrorBehavior:       enumP("propagation-error-behavior", "ignore", "ignore", "panic", "panic-on-replicas"),
	// Abacus's own: every script is all-or-nothing (docs/scripting.md).
	ScriptTransactional: boolP("script-transactional", "no"),
	// Abacus's own: serve TCP clients from one epoll event loop instead of
	// a goroutine each (internal/conn/loop_linux.go).
	EventLoop: boolP("io-event-loop", "yes").immutable(),
	// Abacus's own: how long (µs) an event loop polls for more events
	// before it sleeps.
	EventLoopSpin: intP("io-event-loop-spin-us", "0", 0, 1000000),
	// TLS, as Redis 7.0 names them; the files are read again when one of
	// them changes (CONFIG SET), for connections made after.
	TLSCertFile:            strP("tls-cert-file", ""),
	TLSKeyFile:             strP("tls-key-file", ""),
	TLSKeyFilePass:         strP("tls-key-file-pass", "").sensitive(),
	TLSClientCertFile:      strP("tls-client-cert-file", ""),
	TLSClientKeyFile:       strP("tls-client-key-file", ""),
	TLSClientKeyFilePass:   strP("tls-client-key-file-pass", "").sensitive(),
	TLSDHParamsFile:        strP("tls-dh-params-file", ""),
	TLSCACertFile:          strP("tls-ca-cert-file", ""),
	TLSCACertDir:           strP("tls-ca-cert-dir", ""),
	TLSAuthClients:         enumP("tls-auth-clients", "yes", "no", "yes", "optional"),
	TLSProtocols:           strP("tls-protocols", ""),
	TLSCiphers:             strP("tls-ciphers", ""),
	TLSCiphersuites:        strP("tls-ciphersuites", ""),
	TLSPreferServerCiphers: boolP("tls-prefer-server-ciphers", "no"),
	TLSSessionCaching:      boolP("tls-session-caching", "yes"),
	TLSSessionCacheSize:    intP("tls-session-cache-size", "20480", 0, maxInt32),
	TLSSessionCacheTimeout: intP("tls-session-cache-timeout", "300", 0, maxInt32),
	TLSReplication:         boolP("tls-replication", "no"),
	TLSCluster:             boolP("tls-cluster", "no"),
	// Abacus's own: the HTTP endpoint for /metrics, the health checks and
	// the dashboard (internal/httpapi); port 0 keeps it off.
	HTTPPort:            intP("http-port", "0", 0, 65535).immutable(),
	HTTPBind:            strP("http-bind", "127.0.0.1").immutable(),
	HTTPRequirePass:     strP("http-requirepass", "").sensitive(),
	HTTPExportSeries:    strP("http-export-series", ""),
	HTTPExportSeriesMax: intP("http-export-series-max", "10000", 0, 1000000),
	HTTPMetricsPublic:   boolP("http-metrics-public", "no"),
}

var byName = map[string]*Param{}

func init() {
	if len(table) != int(numParams) {
		panic("config: table and IDs disagree")
	}
	for i, p := range table {
		if p == nil {
			panic("config: missing table entry")
		}
		p.id = i
		for _, n := range []string{p.Name, p.Alias} {
			if n == "" {
				continue
			}
			if _, dup := byName[n]; dup {
				panic("config: duplicate name " + n)
			}
			byName[n] = p
		}
	}
	c := New()
	defaults = make([]string, len(table))
	for _, p := range table {
		defaults[p.id] = c.Get(p)
	}
}

// defaults holds each parameter's default in its canonical form (what
// CONFIG GET shows on a fresh server).
var defaults []string

// DefaultValue returns the canonical form of a parameter's default.
func DefaultValue(p *Param) string { return defaults[p.id] }

// Constructors and modifiers keep the table above one line per parameter.

func boolP(name, def string) *Param { return &Param{Name: name, Kind: Bool, Default: def} }
func strP(name, def string) *Param  { return &Param{Name: name, Kind: String, Default: def} }

func intP(name, def string, min, max int64) *Param {
	return &Param{Name: name, Kind: Int, Default: def, Min: min, Max: max}
}

func memP(name, def string, min, max int64) *Param {
	return &Param{Name: name, Kind: Memory, Default: def, Min: min, Max: max}
}

func enumP(name, def string, vals ...string) *Param {
	return &Param{Name: name, Kind: Enum, Default: def, Enum: vals}
}

func (p *Param) alias(a string) *Param { p.Alias = a; return p }
func (p *Param) immutable() *Param     { p.Immutable = true; return p }
func (p *Param) protected() *Param     { p.Protected = true; return p }
func (p *Param) multi() *Param         { p.Multi = true; return p }
func (p *Param) sensitive() *Param     { p.Sensitive = true; return p }
func (p *Param) unsigned() *Param      { p.Unsigned = true; return p }
func (p *Param) percent() *Param       { p.Percent = true; return p }
func (p *Param) octal() *Param         { p.Octal = true; return p }
func (p *Param) clamp(lo, hi int64) *Param {
	p.clampLo, p.clampHi = lo, hi
	return p
}

func (p *Param) canon(f func(cur string, args []string) (string, error)) *Param {
	p.Canon = f
	return p
}

func (p *Param) validate(f func(v string) error) *Param {
	p.Validate = f
	return p
}

func (p *Param) apply(f func(v int64) error) *Param {
	p.Apply = f
	return p
}
