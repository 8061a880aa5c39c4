// Package rdb is Redis's RDB serialization format: the encoding of one value
// as DUMP and RESTORE exchange it, and (file.go) the whole-file layout.
//
// Reading accepts every type and encoding that redis-server has written from
// 2.x (zipmap, ziplist, plain types) through 7.4 (listpack, quicklist 2, set
// listpack, hashes with field TTLs). Writing picks encodings that
// redis-server 7.0 (RDB version 10) loads, except for hashes whose fields
// carry TTLs, which need Redis 7.4's types (version 12). See docs/rdb.md.
//
// Decoding is defensive: every length is checked against the input that is
// left, collections are never preallocated from a declared count beyond what
// the input could hold, and malformed input is an error, never a panic.
package rdb

// Value type codes (the byte before a key in a file, the first byte of a
// DUMP payload).
const (
	TypeString            = 0
	TypeList              = 1
	TypeSet               = 2
	TypeZSet              = 3
	TypeHash              = 4
	TypeZSet2             = 5
	TypeModulePreGA       = 6
	TypeModule2           = 7
	TypeHashZipmap        = 9
	TypeListZiplist       = 10
	TypeSetIntset         = 11
	TypeZSetZiplist       = 12
	TypeHashZiplist       = 13
	TypeListQuicklist     = 14
	TypeStreamListpacks   = 15
	TypeHashListpack      = 16
	TypeZSetListpack      = 17
	TypeListQuicklist2    = 18
	TypeStreamListpacks2  = 19
	TypeSetListpack       = 20
	TypeStreamListpacks3  = 21
	TypeHashMetadataPre   = 22 // 7.4 release candidates: absolute field TTLs
	TypeHashListpackExPre = 23
	TypeHashMetadata      = 24 // 7.4: minimum expiry, then TTLs relative to it
	TypeHashListpackEx    = 25
)

// File opcodes.
const (
	opFunction2    = 245
	opModuleAux    = 247
	opIdle         = 248
	opFreq         = 249
	opAux          = 250
	opResizeDB     = 251
	opExpireTimeMs = 252
	opExpireTime   = 253
	opSelectDB     = 254
	opEOF          = 255
)

// Versions.
const (
	// Version is the RDB version Abacus writes: Redis 7.0's.
	Version = 10
	// VersionFieldTTL is written for payloads holding a hash with field
	// TTLs, whose types only Redis 7.4 (version 12) knows.
	VersionFieldTTL = 12
	// MaxVersion is the newest version Abacus reads.
	MaxVersion = 12
)

// Length encoding: the top two bits of the first byte.
const (
	len6     = 0
	len14    = 1
	len32    = 0x80
	len64    = 0x81
	lenEncV  = 3 // 11xxxxxx: a special encoding follows
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// Quicklist 2 node containers.
const (
	containerPlain  = 1
	containerPacked = 2
)
