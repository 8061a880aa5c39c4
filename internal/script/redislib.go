package script

import (
	"crypto/sha1"
	"encoding/hex"

	lua "github.com/yuin/gopher-lua"
)

// The redis table (also reachable as server, Valkey's name).

// Replication flags of redis.set_repl (PROPAGATE_AOF, PROPAGATE_REPL).
const (
	replNone = 0
	replAOF  = 1
	replRepl = 2
	replAll  = replAOF | replRepl
)

func (vm *VM) openRedis() *lua.LTable {
	L := vm.L
	t := L.NewTable()
	vm.setFuncs(t, map[string]lua.LGFunction{
		"call":               vm.redisCall,
		"pcall":              vm.redisPcall,
		"error_reply":        redisErrorReply,
		"status_reply":       redisStatusReply,
		"sha1hex":            redisSha1hex,
		"log":                vm.redisLog,
		"setresp":            vm.redisSetresp,
		"set_repl":           redisSetRepl,
		"replicate_commands": redisReplicateCommands,
		"breakpoint":         redisBreakpoint,
		"debug":              redisDebug,
		"acl_check_cmd":      vm.redisACLCheckCmd,
	})
	setLogConsts(t)
	for name, v := range map[string]int{
		"REPL_NONE": replNone, "REPL_AOF": replAOF, "REPL_SLAVE": replRepl,
		"REPL_REPLICA": replRepl, "REPL_ALL": replAll,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	return t
}

func setLogConsts(t *lua.LTable) {
	t.RawSetString("LOG_DEBUG", lua.LNumber(LogDebug))
	t.RawSetString("LOG_VERBOSE", lua.LNumber(LogVerbose))
	t.RawSetString("LOG_NOTICE", lua.LNumber(LogNotice))
	t.RawSetString("LOG_WARNING", lua.LNumber(LogWarning))
	t.RawSetString("REDIS_VERSION", lua.LString(Version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(VersionNum))
}

// raiseErr raises Redis's error table for msg ("-CODE text" or a bare
// text that gets ERR).
func raiseErr(L *lua.LState, msg string) {
	L.Error(errorTable(L, msg, false), 0)
}

func (vm *VM) redisCall(L *lua.LState) int  { return vm.redisCommand(L, true) }
func (vm *VM) redisPcall(L *lua.LState) int { return vm.redisCommand(L, false) }

// redisCommand is redis.call (raise) and redis.pcall: run a command and
// return its reply as a Lua value; errors are raised by call and
// returned as error tables by pcall.
func (vm *VM) redisCommand(L *lua.LState, raise bool) int {
	run := vm.run
	if run == nil || run.host == nil {
		raiseErr(L, "redis.call/pcall can only be called inside a script invocation")
	}
	// A killed script runs no more commands (it could write).
	vm.raiseIfKilled(L)
	args, errMsg := vm.commandArgs(L)
	if errMsg != "" {
		t := errorTable(L, errMsg, false)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	reply := run.host.Call(args, run.resp)
	v, isErr, _ := vm.replyToLua(reply)
	if isErr && raise {
		L.Error(v, 0)
	}
	L.Push(v)
	return 1
}

// commandArgs converts redis.call's arguments to a command line in the
// VM's reused buffers: strings as they are, numbers as "%.17g".
func (vm *VM) commandArgs(L *lua.LState) ([][]byte, string) {
	argc := L.GetTop()
	if argc == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf := vm.argBuf[:0]
	offs := vm.offs[:0]
	for i := 1; i <= argc; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendNum17(buf, float64(v))
		default:
			vm.argBuf, vm.offs = buf, offs
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		offs = append(offs, len(buf))
	}
	args := vm.args[:0]
	start := 0
	for _, end := range offs {
		args = append(args, buf[start:end:end])
		start = end
	}
	vm.argBuf, vm.offs, vm.args = buf, offs, args
	return args, ""
}

// redis.error_reply(msg): an error table, "-" added when missing.
func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments", false))
		return 1
	}
	msg := string(s)
	if len(msg) == 0 || msg[0] != '-' {
		msg = "-" + msg
	}
	L.Push(errorTable(L, msg, false))
	return 1
}

// redis.status_reply(msg): a status table.
func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments", false))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func redisSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseErr(L, "wrong number of arguments")
	}
	s, _ := tostr(L.Get(1))
	sum := sha1.Sum([]byte(s))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// redisLog is redis.log(level, message...).
func (vm *VM) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		raiseErr(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := luaToNumber(L.Get(1))
	if !ok {
		raiseErr(L, "First argument must be a number (log level).")
	}
	level := int(toInt32(lv))
	if level < LogDebug || level > LogWarning {
		raiseErr(L, "Invalid debug level.")
	}
	var msg []byte
	for i := 2; i <= argc; i++ {
		s, ok := tostr(L.Get(i))
		if !ok {
			continue
		}
		if i != 2 {
			msg = append(msg, ' ')
		}
		msg = append(msg, s...)
	}
	vm.opts.Log(level, string(msg))
	return 0
}

// luaToNumber is lua_isnumber/lua_tonumber: numbers and numeric strings.
func luaToNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return str2number(string(x))
	}
	return 0, false
}

func (vm *VM) redisSetresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseErr(L, "redis.setresp() requires one argument.")
	}
	n, _ := luaToNumber(L.Get(1))
	r := toInt32(n)
	if r != 2 && r != 3 {
		raiseErr(L, "RESP version must be 2 or 3.")
	}
	if vm.run != nil {
		vm.run.resp = int(r)
	}
	return 0
}

// redisSetRepl checks its flags; Abacus has no replication or AOF yet,
// so there is nothing to propagate differently.
func redisSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseErr(L, "redis.set_repl() requires two arguments.")
	}
	n, _ := luaToNumber(L.Get(1))
	if int(toInt32(n))&^replAll != 0 {
		raiseErr(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// Since Redis 7 scripts always replicate their effects.
func redisReplicateCommands(L *lua.LState) int {
	L.Push(lua.LTrue)
	return 1
}

// There is no script debugger: breakpoint says no, debug does nothing.
func redisBreakpoint(L *lua.LState) int {
	L.Push(lua.LFalse)
	return 1
}

func redisDebug(L *lua.LState) int { return 0 }

// redisACLCheckCmd answers whether the user may run the command: without
// ACLs, any existing command.
func (vm *VM) redisACLCheckCmd(L *lua.LState) int {
	run := vm.run
	if run == nil || run.host == nil {
		raiseErr(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	args, errMsg := vm.commandArgs(L)
	if errMsg != "" {
		raiseErr(L, errMsg)
	}
	if !run.host.CommandKnown(args) {
		raiseErr(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue)
	return 1
}
