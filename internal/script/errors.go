package script

import (
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// handleError is the message handler of a script's protected call, Redis's
// __redis__err__handler: it turns the error into a table {err=...,
// source=..., line=...}, where a string error gets the ERR code and the
// position is that of the function that raised it, or of its caller when
// that function is a Go (C in Redis) one.
func (vm *VM) handleError(L *lua.LState) int {
	e := L.Get(1)
	if vm.killed() {
		e = errorTable(L, msgKilled, false)
	}
	var t *lua.LTable
	switch x := e.(type) {
	case *lua.LTable:
		t = x
	case lua.LString:
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+vmErrorText(string(x))))
	default:
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+errString(L, x)))
	}
	// Level 0 is this handler; level 1 the function that raised.
	if src, line, ok := luaPosition(L, 1); ok {
		t.RawSetString("source", lua.LString(src))
		t.RawSetString("line", lua.LNumber(line))
	}
	L.Push(t)
	return 1
}

// errString is tostring of an error value.
func errString(L *lua.LState, v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return num14(float64(x))
	case *lua.LNilType:
		return "nil"
	case lua.LBool:
		if x {
			return "true"
		}
		return "false"
	}
	return lua.LVAsString(L.ToStringMeta(v))
}

// luaPosition finds the source and current line of the frame at level,
// or of the next one when that frame runs Go code.
func luaPosition(L *lua.LState, level int) (string, int, bool) {
	for k := 0; k < 2; k++ {
		dbg, ok := L.GetStack(level + k)
		if !ok {
			return "", 0, false
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			return "", 0, false
		}
		if dbg.What == "G" {
			continue
		}
		return "@" + dbg.Source, dbg.CurrentLine, true
	}
	return "", 0, false
}

// scriptError renders an error table the way Redis replies with a
// failed script's error: the err message, then " script: <name>, on
// <source>:<line>." when the position is known. It reports whether the
// error enters the error statistics.
func scriptError(L *lua.LState, v lua.LValue, name string) (msg string, counted bool) {
	t, ok := v.(*lua.LTable)
	if !ok {
		// Not an error table (the handler always makes one; this is for
		// failures outside it).
		return "-ERR Error running script " + name + ", " + truncate(errString(L, v), 100), true
	}
	errv := t.RawGetString("err")
	text, ok := tostr(errv)
	if !ok {
		if errv == lua.LNil {
			text = "ERR unknown error"
		} else {
			text = errString(L, errv)
		}
	}
	msg = "-" + text
	src, okSrc := tostr(t.RawGetString("source"))
	line, okLine := tostr(t.RawGetString("line"))
	if okSrc && okLine {
		msg += " script: " + name + ", on " + src + ":" + line + "."
	}
	return msg, !lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// itoa is strconv.Itoa (kept short for error texts).
func itoa(n int) string { return strconv.Itoa(n) }

// vmErrorText rewrites the errors gopher-lua's VM raises in its own words
// into Lua 5.1's (without the variable names Lua adds when it knows them):
// "cannot perform add operation between number and nil" becomes "attempt
// to perform arithmetic on a nil value", "attempt to index a
// non-table object(nil) with key 'x'" becomes "attempt to index a nil
// value". The "chunk:line: " prefix is kept.
func vmErrorText(msg string) string {
	prefix, body := msg, ""
	if i := strings.Index(msg, ": "); i >= 0 && strings.Contains(msg[:i], ":") {
		prefix, body = msg[:i+2], msg[i+2:]
	} else {
		prefix, body = "", msg
	}
	switch {
	case strings.HasPrefix(body, "cannot perform ") && strings.Contains(body, " operation between "):
		rest := body[strings.Index(body, " operation between ")+len(" operation between "):]
		a, b, ok := strings.Cut(rest, " and ")
		if !ok {
			return msg
		}
		bad := a
		if a == "number" {
			bad = b
		}
		return prefix + "attempt to perform arithmetic on a " + bad + " value"
	case strings.HasPrefix(body, "bad argument #"):
		// gopher-lua's library functions leave the function name unquoted.
		i := strings.Index(body, " to ")
		j := strings.Index(body, " (")
		if i > 0 && j > i+4 && body[i+4] != '\'' {
			return prefix + body[:i+4] + "'" + body[i+4:j] + "'" + body[j:]
		}
	case strings.HasPrefix(body, "attempt to index a non-table object("):
		t := body[len("attempt to index a non-table object("):]
		if i := strings.IndexByte(t, ')'); i >= 0 {
			return prefix + "attempt to index a " + t[:i] + " value"
		}
	}
	return msg
}
