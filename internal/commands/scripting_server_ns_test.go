package commands_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The scripting API under its two names: `redis` (Redis's) and `server`
// (Valkey's), in EVAL scripts, in functions as they run and in library
// code as FUNCTION LOAD runs it. Every member of the API is exercised
// under both names in each context, and the replies must be the same.

// nsCases is one use of each member of the API table a script sees as it
// runs; NS stands for the namespace. A member missing here fails the test,
// so a new one cannot go untested.
var nsCases = map[string]string{
	"call":               "return NS.call('SET', KEYS[1], 'v')",
	"pcall":              "NS.call('SET', KEYS[1], 'x') local r = NS.pcall('INCR', KEYS[1]) return r",
	"error_reply":        "return NS.error_reply('MY fault')",
	"status_reply":       "return NS.status_reply('FINE')",
	"sha1hex":            "return NS.sha1hex('abc')",
	"log":                "NS.log(NS.LOG_DEBUG, 'namespace test') return 1",
	"setresp":            "NS.setresp(3) return NS.call('HGETALL', KEYS[1] .. 'h')",
	"set_repl":           "NS.set_repl(NS.REPL_ALL) return 1",
	"replicate_commands": "return NS.replicate_commands()",
	"breakpoint":         "return NS.breakpoint()",
	"debug":              "NS.debug('x') return 1",
	"acl_check_cmd":      "return NS.acl_check_cmd('GET', 'x')",
	"LOG_DEBUG":          "return NS.LOG_DEBUG",
	"LOG_VERBOSE":        "return NS.LOG_VERBOSE",
	"LOG_NOTICE":         "return NS.LOG_NOTICE",
	"LOG_WARNING":        "return NS.LOG_WARNING",
	"REDIS_VERSION":      "return NS.REDIS_VERSION",
	"REDIS_VERSION_NUM":  "return NS.REDIS_VERSION_NUM",
	"REPL_NONE":          "return NS.REPL_NONE",
	"REPL_AOF":           "return NS.REPL_AOF",
	"REPL_SLAVE":         "return NS.REPL_SLAVE",
	"REPL_REPLICA":       "return NS.REPL_REPLICA",
	"REPL_ALL":           "return NS.REPL_ALL",
}

// nsLoadCases use what library code may use while it loads; each also
// registers a function, whose reply the test compares.
var nsLoadCases = map[string]string{
	"register_function": "NS.register_function('F', function() return 'registered' end)",
	"register_named":    "NS.register_function{function_name='F', callback=function() return 'named' end, flags={'no-writes'}}",
	"log":               "NS.log(NS.LOG_NOTICE, 'loading') NS.register_function('F', function() return 1 end)",
	"LOG_DEBUG":         "local v = NS.LOG_DEBUG NS.register_function('F', function() return v end)",
	"LOG_VERBOSE":       "local v = NS.LOG_VERBOSE NS.register_function('F', function() return v end)",
	"LOG_NOTICE":        "local v = NS.LOG_NOTICE NS.register_function('F', function() return v end)",
	"LOG_WARNING":       "local v = NS.LOG_WARNING NS.register_function('F', function() return v end)",
}

func nsBody(body, ns string) string { return strings.ReplaceAll(body, "NS", ns) }

func TestScriptingServerNamespace(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)

	// The same table under both names, with the same members, in both
	// running contexts; every member has a case.
	members := "local t = {} for k in pairs(NS) do t[#t+1] = k end table.sort(t) return t"
	for _, ns := range []string{"redis", "server"} {
		got := c.Do("EVAL", nsBody(members, ns), "0")
		want := "*" + strconv.Itoa(len(nsCases)) + "\r\n"
		names := make([]string, 0, len(nsCases))
		for k := range nsCases {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			want += "$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n"
		}
		if got != want {
			t.Fatalf("EVAL members of %s:\n got %q\nwant %q", ns, got, want)
		}
	}
	if got := c.Do("EVAL", "return redis == server", "0"); got != ":1\r\n" {
		t.Fatalf("EVAL redis == server: %q", got)
	}
	lib := "#!lua name=nsmembers\nserver.register_function('nsm', function() " + nsBody(members, "server") +
		" end)\nredis.register_function('nseq', function() return redis == server end)"
	if got := c.Do("FUNCTION", "LOAD", lib); got != "$9\r\nnsmembers\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", got)
	}
	if got, want := c.Do("FCALL", "nsm", "0"), c.Do("EVAL", nsBody(members, "redis"), "0"); got != want {
		t.Fatalf("function members:\n got %q\nwant %q", got, want)
	}
	if got := c.Do("FCALL", "nseq", "0"); got != ":1\r\n" {
		t.Fatalf("function redis == server: %q", got)
	}

	// Each member used under both names: in EVAL, and in a function
	// registered through the same name.
	for name, body := range nsCases {
		var evals, fcalls []string
		for _, ns := range []string{"redis", "server"} {
			key := "ns:" + name + ":" + ns
			c.Do("DEL", key, key+"h")
			c.Do("HSET", key+"h", "f", "v")
			evals = append(evals, c.Do("EVAL", nsBody(body, ns), "1", key))
			c.Do("DEL", key, key+"h")
			c.Do("HSET", key+"h", "f", "v")
			libName := "ns_" + name + "_" + ns
			code := "#!lua name=" + libName + "\n" + ns + ".register_function('" + libName +
				"', function(KEYS, ARGV) " + nsBody(body, ns) + " end)"
			if got := c.Do("FUNCTION", "LOAD", code); !strings.Contains(got, libName) {
				t.Fatalf("%s under %s: FUNCTION LOAD: %q", name, ns, got)
			}
			fcalls = append(fcalls, c.Do("FCALL", libName, "1", key))
			c.Do("FUNCTION", "DELETE", libName)
		}
		if evals[0] != evals[1] || strings.Contains(evals[0], "nonexistent") {
			t.Errorf("%s in EVAL: redis %q, server %q", name, evals[0], evals[1])
		}
		if fcalls[0] != fcalls[1] || strings.Contains(fcalls[0], "nonexistent") {
			t.Errorf("%s in FCALL: redis %q, server %q", name, fcalls[0], fcalls[1])
		}
	}

	// Library code as it loads.
	for name, body := range nsLoadCases {
		var replies []string
		for _, ns := range []string{"redis", "server"} {
			libName := "nsload_" + name + "_" + ns
			code := "#!lua name=" + libName + "\n" + strings.ReplaceAll(nsBody(body, ns), "'F'", "'"+libName+"'")
			code = strings.ReplaceAll(code, "function_name='F'", "function_name='"+libName+"'")
			if got := c.Do("FUNCTION", "LOAD", code); got != "$"+strconv.Itoa(len(libName))+"\r\n"+libName+"\r\n" {
				t.Fatalf("%s under %s: FUNCTION LOAD: %q", name, ns, got)
			}
			replies = append(replies, c.Do("FCALL", libName, "0"))
		}
		if replies[0] != replies[1] {
			t.Errorf("%s while loading: redis %q, server %q", name, replies[0], replies[1])
		}
	}
	// What library code may not use while loading is refused alike.
	for _, ns := range []string{"redis", "server"} {
		got := c.Do("FUNCTION", "LOAD", "#!lua name=nsbad_"+ns+"\n"+ns+".call('PING')")
		if !strings.Contains(got, "Script attempted to access nonexistent global variable 'call'") {
			t.Errorf("%s.call while loading: %q", ns, got)
		}
	}
}
