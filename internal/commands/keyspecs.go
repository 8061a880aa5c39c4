package commands

import "github.com/abacusdb/abacus/internal/engine"

// keySpecs are the key specs of the commands whose keys Redis 7.0
// describes with more than First/Last/Step can say: keys in several roles
// (a destination written, sources read), key counts (numkeys), keyword
// searches, notes and variable flags. COMMAND INFO and GETKEYSANDFLAGS
// show them; TestCommandInfoMatchesRedis compares every command's with
// redis-server's. The other commands' specs come from their positions
// (engine.Command.KeySpecs).
var keySpecs = map[string][]engine.KeySpec{
	"bitfield": {
		{Notes: "This command allows both access and modification of the key", Flags: "RW access update variable_flags", Index: 1, KeyStep: 1},
	},
	"bitop": {
		{Flags: "OW update", Index: 2, KeyStep: 1},
		{Flags: "RO access", Index: 3, LastKey: -1, KeyStep: 1},
	},
	"blmove": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "RW insert", Index: 2, KeyStep: 1},
	},
	"blmpop": {
		{Flags: "RW access delete", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"brpoplpush": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "RW insert", Index: 2, KeyStep: 1},
	},
	"bzmpop": {
		{Flags: "RW access delete", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"copy": {
		{Flags: "RO access", Index: 1, KeyStep: 1},
		{Flags: "OW update", Index: 2, KeyStep: 1},
	},
	"eval": {
		{Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", Flags: "RW access update", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"eval_ro": {
		{Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"evalsha": {
		{Flags: "RW access update", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"evalsha_ro": {
		{Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"fcall": {
		{Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", Flags: "RW access update", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"fcall_ro": {
		{Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"georadius": {
		{Flags: "RO access", Index: 1, KeyStep: 1},
		{Flags: "OW update", Keyword: "STORE", StartFrom: 6, KeyStep: 1},
		{Flags: "OW update", Keyword: "STOREDIST", StartFrom: 6, KeyStep: 1},
	},
	"georadiusbymember": {
		{Flags: "RO access", Index: 1, KeyStep: 1},
		{Flags: "OW update", Keyword: "STORE", StartFrom: 5, KeyStep: 1},
		{Flags: "OW update", Keyword: "STOREDIST", StartFrom: 5, KeyStep: 1},
	},
	"geosearchstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, KeyStep: 1},
	},
	"getex": {
		{Notes: "RW and UPDATE because it changes the TTL", Flags: "RW access update", Index: 1, KeyStep: 1},
	},
	"lmove": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "RW insert", Index: 2, KeyStep: 1},
	},
	"lmpop": {
		{Flags: "RW access delete", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"migrate": {
		{Flags: "RW access delete", Index: 3, KeyStep: 1},
		{Flags: "RW access delete incomplete", Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1},
	},
	"pfcount": {
		{Notes: "RW because it may change the internal representation of the key, and propagate to replicas", Flags: "RW access", Index: 1, LastKey: -1, KeyStep: 1},
	},
	"pfmerge": {
		{Flags: "RW access insert", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, LastKey: -1, KeyStep: 1},
	},
	"rename": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "OW update", Index: 2, KeyStep: 1},
	},
	"renamenx": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "OW insert", Index: 2, KeyStep: 1},
	},
	"rpoplpush": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "RW insert", Index: 2, KeyStep: 1},
	},
	"sdiffstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, LastKey: -1, KeyStep: 1},
	},
	"set": {
		{Notes: "RW and ACCESS due to the optional `GET` argument", Flags: "RW access update variable_flags", Index: 1, KeyStep: 1},
	},
	"sintercard": {
		{Flags: "RO access", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"sinterstore": {
		{Flags: "RW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, LastKey: -1, KeyStep: 1},
	},
	"smove": {
		{Flags: "RW access delete", Index: 1, KeyStep: 1},
		{Flags: "RW insert", Index: 2, KeyStep: 1},
	},
	"sort": {
		{Flags: "RO access", Index: 1, KeyStep: 1},
		{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort", Flags: "RO access", Find: engine.FindUnknown},
		{Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array", Flags: "OW update", Find: engine.FindUnknown},
	},
	"sort_ro": {
		{Flags: "RO access", Index: 1, KeyStep: 1},
		{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort", Flags: "RO access", Find: engine.FindUnknown},
	},
	"sunionstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, LastKey: -1, KeyStep: 1},
	},
	"xadd": {
		{Notes: "UPDATE instead of INSERT because of the optional trimming feature", Flags: "RW update", Index: 1, KeyStep: 1},
	},
	"zdiff": {
		{Flags: "RO access", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zdiffstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zinter": {
		{Flags: "RO access", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zintercard": {
		{Flags: "RO access", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zinterstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zmpop": {
		{Flags: "RW access delete", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zrangestore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, KeyStep: 1},
	},
	"zunion": {
		{Flags: "RO access", Index: 1, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
	"zunionstore": {
		{Flags: "OW update", Index: 1, KeyStep: 1},
		{Flags: "RO access", Index: 2, Find: engine.FindKeynum, KeynumIdx: 0, FirstKey: 1, KeyStep: 1},
	},
}
