package script

import (
	"bytes"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/abacusdb/abacus/internal/resp"
)

// Conversions between Lua values and RESP, as Redis 7 documents them.
//
// Lua to RESP (a script's return value): a number is an integer reply
// (truncated), a string a bulk string, true the integer 1 (RESP3 true after
// redis.setresp(3)), false and nil the null reply (false is RESP3 false
// after setresp(3)); a table is, in this order of checks: an error reply
// when its err field is a string, a status reply ok, a double, a big
// number, a verbatim string, a map, a set, and otherwise an array of its
// elements 1, 2, ... up to the first nil.
//
// RESP to Lua (what redis.call returns): integer -> number, bulk ->
// string, null bulk or array -> false (nil in RESP3), array -> table,
// status -> {ok=...}, error -> {err=...}; RESP3 map -> {map={...}}, set ->
// {set={member=true}}, double -> {double=n}, boolean -> true/false, big
// number -> {big_number="..."}, verbatim -> {verbatim_string={format=,
// string=}}.

// luaReplyDepth is the deepest table nesting a script's reply converts:
// Redis 7.0's Lua C stack (LUAI_MAXCSTACK, 8000 slots) runs out after
// this many nested arrays when a script returns a table that holds
// itself.
const luaReplyDepth = 7994

// replyWriter writes a script's return value for a client.
type replyWriter struct {
	w        *resp.Writer
	vm       *VM
	resp     int // the script's redis.setresp
	countErr func(msg string, counted bool)
}

// write writes v (Redis's luaReplyToRedisReply).
func (rw *replyWriter) write(v lua.LValue, depth int) {
	w := rw.w
	switch x := v.(type) {
	case lua.LString:
		w.BulkString(string(x))
	case lua.LBool:
		if rw.resp == 2 {
			if x {
				w.Int(1)
			} else {
				w.Null()
			}
		} else {
			w.Bool(bool(x))
		}
	case lua.LNumber:
		w.Int(toInt64(float64(x)))
	case *lua.LTable:
		if depth > luaReplyDepth {
			// Redis runs out of Lua stack ("reached lua stack limit").
			rw.error("-ERR reached lua stack limit", true)
			return
		}
		rw.table(x, depth)
	default:
		w.Null()
	}
}

