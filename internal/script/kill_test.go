package script

import (
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/parse"

	"github.com/abacusdb/abacus/internal/resp"
)

// killHost kills the engine when the script calls KILLME, as SCRIPT KILL
// arriving while that command ran would; it records the other calls.
type killHost struct {
	e     *Engine // nil: KILLME does nothing
	calls []string
}

func (h *killHost) Call(args [][]byte, proto int) []byte {
	if string(args[0]) == "KILLME" {
		if h.e != nil {
			h.e.Kill()
		}
	} else {
		h.calls = append(h.calls, string(args[0]))
	}
	return []byte("+OK\r\n")
}

func (h *killHost) CommandKnown([][]byte) bool { return true }

// Every shape of never-ending script stops with the kill error, whether
// its chunk is checkpointed or polled (kill.go), and a killed script runs
// no command after the kill, whatever catches its error.
func TestKillShapes(t *testing.T) {
	for _, c := range []struct {
		name, body   string
		checkpointed bool
		line         string // the position in the error, when fixed
	}{
		{"tight while", "redis.call('KILLME')\nlocal i = 0\nwhile true do i = i + 1 end", false, ":2."},
		{"while with calls", "redis.call('KILLME')\nwhile true do\nlocal s = tostring(1) .. 'x'\nend", true, ":2."},
		{"repeat", "redis.call('KILLME')\nrepeat local s = tostring(1) until false", true, ":2."},
		{"numeric for", "redis.call('KILLME')\nfor i = 1, math.huge do local s = tostring(i) end", true, ":2."},
		{"long literal for", "redis.call('KILLME')\nfor i = 1, 1e15 do local s = tostring(i) end", true, ""},
		{"generic for", "redis.call('KILLME')\nlocal t = {}\nsetmetatable(t, {__index = function() return 1 end})\nwhile true do for k, v in pairs({1, 2, 3}) do end end", false, ""},
		{"tail recursion", "redis.call('KILLME')\nlocal function f(n) return f(tostring(n)) end\nreturn f(1)", true, ":2."},
		{"branching recursion", "redis.call('KILLME')\nlocal function f(n) if n > 60 then return 0 end return f(n + 1) + f(n + 1) end\nreturn f(0)", true, ""},
		{"goto", "redis.call('KILLME')\n::top::\ngoto top", false, ""},
		{"pcall", "redis.call('KILLME')\nwhile true do pcall(function() while true do local s = tostring(1) end end) end", true, ""},
		{"pcall polled", "redis.call('KILLME')\nlocal i = 0\nwhile true do pcall(function() while true do i = i + 1 end end) end", false, ""},
		{"xpcall", "redis.call('KILLME')\nlocal r = xpcall(function() while true do local s = tostring(1) end end, function(e) return tostring(e) end)\nredis.call('AFTER')\nreturn 1", true, ""},
		{"coroutine", "redis.call('KILLME')\nlocal co = coroutine.wrap(function() while true do local s = tostring(1) end end)\nco()", true, ""},
		{"coroutine polled", "redis.call('KILLME')\nlocal i = 0\nlocal co = coroutine.create(function() while true do i = i + 1 end end)\ncoroutine.resume(co)\nredis.call('AFTER')", false, ""},
		{"straight on", "redis.call('KILLME')\nlocal s = tostring(1)\nredis.call('AFTER')\nreturn s", true, ""},
		{"straight on pcall", "redis.call('KILLME')\nlocal ok = redis.pcall('AFTER')\nreturn 1", true, ""},
		{"ends", "redis.call('KILLME')\nreturn 1", true, ""},
		{"loadstring", "redis.call('KILLME')\nlocal f = loadstring('local i = 0 while true do i = i + 1 end')\nf()", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := New(Options{})
			h := &killHost{e: e}
			s, err := e.Load(c.body)
			if err != nil {
				t.Fatal(err)
			}
			if s.checkpointed != c.checkpointed {
				t.Errorf("checkpointed = %v, want %v", s.checkpointed, c.checkpointed)
			}
			w := &resp.Writer{Proto: 2}
			if !e.RunScript(s, &Call{Host: h, W: w}) {
				t.Errorf("the run did not fail")
			}
			want := "-ERR Script killed by user with SCRIPT KILL..."
			if c.name != "ends" {
				want += " script: " + s.SHA
			}
			if got := string(w.Buf); !strings.HasPrefix(got, want) || !strings.Contains(got, c.line+"\r\n") {
				t.Errorf("reply %q, want %q...%s", got, want, c.line)
			}
			if len(h.calls) != 0 {
				t.Errorf("commands after the kill: %q", h.calls)
			}
			// The next run is not killed (for the scripts that end).
			if strings.HasSuffix(c.body, "return 1") && !strings.Contains(c.body, "while") {
				w.Reset()
				if e.RunScript(s, &Call{Host: &killHost{}, W: w}) {
					t.Errorf("a later run failed: %q", w.Buf)
				}
			}
		})
	}
}

