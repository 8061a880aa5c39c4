package commands_test

import (
	"sort"
	"strings"
	"testing"
)

// Differential tests of the scripting commands themselves: EVAL's
// arguments, EVALSHA and the script cache, the _RO variants, shebang
// flags, SCRIPT's subcommands, syntax errors, and their statistics.

func TestScriptingDiffCommands(t *testing.T) {
	sd := newScriptDiff(t)
	lines := [][]string{
		{"EVAL", "return 1", "0"},
		{"EVAL", "return 1", "-1"},
		{"EVAL", "return 1", "1"},
		{"EVAL", "return 1", "2", "a"},
		{"EVAL", "return 1", "x"},
		{"EVAL", "return 1", "1.5"},
		{"EVAL", "return 1", ""},
		{"EVAL", "return 1"},
		{"EVAL"},
		{"EVALSHA", "abc", "0"},
		{"EVALSHA", "abc", "x"},
		{"EVALSHA", strings.Repeat("a", 40), "0"},
		{"EVALSHA", strings.Repeat("a", 40), "x"},
		{"EVALSHA", strings.Repeat("a", 40), "-1"},
		{"EVALSHA", strings.Repeat("a", 41), "0"},
		{"EVALSHA_RO", "abc", "0"},
		{"SCRIPT", "LOAD", "return 'loaded'"},
		{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
		{"EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"},
		{"EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
		{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8", "B534286061D4B9E4026607613B95C06C06015AE8", "abc", strings.Repeat("0", 40)},
		{"EVAL", "return 'cached by eval'", "0"},
		{"SCRIPT", "EXISTS", "d9a15a5e9a1c4e1bd2f3e0ac3f3e80a45a44c3c1"},
		{"SCRIPT", "LOAD", "return +"},
		{"SCRIPT", "LOAD", "return 1", "extra"},
		{"SCRIPT", "LOAD"},
		{"SCRIPT", "EXISTS"},
		{"SCRIPT", "FLUSH", "foo"},
		{"SCRIPT", "FLUSH", "sync", "x"},
		{"SCRIPT", "FLUSH", "SYNC"},
		{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
		{"SCRIPT", "LOAD", "return 'loaded'"},
		{"SCRIPT", "FLUSH", "ASYNC"},
		{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"},
		{"SCRIPT", "FLUSH"},
		{"SCRIPT", "KILL"},
		{"SCRIPT", "KILL", "x"},
		{"SCRIPT", "DEBUG", "NO"},
		{"SCRIPT", "DEBUG", "maybe"},
		{"SCRIPT", "HELP"},
		{"SCRIPT", "HELP", "x"},
		{"SCRIPT", "NOSUCH"},
		{"SCRIPT"},
		{"EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "k"},
		{"EVAL_RO", "return redis.call('SET', KEYS[1], 'v')", "1", "k"},
		{"EVAL_RO", "return redis.pcall('SET', KEYS[1], 'v')", "1", "k"},
		// Commands that may replicate count as writes in read-only scripts.
		{"EVAL_RO", "return redis.pcall('PFCOUNT', KEYS[1])", "1", "k"},
		{"EVAL_RO", "return redis.pcall('PUBLISH', 'ch', 'm')", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.pcall('PUBLISH', 'ch', 'm')", "0"},
		{"EVAL", "return redis.call('PUBLISH', 'ch', 'm')", "0"},
		{"EVAL_RO", "#!lua\nreturn redis.call('GET', 'k')", "0"},
		{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('GET', 'k')", "0"},
		{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('SET', 'k', 'v')", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('SET', 'k', 'v')", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'k')", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", "0"},
		{"EVAL", "#!lua flags=\nreturn 2", "0"},
		{"EVAL", "#!lua\nreturn redis.call('SET', 'k', 'v')", "0"},
		{"EVAL", "#!lua flags=foo\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes,,allow-oom\nreturn 1", "0"},
		{"EVAL", "#!lua flags=NO-WRITES\nreturn 1", "0"},
		{"EVAL", "#!lua", "0"},
		{"EVAL", "#!lua ", "0"},
		{"EVAL", "#!luax\nreturn 1", "0"},
		{"EVAL", "#! lua\nreturn 1", "0"},
		{"EVAL", "#!lua name=x\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes foo\nreturn 1", "0"},
		{"EVAL", "#!lua \"flags=no-writes\"\nreturn 1", "0"},
		{"EVAL", "#!lua \"unbalanced\nreturn 1", "0"},
		{"EVAL", "#!lua\n\nerror('line 3')", "0"},
		{"EVAL", "#!lua\nreturn foo", "0"},
		{"EVAL", "#comment\nreturn 1", "0"},
		{"EVAL", "return 1 +", "0"},
		{"EVAL", "return +", "0"},
		{"EVAL", "x = = 1", "0"},
		{"EVAL", "return 'unfinished", "0"},
		{"EVAL", "return [[unfinished", "0"},
		{"EVAL", "\n\nreturn )", "0"},
		{"EVAL", "", "0"},
		{"EVAL", " ", "0"},
		{"EVAL", "-- only a comment", "0"},
	}
	for _, l := range lines {
		sd.do(l...)
	}
	// EVAL caches its script: EVALSHA finds it afterwards.
	sd.do("EVAL", "return 'via eval'", "0")
	sha := sd.A.Do("SCRIPT", "LOAD", "return 'via eval'")
	sd.do("EVALSHA", strings.TrimSpace(strings.Split(sha, "\n")[1]), "0")
}

// The statistics scripts leave: commandstats of the script and of its
// commands, error statistics, total error replies.
func TestScriptingDiffStats(t *testing.T) {
	sd := newScriptDiff(t)
	cases := []string{
		"return redis.call('INCR', 'str')",
		"return redis.pcall('INCR', 'str')",
		"redis.pcall('INCR', 'str') return 1",
		"return redis.call('NOSUCHCMD')",
		"return redis.pcall('NOSUCHCMD')",
		"return redis.call('GET')",
		"error('x')",
		"return redis.error_reply('MY thing')",
		"return {err='OTHER thing'}",
		"return {1, {err='NESTED x'}, redis.pcall('INCR', 'str')}",
		"return redis.call('SET', 'a', 'b')",
		"return redis.call()",
		"return redis.call('SET', 'a', {})",
	}
	for _, body := range cases {
		for _, c := range []string{"A", "R"} {
			conn := sd.A
			if c == "R" {
				conn = sd.R
			}
			conn.Do("CONFIG", "RESETSTAT")
			conn.Do("SET", "str", "abc")
		}
		sd.do("EVAL", body, "0")
		sd.do("EVAL_RO", "return redis.call('SET', 'x', 'y')", "0")
		a, r := scriptStats(sd.A.Do("INFO", "all")), scriptStats(sd.R.Do("INFO", "all"))
		if a != r {
			t.Errorf("EVAL %s: statistics differ\n abacus: %s\n  redis: %s", body, a, r)
		}
	}
}

// scriptStats extracts the statistics the scripting tests compare.
func scriptStats(info string) string {
	var out []string
	for _, line := range strings.Split(info, "\r\n") {
		switch {
		case strings.HasPrefix(line, "errorstat_"), strings.HasPrefix(line, "total_error_replies:"):
			out = append(out, line)
		case strings.HasPrefix(line, "cmdstat_"):
			name, rest, _ := strings.Cut(line, ":")
			if name == "cmdstat_config|resetstat" || name == "cmdstat_info" || name == "cmdstat_set" && strings.Contains(rest, "calls=1,") {
				continue
			}
			// calls, rejected_calls and failed_calls; not the timings.
			var keep []string
			for _, f := range strings.Split(rest, ",") {
				if strings.HasPrefix(f, "calls=") || strings.HasPrefix(f, "rejected_calls=") || strings.HasPrefix(f, "failed_calls=") {
					keep = append(keep, f)
				}
			}
			out = append(out, name+":"+strings.Join(keep, ","))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Scripts inside transactions, and WATCH seeing a script's writes.
func TestScriptingDiffTransactions(t *testing.T) {
	sd := newScriptDiff(t)
	sd.Lines(`
SET k 1
WATCH k
EVAL redis.call('INCR','k') 0
MULTI
GET k
EXEC
WATCH k
EVAL return 1 0
MULTI
EVAL return redis.call('INCR','k') 0
EVAL return redis.call('NOSUCH') 0
EVALSHA 0000000000000000000000000000000000000000 0
SCRIPT LOAD return 'in multi'
EXEC
MULTI
EVAL return redis.call('MULTI') 0
EVAL return 1 x
EXEC
MULTI
FCALL nosuch 0
FUNCTION LOAD bad
EXEC
`)
}

// INFO memory's script and function counts.
func TestScriptingDiffInfoCounts(t *testing.T) {
	sd := newScriptDiff(t)
	counts := func(info string) string {
		var out []string
		for _, l := range strings.Split(info, "\r\n") {
			for _, p := range []string{"number_of_cached_scripts:", "number_of_functions:", "number_of_libraries:"} {
				if strings.HasPrefix(l, p) {
					out = append(out, l)
				}
			}
		}
		return strings.Join(out, " ")
	}
	check := func(when string) {
		a, r := counts(sd.A.Do("INFO", "memory")), counts(sd.R.Do("INFO", "memory"))
		if a != r || a == "" {
			t.Errorf("%s: abacus %q, redis %q", when, a, r)
		}
	}
	check("empty")
	sd.do("EVAL", "return 1", "0")
	sd.do("SCRIPT", "LOAD", "return 2")
	sd.do("FUNCTION", "LOAD", "#!lua name=l1\nredis.register_function('a', function() end) redis.register_function('b', function() end)")
	check("loaded")
	sd.do("SCRIPT", "FLUSH")
	sd.do("FUNCTION", "DELETE", "l1")
	check("flushed")
}