func (rw *replyWriter) table(t *lua.LTable, depth int) {
	w := rw.w
	t, _ = rw.vm.real(t)
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		msg := "-" + string(s)
		ignore := lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
		rw.error(msg, !ignore)
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(sanitize(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		rw.double(float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		w.BigNumber(sanitize(string(s)))
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, ok1 := vt.RawGetString("format").(lua.LString)
		s, ok2 := vt.RawGetString("string").(lua.LString)
		if ok1 && ok2 {
			writeVerbatim(w, string(f), string(s))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		m, _ = rw.vm.real(m)
		n := 0
		for k, _ := m.Next(lua.LNil); k != lua.LNil; k, _ = m.Next(k) {
			n++
		}
		w.Map(n)
		for k, v := m.Next(lua.LNil); k != lua.LNil; k, v = m.Next(k) {
			rw.write(k, depth+1)
			rw.write(v, depth+1)
		}
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		s, _ = rw.vm.real(s)
		n := 0
		for k, _ := s.Next(lua.LNil); k != lua.LNil; k, _ = s.Next(k) {
			n++
		}
		w.Set(n)
		for k, _ := s.Next(lua.LNil); k != lua.LNil; k, _ = s.Next(k) {
			rw.write(k, depth+1)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		rw.write(t.RawGetInt(i), depth+1)
	}
}

// error writes an error reply: msg starts with '-' and carries its code;
// counted says whether it enters the error statistics (errors that came
// from a command's reply were counted when the command failed).
func (rw *replyWriter) error(msg string, counted bool) {
	msg = sanitize(msg)
	body := msg[1:]
	if body == "" {
		// Redis writes "-" and nothing else for an empty message.
		rw.w.Buf = append(rw.w.Buf, "-\r\n"...)
	} else {
		rw.w.Error(body)
	}
	if rw.countErr != nil {
		rw.countErr(body, counted)
	}
}

// double writes a double reply as Redis 7.0 does: "%.17g", glibc's
// spelling of infinities and NaNs.
func (rw *replyWriter) double(v float64) {
	var tmp [40]byte
	var d []byte
	if s, ok := nonFinite(v); ok {
		d = append(tmp[:0], s...)
	} else {
		d = appendG(tmp[:0], v, 17, false)
	}
	if rw.w.Proto == 3 {
		rw.w.Buf = append(rw.w.Buf, ',')
		rw.w.Buf = append(rw.w.Buf, d...)
		rw.w.Buf = append(rw.w.Buf, '\r', '\n')
		return
	}
	rw.w.Bulk(d)
}

func writeVerbatim(w *resp.Writer, format, s string) {
	if w.Proto != 3 {
		w.BulkString(s)
		return
	}
	// Redis takes the first three characters of the format, padding with
	// spaces if it is shorter.
	f := []byte("   ")
	copy(f, format)
	w.Buf = append(w.Buf, '=')
	w.Buf = strconv.AppendInt(w.Buf, int64(len(s)+4), 10)
	w.Buf = append(w.Buf, '\r', '\n')
	w.Buf = append(w.Buf, f...)
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// sanitize replaces CR and LF with spaces, as Redis does in status and
// error replies built from script values.
func sanitize(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return s
}

// replyToLua converts one RESP reply (from Host.Call) to a Lua value. It
// returns the value, whether it is an error reply, and the bytes after it.
func (vm *VM) replyToLua(b []byte) (lua.LValue, bool, []byte) {
	L := vm.L
	if len(b) < 3 {
		return lua.LNil, false, nil
	}
	i := bytes.IndexByte(b, '\r')
	if i < 0 || i+1 >= len(b) {
		return lua.LNil, false, nil
	}
	line := b[1:i]
	rest := b[i+2:]
	switch b[0] {
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, false, rest
	case '-':
		return errorTable(L, "-"+string(line), true), true, rest
	case ':':
		return boxNum(float64(parseReplyInt(line))), false, rest
	case '$', '=':
		n := int(parseReplyInt(line))
		if n < 0 {
			return lua.LFalse, false, rest
		}
		if n+2 > len(rest) {
			return lua.LNil, false, nil
		}
		body := rest[:n]
		rest = rest[n+2:]
		if b[0] == '=' {
			t := L.CreateTable(0, 2)
			if len(body) >= 4 {
				t.RawSetString("format", lua.LString(body[:3]))
				t.RawSetString("string", lua.LString(body[4:]))
			} else {
				t.RawSetString("format", lua.LString(""))
				t.RawSetString("string", lua.LString(body))
			}
			vt := L.CreateTable(0, 1)
			vt.RawSetString("verbatim_string", t)
			return vt, false, rest
		}
		return vm.strs.get(body), false, rest
	case '*', '~', '>':
		n := int(parseReplyInt(line))
		if n < 0 {
			return lua.LFalse, false, rest
		}
		if b[0] == '~' {
			set := L.CreateTable(0, n)
			for k := 0; k < n; k++ {
				var v lua.LValue
				v, _, rest = vm.replyToLua(rest)
				if v != lua.LNil {
					set.RawSet(v, lua.LTrue)
				}
			}
			t := L.CreateTable(0, 1)
			t.RawSetString("set", set)
			return t, false, rest
		}
		t := L.CreateTable(n, 0)
		for k := 1; k <= n; k++ {
			var v lua.LValue
			v, _, rest = vm.replyToLua(rest)
			t.RawSetInt(k, v)
		}
		return t, false, rest
	case '%':
		n, _ := strconv.Atoi(string(line))
		m := L.CreateTable(0, n)
		for k := 0; k < n; k++ {
			var key, val lua.LValue
			key, _, rest = vm.replyToLua(rest)
			val, _, rest = vm.replyToLua(rest)
			if key != lua.LNil {
				m.RawSet(key, val)
			}
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t, false, rest
	case ',':
		f, ok := str2number(string(line))
		if !ok {
			f = 0
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, false, rest
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), false, rest
	case '_':
		return lua.LNil, false, rest
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, false, rest
	case '|':
		// An attribute: skip its pairs, the reply follows.
		n, _ := strconv.Atoi(string(line))
		for k := 0; k < 2*n; k++ {
			_, _, rest = vm.replyToLua(rest)
		}
		return vm.replyToLua(rest)
	}
	return lua.LNil, false, nil
}

// errorTable builds Redis's Lua error table from "-CODE message" or a
// bare message (which gets the ERR code), as luaPushErrorBuff does.
// fromReply marks errors already counted by the command that failed.
func errorTable(L *lua.LState, s string, fromReply bool) *lua.LTable {
	t := L.CreateTable(0, 2)
	if fromReply {
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
	}
	t.RawSetString("err", lua.LString(errorText(s)))
	return t
}

// errorText normalizes an error as luaPushErrorBuff does.
func errorText(s string) string {
	var code, msg string
	if strings.HasPrefix(s, "-") {
		if sp := strings.IndexByte(s, ' '); sp < 0 {
			code, msg = "ERR", s[1:]
		} else {
			code, msg = s[1:sp], s[sp+1:]
		}
	} else {
		code, msg = "ERR", s
	}
	msg = strings.Trim(msg, "\r\n")
	return code + " " + msg
}

// parseReplyInt reads the decimal integer of a reply line (a server's own
// reply: well formed).
func parseReplyInt(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}
