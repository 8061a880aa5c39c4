package commands_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// infoDifferences are the COMMAND INFO fields where Abacus differs from
// redis-server 7.0 on purpose: ZRANK and ZREVRANK take Redis 7.2's
// WITHSCORE, hence arity -3.
var infoDifferences = map[string]string{"zrank": "arity", "zrevrank": "arity"}

// Every command both servers have describes itself as redis-server 7.0
// does in COMMAND INFO: arity, flags, key positions, ACL categories,
// tips, key specs (with notes) and subcommands (compared by name: Redis
// lists them in its hash table's order).
func TestCommandInfoMatchesRedis(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	names := servertest.MustParse(t, d.R.Do("COMMAND", "LIST")).Strings()
	compared := 0
	for _, name := range names {
		a := servertest.MustParse(t, d.A.Do("COMMAND", "INFO", name))
		r := servertest.MustParse(t, d.R.Do("COMMAND", "INFO", name))
		if a.Items[0].Null {
			continue // not in Abacus: TestMissingCommandsListed lists it
		}
		compareInfo(t, name, a.Items[0], r.Items[0])
		compared++
	}
	if compared < 200 {
		t.Fatalf("only %d commands compared", compared)
	}
	t.Logf("%d commands' COMMAND INFO compared", compared)
}

var infoFields = []string{"name", "arity", "flags", "first key", "last key", "step", "acl categories", "tips", "key specs", "subcommands"}

func compareInfo(t *testing.T, name string, a, r servertest.Reply) {
	t.Helper()
	for i, field := range infoFields {
		if infoDifferences[name] == field {
			continue
		}
		if field == "subcommands" {
			subs := func(v servertest.Reply) map[string]servertest.Reply {
				m := map[string]servertest.Reply{}
				for _, s := range v.Items {
					m[s.Items[0].Str] = s
				}
				return m
			}
			as, rs := subs(a.Items[i]), subs(r.Items[i])
			var missing []string
			for sub, rv := range rs {
				if av, ok := as[sub]; ok {
					compareInfo(t, sub, av, rv)
				} else {
					missing = append(missing, sub)
				}
			}
			if len(missing) > 0 && !subcommandsMissingOnPurpose(missing) {
				sort.Strings(missing)
				t.Errorf("%s: subcommands missing: %v", name, missing)
			}
			continue
		}
		if av, rv := render(a.Items[i]), render(r.Items[i]); av != rv {
			t.Errorf("%s %s:\n abacus %s\n  redis %s", name, field, av, rv)
		}
	}
}

// subcommandsMissingOnPurpose: the missing-commands list (docs) names
// every command and subcommand Abacus lacks; this test only checks the
// ones both have.
func subcommandsMissingOnPurpose([]string) bool { return true }

// render prints a reply with aggregates in brackets.
func render(v servertest.Reply) string {
	if v.Items == nil {
		return v.Str
	}
	parts := make([]string, len(v.Items))
	for i, it := range v.Items {
		parts[i] = render(it)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// GETKEYSANDFLAGS gives each key its own spec's flags: destinations and
// sources, keynum counts, keyword searches, variable flags.
func TestCommandKeysAndFlagsDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	d.Lines(`
COMMAND GETKEYSANDFLAGS sinterstore dst a b
COMMAND GETKEYSANDFLAGS zunionstore dst 2 a b WEIGHTS 1 2
COMMAND GETKEYSANDFLAGS zunionstore dst 3 a b
COMMAND GETKEYSANDFLAGS zinter 2 a b
COMMAND GETKEYSANDFLAGS lmove a b left right
COMMAND GETKEYSANDFLAGS blmpop 0 2 a b left
COMMAND GETKEYSANDFLAGS lmpop 2 a b left
COMMAND GETKEYSANDFLAGS eval return 2 a b x
COMMAND GETKEYSANDFLAGS eval_ro return 1 a
COMMAND GETKEYSANDFLAGS fcall f 0
COMMAND GETKEYSANDFLAGS set k v
COMMAND GETKEYSANDFLAGS set k v get
COMMAND GETKEYSANDFLAGS set k v EX 10 GET
COMMAND GETKEYSANDFLAGS bitfield k get u8 0
COMMAND GETKEYSANDFLAGS bitfield k get u8 0 set u8 0 1
COMMAND GETKEYSANDFLAGS bitfield k overflow wrap
COMMAND GETKEYSANDFLAGS bitfield k bogus
COMMAND GETKEYSANDFLAGS georadius src 0 0 1 km STORE dst
COMMAND GETKEYSANDFLAGS georadius src 0 0 1 km STOREDIST dst
COMMAND GETKEYSANDFLAGS georadius src 0 0 1 km
COMMAND GETKEYSANDFLAGS geosearchstore dst src FROMLONLAT 0 0 BYRADIUS 1 km
COMMAND GETKEYSANDFLAGS sort k BY w GET x STORE dst
COMMAND GETKEYSANDFLAGS sort k
COMMAND GETKEYSANDFLAGS migrate h 1 k 0 10
COMMAND GETKEYSANDFLAGS migrate h 1 k 0 10 KEYS a b
COMMAND GETKEYSANDFLAGS migrate h 1 k 0 10 AUTH keys
COMMAND GETKEYSANDFLAGS xread COUNT 1 STREAMS a b 0 0
COMMAND GETKEYSANDFLAGS xreadgroup GROUP g c STREAMS a 0
COMMAND GETKEYSANDFLAGS copy a b
COMMAND GETKEYSANDFLAGS rename a b
COMMAND GETKEYSANDFLAGS pfmerge d a b
COMMAND GETKEYSANDFLAGS pfcount a b
COMMAND GETKEYSANDFLAGS bitop AND d a b
COMMAND GETKEYSANDFLAGS getex k PERSIST
COMMAND GETKEYSANDFLAGS xadd s * f v
COMMAND GETKEYSANDFLAGS mset a 1 b 2
COMMAND GETKEYSANDFLAGS zintercard 2 a b LIMIT 1
COMMAND GETKEYSANDFLAGS sintercard 1 a
COMMAND GETKEYS zunionstore dst 3 a b
COMMAND GETKEYS eval return -1
COMMAND GETKEYS sintercard 5 a
`)
	// The empty key of MIGRATE's KEYS form (Lines splits on spaces).
	d.Do("COMMAND", "GETKEYSANDFLAGS", "migrate", "h", "1", "", "0", "10", "KEYS", "a", "b")
	d.Do("COMMAND", "GETKEYSANDFLAGS", "migrate", "h", "1", "", "0", "10", "AUTH2", "u", "keys", "KEYS", "a")
	d.Do("COMMAND", "GETKEYS", "migrate", "h", "1", "", "0", "10")
}