// A killed function stops too, and FUNCTION LOAD's code is checkpointed
// or polled by the same rules.
func TestKillFunction(t *testing.T) {
	for _, body := range []string{
		"redis.register_function('f', function() redis.call('KILLME') while true do local s = tostring(1) end end)",
		"redis.register_function('f', function() redis.call('KILLME') local i = 0 while true do i = i + 1 end end)",
	} {
		e := New(Options{})
		if _, err := e.LoadLibrary("#!lua name=lib\n"+body, false); err != nil {
			t.Fatal(err)
		}
		w := &resp.Writer{Proto: 2}
		if !e.RunFunction(e.Function("f"), &Call{Host: &killHost{e: e}, W: w}) {
			t.Errorf("%s: the run did not fail", body)
		}
		if got := string(w.Buf); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL... script: f, on @user_function:2.") {
			t.Errorf("%s: reply %q", body, got)
		}
	}
}

// Which chunks are checkpointed: the decision that keeps both kinds of
// script fast.
func TestCheckpointedChoice(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"return 1", true},
		{"for i = 1, 10 do redis.call('INCR', KEYS[i]) end", true},
		{"for i = 1, 10 do x = i end", true},     // short: no checkpoint needed
		{"for i = 1, 1001 do x = i end", false},  // long and thin
		{"for i = 1, #KEYS do x = i end", false}, // unknown length, thin
		{"for i = 1, #KEYS do redis.call('GET', KEYS[i]) end", true},
		{"for i = 1, 10 do while true do x = 1 end end", false},
		{"for k, v in pairs(t) do end", true}, // next is called on each pass
		{"while x do x = x.next end", false},
		{"while f(x) do end", true},
		{"repeat x = x .. 'a' until #x > 10", true},
		{"local function f(a) return a * 2 end", false},
		{"local function f(a) return tostring(a) end", true},
		{"local t = {f = function() return 1 end}", false},
		{"::a:: x = 1", false},
	} {
		chunk, err := parse.Parse(strings.NewReader(c.body), "t")
		if err != nil {
			t.Fatal(c.body, err)
		}
		if got := checkpointed(chunk); got != c.want {
			t.Errorf("%s: checkpointed = %v, want %v", c.body, got, c.want)
		}
	}
}

// The checkpoints are invisible: no global to see, the same line numbers
// in errors.
func TestCheckpointsInvisible(t *testing.T) {
	e := New(Options{})
	h := &fakeHost{}
	if got := run(t, e, h, "local n = 0 for k in pairs(_G) do if type(k) == 'string' and k:sub(1, 1) == '(' then n = n + 1 end end return n"); got != ":0\r\n" {
		t.Errorf("hidden globals seen by pairs: %q", got)
	}
	if got := run(t, e, h, "local t = {}\nfor i = 1, #KEYS + 2 do\nlocal s = tostring(i)\nt[i] = s\nend\nreturn t.x.y"); !strings.Contains(got, "on @user_script:6.") {
		t.Errorf("error position: %q", got)
	}
	if got := run(t, e, h, "local function f(x)\nlocal s = tostring(x)\nreturn s.a.b\nend\nreturn f(1)"); !strings.Contains(got, "on @user_script:3.") {
		t.Errorf("error position in a function: %q", got)
	}
}
