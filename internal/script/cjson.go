package script

import (
	"math"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library, as Redis bundles lua-cjson 2.1.0: encode with
// "%.14g" numbers, escaped '/', sparse-array detection, {} for an empty
// table; decode with strtod numbers (hex, inf and nan accepted), null as
// the cjson.null sentinel, and lua-cjson's error texts.

type cjsonConfig struct {
	sparseConvert  bool
	sparseRatio    int
	sparseSafe     int
	encodeDepth    int
	decodeDepth    int
	precision      int
	keepBuffer     bool
	invalidNumbers int // 0 off, 1 on, 2 null
	decodeInvalid  bool
}

func defaultCjsonConfig() *cjsonConfig {
	return &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeDepth: 1000, decodeDepth: 1000,
		precision: 14, keepBuffer: true, decodeInvalid: true}
}

func (vm *VM) openCjson() *lua.LTable { return vm.newCjson(defaultCjsonConfig()) }

func (vm *VM) newCjson(cfg *cjsonConfig) *lua.LTable {
	L := vm.L
	if vm.null == nil {
		vm.null = L.NewUserData()
	}
	t := L.NewTable()
	vm.setFuncs(t, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int { return vm.cjsonEncode(L, cfg) },
		"decode": func(L *lua.LState) int { return vm.cjsonDecode(L, cfg) },
		"encode_sparse_array": func(L *lua.LState) int {
			cjsonArgInit(L, 3)
			boolOption(L, 1, &cfg.sparseConvert)
			intOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
			intOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
			return 3
		},
		"encode_max_depth": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return intOption(L, 1, &cfg.encodeDepth, 1, math.MaxInt32)
		},
		"decode_max_depth": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return intOption(L, 1, &cfg.decodeDepth, 1, math.MaxInt32)
		},
		"encode_number_precision": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return intOption(L, 1, &cfg.precision, 1, 14)
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return boolOption(L, 1, &cfg.keepBuffer)
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return enumOption(L, 1, &cfg.invalidNumbers, []string{"off", "on", "null"})
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return boolOption(L, 1, &cfg.decodeInvalid)
		},
		"new": func(L *lua.LState) int {
			L.Push(vm.newCjson(defaultCjsonConfig()))
			return 1
		},
	})
	t.RawSetString("null", vm.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// cjsonArgInit is json_arg_init: at most n arguments, padded with nils
// so that the results pushed later do not read as arguments.
func cjsonArgInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		argError(L, n+1, cjsonFname(L), "found too many arguments")
	}
	L.SetTop(n)
}

// cjsonFname is the name of the running cjson function for messages.
func cjsonFname(L *lua.LState) string {
	if dbg, ok := L.GetStack(0); ok {
		if _, err := L.GetInfo("n", dbg, lua.LNil); err == nil && dbg.Name != "" {
			return dbg.Name
		}
	}
	return "?"
}

