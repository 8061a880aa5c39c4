package config

import (
	"math"
	"strings"
)

// The parameters' IDs, in table order. Add a parameter by adding an ID here
// and its entry in table below.
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
	numParams
)

var table = []*Param{
	Bind:                    {Name: "bind", Kind: String, Default: "127.0.0.1 -::1", Immutable: true},
	Port:                    {Name: "port", Kind: Int, Default: "6379", Min: 0, Max: 65535, Immutable: true},
	ProtectedMode:           {Name: "protected-mode", Kind: Bool, Default: "yes"},
	RequirePass:             {Name: "requirepass", Kind: String, Default: ""},
	Databases:               {Name: "databases", Kind: Int, Default: "16", Min: 1, Max: math.MaxInt32, Immutable: true},
	MaxClients:              {Name: "maxclients", Kind: Int, Default: "10000", Min: 1, Max: math.MaxUint32},
	Timeout:                 {Name: "timeout", Kind: Int, Default: "0", Min: 0, Max: math.MaxInt32},
	TCPKeepalive:            {Name: "tcp-keepalive", Kind: Int, Default: "300", Min: 0, Max: math.MaxInt32},
	Dir:                     {Name: "dir", Kind: String, Default: "."},
	DBFilename:              {Name: "dbfilename", Kind: String, Default: "dump.rdb", Check: checkFilename},
	AppendOnly:              {Name: "appendonly", Kind: Bool, Default: "no"},
	AppendFsync:             {Name: "appendfsync", Kind: Enum, Default: "everysec", Enum: []string{"always", "everysec", "no"}},
	LogLevel:                {Name: "loglevel", Kind: Enum, Default: "notice", Enum: []string{"debug", "verbose", "notice", "warning", "nothing"}},
	LogFile:                 {Name: "logfile", Kind: String, Default: "", Immutable: true},
	ProtoMaxBulkLen:         {Name: "proto-max-bulk-len", Kind: Memory, Default: "536870912", Min: 1024 * 1024, Max: math.MaxInt64},
	ClientQueryBufferLimit:  {Name: "client-query-buffer-limit", Kind: Memory, Default: "1073741824", Min: 1024 * 1024, Max: math.MaxInt64},
	Hz:                      {Name: "hz", Kind: Int, Default: "10", Min: 0, Max: math.MaxInt32},
	HashMaxListpackEntries:  {Name: "hash-max-listpack-entries", Alias: "hash-max-ziplist-entries", Kind: Int, Default: "128", Min: 0, Max: math.MaxInt64},
	HashMaxListpackValue:    {Name: "hash-max-listpack-value", Alias: "hash-max-ziplist-value", Kind: Int, Default: "64", Min: 0, Max: math.MaxInt64},
	ZSetMaxListpackEntries:  {Name: "zset-max-listpack-entries", Alias: "zset-max-ziplist-entries", Kind: Int, Default: "128", Min: 0, Max: math.MaxInt64},
	ZSetMaxListpackValue:    {Name: "zset-max-listpack-value", Alias: "zset-max-ziplist-value", Kind: Int, Default: "64", Min: 0, Max: math.MaxInt64},
	SetMaxIntsetEntries:     {Name: "set-max-intset-entries", Kind: Int, Default: "512", Min: 0, Max: math.MaxInt64},
	SetMaxListpackEntries:   {Name: "set-max-listpack-entries", Kind: Int, Default: "128", Min: 0, Max: math.MaxInt64},
	SetMaxListpackValue:     {Name: "set-max-listpack-value", Kind: Int, Default: "64", Min: 0, Max: math.MaxInt64},
	ListMaxListpackSize:     {Name: "list-max-listpack-size", Alias: "list-max-ziplist-size", Kind: Int, Default: "-2", Min: math.MinInt32, Max: math.MaxInt32},
	HllSparseMaxBytes:       {Name: "hll-sparse-max-bytes", Kind: Memory, Default: "3000", Min: 0, Max: math.MaxInt32},
	SlowlogLogSlowerThan:    {Name: "slowlog-log-slower-than", Kind: Int, Default: "10000", Min: -1, Max: math.MaxInt64},
	SlowlogMaxLen:           {Name: "slowlog-max-len", Kind: Int, Default: "128", Min: 0, Max: math.MaxInt64},
	LatencyMonitorThreshold: {Name: "latency-monitor-threshold", Kind: Int, Default: "0", Min: 0, Max: math.MaxInt64},
	MaxMemory:               {Name: "maxmemory", Kind: Memory, Default: "0", Min: 0, Max: math.MaxInt64},
	MaxMemoryPolicy: {Name: "maxmemory-policy", Kind: Enum, Default: "noeviction", Enum: []string{
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}},
	Save:               {Name: "save", Kind: String, Default: "3600 1 300 100 60 10000"},
	BusyReplyThreshold: {Name: "busy-reply-threshold", Alias: "lua-time-limit", Kind: Int, Default: "5000", Min: 0, Max: math.MaxInt64},
}

var byName = map[string]*Param{}

func init() {
	if len(table) != int(numParams) {
		panic("config: table and IDs disagree")
	}
	for i, p := range table {
		p.id = i
		byName[p.Name] = p
		if p.Alias != "" {
			byName[p.Alias] = p
		}
	}
}

func checkFilename(v string) error {
	if strings.ContainsAny(v, "/\\") {
		return verr("dbfilename can't be a path, just a filename")
	}
	return nil
}
