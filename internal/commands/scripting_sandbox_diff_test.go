package commands_test

import "testing"

// The Lua sandbox against redis-server 7.0's, case by case: no way out
// to the operating system or the file system, no loading of precompiled
// chunks, no reaching or replacing the environment, protected globals and
// libraries. string.dump is the one known difference: Redis's returns
// bytecode (which its loadstring then refuses), Abacus's Lua cannot make
// bytecode and raises an error; loading bytecode is refused by both.
var sandboxCases = []luaCase{
	// The operating system, files and modules are absent.
	{body: "return type(os)"},
	{body: "return os.execute('true')"},
	{body: "return os.getenv('HOME')"},
	{body: "return io.open('/etc/passwd')"},
	{body: "return type(io)"},
	{body: "return loadfile('/etc/passwd')"},
	{body: "return dofile('/etc/passwd')"},
	{body: "return require('os')"},
	{body: "return type(package)"},
	{body: "return type(module)"},
	{body: "return type(debug)"},
	{body: "return type(newproxy)"},
	{body: "return type(print)"},
	{body: "return rawget(_G, 'os')"},
	{body: "return rawget(_G, 'io')"},
	// The environment can be neither read nor replaced.
	{body: "return type(getfenv)"},
	{body: "return type(setfenv)"},
	{body: "return getfenv(0)"},
	{body: "setfenv(1, {})"},
	{body: "local f = function() end return setfenv(f, {})"},
	// Precompiled chunks are refused.
	{body: "local f, e = loadstring(string.char(27) .. 'LuaQ') return tostring(e)"},
	{body: "return {pcall(loadstring, string.char(27) .. 'Lua')}"},
	{body: "return type(string.dump)"},
	// Globals and libraries are read-only, whatever the path.
	{body: "x = 1"},
	{body: "_G.x = 1"},
	{body: "rawset(_G, 'x', 1)"},
	{body: "setmetatable(_G, nil)"},
	{body: "local mt = getmetatable(_G) mt.__index = nil return 1"},
	{body: "redis = nil"},
	{body: "redis.call = function() return 1 end"},
	{body: "cjson.encode = nil"},
	{body: "bit.band = nil"},
	{body: "string.len = nil"},
	{body: "struct.pack = nil"},
	{body: "cmsgpack.pack = nil"},
	{body: "math.random = nil"},
	{body: "getmetatable('').__index = {}"},
	{body: "__redis__err__handler = nil"},
	{body: "return type(_G.__index)"},
	{body: "return type(getmetatable(_G))"},
	// What stays: loadstring of source, coroutines, the GC counters.
	{body: "local f = loadstring('return 1') return f()"},
	{body: "local co = coroutine.create(function() return 1 end) return {coroutine.resume(co)}"},
	{body: "return tostring(collectgarbage('count') > 0)"},
	{body: "return _VERSION"},
}

func TestScriptingDiffSandbox(t *testing.T) {
	sd := newScriptDiff(t)
	sd.runCorpus(sandboxCases, scriptSetup...)
}