func intOption(L *lua.LState, i int, setting *int, min, max int) int {
	if L.Get(i) != lua.LNil {
		v := int(toInt64(checkNumber(L, i, cjsonFname(L))))
		if v < min || v > max {
			argError(L, 1, cjsonFname(L), "expected integer between "+itoa(min)+" and "+itoa(max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
	return 1
}

func boolOption(L *lua.LState, i int, setting *bool) int {
	n := 0
	if *setting {
		n = 1
	}
	enumOption(L, i, &n, []string{"off", "on"})
	*setting = n != 0
	return 1
}

// enumOption is json_enum_option: a boolean or one of the option names.
func enumOption(L *lua.LState, i int, setting *int, options []string) int {
	if v := L.Get(i); v != lua.LNil {
		if b, ok := v.(lua.LBool); ok {
			*setting = 0
			if b {
				*setting = 1
			}
		} else {
			s := checkString(L, i, cjsonFname(L))
			found := false
			for k, o := range options {
				if o == s {
					*setting, found = k, true
					break
				}
			}
			if !found {
				argError(L, i, cjsonFname(L), "invalid option '"+s+"'")
			}
		}
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
	return 1
}

type jsonEncoder struct {
	vm  *VM
	L   *lua.LState
	cfg *cjsonConfig
	b   []byte
}

func (vm *VM) cjsonEncode(L *lua.LState, cfg *cjsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	enc := jsonEncoder{vm: vm, L: L, cfg: cfg}
	enc.value(L.Get(1), 0)
	L.Push(lua.LString(enc.b))
	return 1
}

func (e *jsonEncoder) fail(v lua.LValue, reason string) {
	e.L.RaiseError("Cannot serialise %s: %s", typeName(v), reason)
}

func (e *jsonEncoder) value(v lua.LValue, depth int) {
	switch x := v.(type) {
	case lua.LString:
		e.str(string(x))
	case lua.LNumber:
		e.number(v, float64(x))
	case lua.LBool:
		if x {
			e.b = append(e.b, "true"...)
		} else {
			e.b = append(e.b, "false"...)
		}
	case *lua.LNilType:
		e.b = append(e.b, "null"...)
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeDepth {
			e.L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		t, _ := e.vm.real(x)
		n := e.arrayLength(x, t)
		if n > 0 {
			e.b = append(e.b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.b = append(e.b, ',')
				}
				e.value(t.RawGetInt(i), depth)
			}
			e.b = append(e.b, ']')
			return
		}
		e.b = append(e.b, '{')
		first := true
		for k, val := t.Next(lua.LNil); k != lua.LNil; k, val = t.Next(k) {
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LNumber:
				e.b = append(e.b, '"')
				e.number(k, float64(kk))
				e.b = append(e.b, '"', ':')
			case lua.LString:
				e.str(string(kk))
				e.b = append(e.b, ':')
			default:
				e.fail(k, "table key must be a number or string")
			}
			e.value(val, depth)
		}
		e.b = append(e.b, '}')
	case *lua.LUserData:
		if x == e.vm.null {
			e.b = append(e.b, "null"...)
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
}

// arrayLength is lua_array_length: the largest key when every key is a
// positive integer (0 for none), -1 for an object.
func (e *jsonEncoder) arrayLength(orig, t *lua.LTable) int {
	max, items := 0.0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) != math.Floor(float64(n)) || n < 1 {
			return -1
		}
		if float64(n) > max {
			max = float64(n)
		}
		items++
	}
	c := e.cfg
	if c.sparseRatio > 0 && max > float64(items*c.sparseRatio) && max > float64(c.sparseSafe) {
		if !c.sparseConvert {
			e.fail(orig, "excessively sparse array")
		}
		return -1
	}
	return int(max)
}

func (e *jsonEncoder) number(v lua.LValue, n float64) {
	switch e.cfg.invalidNumbers {
	case 0:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			e.fail(v, "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(n) {
			e.b = append(e.b, "nan"...)
			return
		}
	default:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			e.b = append(e.b, "null"...)
			return
		}
	}
	if e.cfg.precision == 14 {
		e.b = appendNum14(e.b, n)
		return
	}
	e.b = appendG(e.b, n, e.cfg.precision, false)
}

// jsonEscapes is lua-cjson's char2escape table.
var jsonEscapes = func() [256]string {
	var t [256]string
	const hex = "0123456789abcdef"
	for c := 0; c < 0x20; c++ {
		t[c] = "\\u00" + string(hex[c>>4]) + string(hex[c&15])
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	t['"'], t['\\'], t['/'] = `\"`, `\\`, `\/`
	t[0x7f] = `\u007f`
	return t
}()

func (e *jsonEncoder) str(s string) {
	e.b = append(e.b, '"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			e.b = append(e.b, esc...)
		} else {
			e.b = append(e.b, s[i])
		}
	}
	e.b = append(e.b, '"')
}

// JSON decoding.

type jsonTokType int

const (
	tObjBegin jsonTokType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokNames = []string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

type jsonToken struct {
	typ   jsonTokType
	index int
	str   string
	num   float64
	b     bool
	err   string
}

type jsonDecoder struct {
	vm    *VM
	L     *lua.LState
	cfg   *cjsonConfig
	data  string
	pos   int
	depth int
}

func (vm *VM) cjsonDecode(L *lua.LState, cfg *cjsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	s := checkString(L, 1, "decode")
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	d := jsonDecoder{vm: vm, L: L, cfg: cfg, data: s}
	var tok jsonToken
	d.next(&tok)
	v := d.value(&tok)
	d.next(&tok)
	if tok.typ != tEnd {
		d.fail("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) fail(expected string, tok *jsonToken) {
	found := jsonTokNames[tok.typ]
	if tok.typ == tError {
		found = tok.err
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

func (d *jsonDecoder) next(tok *jsonToken) {
	for {
		c := d.at(d.pos)
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			d.pos++
			continue
		}
		break
	}
	*tok = jsonToken{index: d.pos}
	c := d.at(d.pos)
	switch c {
	case 0:
		tok.typ = tEnd
		return
	case '{':
		tok.typ = tObjBegin
	case '}':
		tok.typ = tObjEnd
	case '[':
		tok.typ = tArrBegin
	case ']':
		tok.typ = tArrEnd
	case ':':
		tok.typ = tColon
	case ',':
		tok.typ = tComma
	case '"':
		d.stringToken(tok)
		return
	default:
		rest := d.data[d.pos:]
		switch {
		case c == '-' || c >= '0' && c <= '9' || c == '+':
			if !d.cfg.decodeInvalid && d.invalidNumber() {
				d.tokenError(tok, "invalid number")
				return
			}
			d.numberToken(tok)
		case strings.HasPrefix(rest, "true"):
			tok.typ, tok.b = tBoolean, true
			d.pos += 4
		case strings.HasPrefix(rest, "false"):
			tok.typ = tBoolean
			d.pos += 5
		case strings.HasPrefix(rest, "null"):
			tok.typ = tNull
			d.pos += 4
		case (c == 'i' || c == 'I' || c == 'n' || c == 'N') && d.cfg.decodeInvalid && d.invalidNumber():
			d.numberToken(tok)
		default:
			d.tokenError(tok, "invalid token")
		}
		return
	}
	d.pos++
}

func (d *jsonDecoder) tokenError(tok *jsonToken, msg string) {
	tok.typ, tok.err, tok.index = tError, msg, d.pos
}

// invalidNumber is json_is_invalid_number: numbers JSON does not allow
// (a leading +, hex, leading zeros, inf, nan).
func (d *jsonDecoder) invalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || c2 >= '0' && c2 <= '9'
	} else if d.at(p) <= '9' {
		return false
	}
	rest := strings.ToLower(d.data[p:min(p+3, len(d.data))])
	return rest == "inf" || rest == "nan"
}

func (d *jsonDecoder) numberToken(tok *jsonToken) {
	n, used := strtodPrefix(d.data[d.pos:])
	if used == 0 {
		d.tokenError(tok, "invalid number")
		return
	}
	tok.typ, tok.num = tNumber, n
	d.pos += used
}

func (d *jsonDecoder) stringToken(tok *jsonToken) {
	d.pos++ // the opening quote
	var b []byte
	for {
		c := d.at(d.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			d.tokenError(tok, "unexpected end of string")
			return
		}
		if c == '\\' {
			e := d.at(d.pos + 1)
			switch e {
			case '"', '\\', '/':
				c = e
			case 'b':
				c = '\b'
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			case 'f':
				c = '\f'
			case 'r':
				c = '\r'
			case 'u':
				var ok bool
				if b, ok = d.unicodeEscape(b); !ok {
					d.tokenError(tok, "invalid unicode escape code")
					return
				}
				continue
			default:
				d.tokenError(tok, "invalid escape code")
				return
			}
			d.pos++
		}
		b = append(b, c)
		d.pos++
	}
	d.pos++ // the closing quote
	tok.typ, tok.str = tString, string(b)
}

func (d *jsonDecoder) hex4(at int) int {
	v := 0
	for i := 0; i < 4; i++ {
		h, ok := hexDigit(d.at(at + i))
		if !ok {
			return -1
		}
		v = v<<4 | h
	}
	return v
}

func (d *jsonDecoder) unicodeEscape(b []byte) ([]byte, bool) {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return b, false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return b, false
		}
		if d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return b, false
		}
		lo := d.hex4(d.pos + 8)
		if lo < 0 || lo&0xFC00 != 0xDC00 {
			return b, false
		}
		cp = ((cp&0x3FF)<<10 | lo&0x3FF) + 0x10000
		n = 12
	}
	b = utf8.AppendRune(b, rune(cp))
	d.pos += n
	return b, true
}

func (d *jsonDecoder) descend() {
	d.depth++
	if d.depth > d.cfg.decodeDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) value(tok *jsonToken) lua.LValue {
	L := d.L
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.vm.null
	case tObjBegin:
		d.descend()
		t := L.CreateTable(0, 4)
		d.next(tok)
		if tok.typ == tObjEnd {
			d.depth--
			return t
		}
		for {
			if tok.typ != tString {
				d.fail("object key string", tok)
			}
			key := tok.str
			d.next(tok)
			if tok.typ != tColon {
				d.fail("colon", tok)
			}
			d.next(tok)
			t.RawSetString(key, d.value(tok))
			d.next(tok)
			if tok.typ == tObjEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or object end", tok)
			}
			d.next(tok)
		}
	case tArrBegin:
		d.descend()
		t := L.CreateTable(4, 0)
		d.next(tok)
		if tok.typ == tArrEnd {
			d.depth--
			return t
		}
		for i := 1; ; i++ {
			t.RawSetInt(i, d.value(tok))
			d.next(tok)
			if tok.typ == tArrEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or array end", tok)
			}
			d.next(tok)
		}
	}
	d.fail("value", tok)
	return lua.LNil
}

// strtodPrefix parses the longest prefix of s that glibc's strtod
// accepts and returns the value and the bytes used (0: no number).
func strtodPrefix(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(v float64) float64 {
		if neg {
			return -v
		}
		return v
	}
	rest := strings.ToLower(s[i:min(i+8, len(s))])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return sign(math.Inf(1)), i + 8
	case strings.HasPrefix(rest, "inf"):
		return sign(math.Inf(1)), i + 3
	case strings.HasPrefix(rest, "nan"):
		n := i + 3
		if n < len(s) && s[n] == '(' {
			if k := strings.IndexByte(s[n:], ')'); k >= 0 {
				n += k + 1
			}
		}
		return sign(math.NaN()), n
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' {
		j := i + 2
		for j < len(s) && (isHex(s[j]) || s[j] == '.') {
			j++
		}
		if j < len(s) && (s[j]|0x20) == 'p' {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				j = k
			}
		}
		if v, ok := parseHexFloat(s[i+2 : j]); ok {
			return sign(v), j
		}
		return 0, i + 1 // just the "0"
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if j < len(s) && (s[j]|0x20) == 'e' {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	v, _ := str2number(s[:j])
	return v, j
}

func isHex(c byte) bool { _, ok := hexDigit(c); return ok }
