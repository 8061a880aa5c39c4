package commands_test

import (
	"encoding/binary"
	"hash/crc64"
	"sort"
	"strings"
	"testing"
)

// Differential tests of FUNCTION and FCALL against redis-server. Redis
// lists libraries (and the functions of a library) in its hash order, so
// FUNCTION LIST is compared for one library at a time.

const libMain = `#!lua name=mylib
local function incr_by(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end
redis.register_function('incrby_fn', incr_by)
redis.register_function{function_name='getter', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads a key'}
`

func TestFunctionsDiffLoadAndCall(t *testing.T) {
	sd := newScriptDiff(t)
	sd.list = true
	for _, l := range [][]string{
		{"FUNCTION", "LOAD", libMain},
		{"FUNCTION", "LIST"},
		{"FUNCTION", "LIST", "WITHCODE"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "my*"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "MYLIB"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"},
		{"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "mylib"},
		{"FUNCTION", "LIST", "LIBRARYNAME"},
		{"FUNCTION", "LIST", "foo"},
		{"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"},
		{"FUNCTION", "STATS"},
		{"FUNCTION", "STATS", "x"},
		{"FCALL", "incrby_fn", "1", "counter", "5"},
		{"FCALL", "incrby_fn", "1", "counter", "5"},
		{"FCALL", "INCRBY_FN", "1", "counter", "1"},
		{"FCALL", "getter", "1", "counter"},
		{"FCALL_RO", "getter", "1", "counter"},
		{"FCALL_RO", "incrby_fn", "1", "counter", "5"},
		{"FCALL", "incrby_fn", "1", "counter", "notanumber"},
		{"FCALL", "nosuch", "0"},
		{"FCALL", "nosuch", "x"},
		{"FCALL", "incrby_fn", "x"},
		{"FCALL", "incrby_fn", "-1"},
		{"FCALL", "incrby_fn", "3", "a"},
		{"FCALL", "incrby_fn"},
		{"FUNCTION", "LOAD", libMain},
		{"FUNCTION", "LOAD", "REPLACE", libMain},
		{"FUNCTION", "LOAD", "replace", "replace", libMain},
		{"FUNCTION", "LOAD", "FOO", libMain},
		{"FUNCTION", "LOAD", "REPLACE"},
		{"FUNCTION", "LOAD"},
		{"FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('incrby_fn', function() return 1 end)"},
		{"FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('GETTER', function() return 1 end)"},
		{"FUNCTION", "DELETE", "nosuchlib"},
		{"FUNCTION", "DELETE", "MYLIB"},
		{"FUNCTION", "DELETE", "mylib"},
		{"FCALL", "getter", "1", "counter"},
		{"FUNCTION", "LIST"},
		{"FUNCTION", "STATS"},
		{"FUNCTION", "FLUSH", "foo"},
		{"FUNCTION", "FLUSH", "sync", "x"},
		{"FUNCTION", "FLUSH", "SYNC"},
		{"FUNCTION", "FLUSH", "ASYNC"},
		{"FUNCTION", "FLUSH"},
		{"FUNCTION", "KILL"},
		{"FUNCTION", "HELP"},
		{"FUNCTION", "NOSUCH"},
		{"FUNCTION"},
	} {
		sd.do(l...)
	}
}

// Library code and registration errors.
func TestFunctionsDiffLoadErrors(t *testing.T) {
	sd := newScriptDiff(t)
	for _, code := range []string{
		"return 1",
		"#!lua",
		"#!lua\nreturn 1",
		"#!lua name=lib1\nreturn 1",
		"#!lua name=lib-x\nredis.register_function('f', function() end)",
		"#!lua name=\nredis.register_function('f', function() end)",
		"#!lua name=lib2 foo=bar\nredis.register_function('g', function() end)",
		"#!lua name=a name=b\nredis.register_function('g', function() end)",
		"#!lua NAME=lib2\nredis.register_function('g2', function() end)",
		"#!js name=lib2\nredis.register_function('g', function() end)",
		"#!LUA name=libupper\nredis.register_function('upperfn', function() return 'up' end)",
		"#!lua name=lib2\nredis.register_function('g-x', function() end)",
		"#!lua name=lib2\nredis.register_function('', function() end)",
		"#!lua name=lib3\nredis.call('ping')",
		"#!lua name=lib3\nx = 1",
		"#!lua name=lib3\nlocal x = y",
		"#!lua name=lib3\nerror('boom')",
		"#!lua name=lib3\nreturn +",
		"#!lua name=lib3\nredis.register_function('h', 1)",
		"#!lua name=lib3\nredis.register_function(1, function() end)",
		"#!lua name=lib3\nredis.register_function({}, function() end)",
		"#!lua name=lib3\nredis.register_function()",
		"#!lua name=lib3\nredis.register_function('a', function() end, 3)",
		"#!lua name=lib3\nredis.register_function('h')",
		"#!lua name=lib3\nredis.register_function('dup', function() end) redis.register_function('dup', function() end)",
		"#!lua name=lib3\nredis.register_function('dup', function() end) redis.register_function('DUP', function() end)",
		"#!lua name=lib3\nredis.register_function{function_name='h', callback=function() end, flags={'bad'}}",
		"#!lua name=lib3\nredis.register_function{function_name='h', callback=function() end, flags='no-writes'}",
		"#!lua name=lib3\nredis.register_function{function_name='h', callback=function() end, flags={1}}",
		"#!lua name=lib3\nredis.register_function{function_name='h', callback=function() end, foo=1}",
		"#!lua name=lib3\nredis.register_function{callback=function() end}",
		"#!lua name=lib3\nredis.register_function{function_name='h'}",
		"#!lua name=lib3\nredis.register_function{function_name=1, callback=function() return 'numbered' end}",
		"#!lua name=lib4\nredis.register_function{function_name='h4', callback=function() end, description=1}",
		"#!lua name=lib5\nredis.register_function{function_name='h5', callback=1}",
		"#!lua name=lib6\nredis.register_function('single')",
		"#!lua name=lib6\nredis.register_function{function_name='fl', callback=function() end, flags={'NO-WRITES', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}",
		"#!lua name=lib7\nredis.log(redis.LOG_NOTICE, 'loading lib7') redis.register_function('lib7f', function() return redis.REDIS_VERSION_NUM > 0 end)",
		"#!lua name=lib8\nredis.setresp(3)",
		"#!lua name=lib8\nlocal t = redis.LOG_WARNING + 1 redis.register_function('lib8f', function() return t end)",
		"#!lua name=lib9\nredis.register_function('f9', function() return 9 end)\n",
	} {
		sd.do("FUNCTION", "LOAD", code)
	}
	for _, name := range []string{"upperfn", "numbered", "1", "fl", "lib7f", "lib8f", "f9"} {
		sd.do("FCALL", name, "0")
	}
	for _, lib := range []string{"libupper", "lib3", "lib6", "lib8"} {
		sd.do("FUNCTION", "LIST", "LIBRARYNAME", lib)
	}
}

// What functions see: arguments, globals, errors with the function's
// name, the read-only rules.
func TestFunctionsDiffRuntime(t *testing.T) {
	sd := newScriptDiff(t)
	lib := `#!lua name=rt
local function probe(keys, args)
  local out = {}
  for _, g in ipairs({'KEYS','ARGV','redis','string','cjson','loadstring','_G','math','pcall','error','gcinfo','bit','struct','cmsgpack'}) do
    out[#out+1] = g .. '=' .. tostring(pcall(function() local x = _G[g] end))
  end
  out[#out+1] = tostring(redis.register_function)
  return out
end
redis.register_function('probe', probe)
redis.register_function('args', function(keys, args) return {#keys, #args, keys, args} end)
redis.register_function('err', function() error('bad') end)
redis.register_function('err2', function()
  return redis.call('nocmd')
end)
redis.register_function('setg', function() x = 1 end)
redis.register_function('writes', function(keys) return redis.call('SET', keys[1], 'v') end)
redis.register_function{function_name='ro_writes', callback=function(keys) return redis.call('SET', keys[1], 'v') end, flags={'no-writes'}}
redis.register_function('resp3', function() redis.setresp(3) return redis.call('HGETALL', 'h') end)
redis.register_function('seltest', function() redis.call('SELECT', 2) return redis.call('SET', 'indb2', 'x') end)
redis.register_function('ret', function(keys, args) return cjson.decode(args[1]) end)
`
	sd.do("FUNCTION", "LOAD", lib)
	sd.Do("HSET", "h", "f", "v")
	for _, l := range [][]string{
		{"FCALL", "probe", "0"},
		{"FCALL", "args", "2", "a", "b", "c", "d"},
		{"FCALL", "args", "0"},
		{"FCALL", "err", "0"},
		{"FCALL", "err2", "0"},
		{"FCALL", "setg", "0"},
		{"FCALL", "writes", "1", "k"},
		{"FCALL_RO", "writes", "1", "k"},
		{"FCALL", "ro_writes", "1", "k"},
		{"FCALL_RO", "ro_writes", "1", "k"},
		{"FCALL", "resp3", "0"},
		{"FCALL", "seltest", "0"},
		{"SELECT", "0"},
		{"EXISTS", "indb2"},
		{"SELECT", "2"},
		{"EXISTS", "indb2"},
		{"FCALL", "ret", "0", "[1,[2,3],\"x\"]"},
	} {
		sd.do(l...)
		sd.do3(l...)
	}
}

// DUMP payloads move both ways between Abacus and redis-server.
func TestFunctionsDiffDumpRestore(t *testing.T) {
	sd := newScriptDiff(t)
	lib2 := "#!lua name=second\nredis.register_function('second_fn', function() return 'two' end)"
	sd.do("FUNCTION", "LOAD", libMain)
	sd.do("FUNCTION", "LOAD", lib2)
	sd.list = true
	rdump := fnBulk(t, sd.R.Do("FUNCTION", "DUMP"))
	adump := fnBulk(t, sd.A.Do("FUNCTION", "DUMP"))
	if !strings.HasSuffix(adump[:len(adump)-8], "\x0a\x00") {
		t.Fatalf("Abacus's payload does not end with RDB version 10: %q", adump)
	}
	for _, payload := range []string{rdump, adump} {
		// With both libraries present Redis names whichever its hash
		// order meets first: make the collision unique.
		sd.do("FUNCTION", "DELETE", "mylib")
		sd.do("FUNCTION", "RESTORE", payload)
		sd.do("FUNCTION", "RESTORE", payload, "APPEND")
		sd.do("FUNCTION", "RESTORE", payload, "REPLACE")
		sd.do("FCALL", "second_fn", "0")
		sd.do("FUNCTION", "FLUSH")
		sd.do("FCALL", "second_fn", "0")
		sd.do("FUNCTION", "RESTORE", payload)
		sd.do("FCALL", "second_fn", "0")
		sd.do("FUNCTION", "LIST", "LIBRARYNAME", "second")
		sd.do("FUNCTION", "LIST", "LIBRARYNAME", "mylib")
		sd.do("FUNCTION", "LOAD", "#!lua name=clash\nredis.register_function('second_fn', function() end)")
		sd.do("FUNCTION", "DELETE", "second")
		sd.do("FUNCTION", "LOAD", "#!lua name=clash\nredis.register_function('second_fn', function() return 'clash' end)")
		sd.do("FUNCTION", "RESTORE", payload, "REPLACE")
		sd.do("FUNCTION", "DELETE", "mylib")
		sd.do("FUNCTION", "RESTORE", payload, "FLUSH")
		sd.do("FCALL", "second_fn", "0")
		sd.do("FUNCTION", "STATS")
	}
	// Both servers hold the same libraries: the payloads round-trip.
	sd.do("FUNCTION", "FLUSH")
	sd.do("FUNCTION", "RESTORE", rdump)
	again := fnBulk(t, sd.A.Do("FUNCTION", "DUMP"))
	if again != adump {
		t.Errorf("Abacus's dump after restoring redis-server's differs:\n%q\n%q", again, adump)
	}
	for _, l := range [][]string{
		{"FUNCTION", "RESTORE", "abc"},
		{"FUNCTION", "RESTORE", ""},
		{"FUNCTION", "RESTORE", rdump[:len(rdump)-1] + "x"},
		{"FUNCTION", "RESTORE", "\x0b\x00" + crcTail("\x0b\x00")},
		{"FUNCTION", "RESTORE", "\x01" + "\x0a\x00" + crcTail("\x01\x0a\x00")},
		{"FUNCTION", "RESTORE", "\xf6\x01a" + "\x0a\x00" + crcTail("\xf6\x01a\x0a\x00")},
		{"FUNCTION", "RESTORE", "\xf5\x05#!lua" + "\x0a\x00" + crcTail("\xf5\x05#!lua\x0a\x00")},
		{"FUNCTION", "RESTORE", rdump, "BADPOLICY"},
		{"FUNCTION", "RESTORE", rdump, "FLUSH", "extra"},
		{"FUNCTION", "DUMP", "extra"},
	} {
		sd.do(l...)
	}
	// An empty payload (no libraries) is the same on both.
	sd.do("FUNCTION", "FLUSH")
	sd.do("FUNCTION", "DUMP")
}

// fnBulk returns the body of a raw bulk-string reply.
func fnBulk(t *testing.T, raw string) string {
	t.Helper()
	if !strings.HasPrefix(raw, "$") {
		t.Fatalf("not a bulk string: %q", raw)
	}
	i := strings.Index(raw, "\r\n")
	return raw[i+2 : len(raw)-2]
}

// crcTail is the 8-byte CRC-64/Jones footer of a DUMP payload p.
func crcTail(p string) string {
	crc := ^crc64.Update(^uint64(0), crc64.MakeTable(0x95ac9329ac4bc9b5), []byte(p))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], crc)
	return string(b[:])
}

// sortFunctionEntries puts the function entries of a one-library FUNCTION
// LIST reply in name order: Redis lists them in its hash order.
func sortFunctionEntries(r string) string {
	const entry = "*6\r\n$4\r\nname\r\n"
	first := strings.Index(r, entry)
	if first < 0 {
		return r
	}
	end := strings.Index(r, "$12\r\nlibrary_code\r\n")
	if end < 0 {
		end = len(r)
	}
	parts := strings.Split(r[first:end], entry)[1:]
	sort.Strings(parts)
	return r[:first] + entry + strings.Join(parts, entry) + r[end:]
}

// Library code that never ends is stopped after 500 ms, as in Redis.
func TestFunctionsDiffLoadTimeout(t *testing.T) {
	sd := newScriptDiff(t)
	sd.do("FUNCTION", "LOAD", "#!lua name=loopy\nlocal i = 0 while true do i = i + 1 end")
	sd.do("FUNCTION", "LIST")
	sd.do("FUNCTION", "LOAD", "#!lua name=after\nredis.register_function('after', function() return 1 end)")
	sd.do("FCALL", "after", "0")
}
