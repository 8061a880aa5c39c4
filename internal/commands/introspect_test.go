package commands_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// svOwnCommands are the commands (and subcommands) this family defines;
// their COMMAND INFO must equal redis-server 7.0's byte for byte.
var svOwnCommands = []string{
	"config|get", "config|set", "config|resetstat", "config|rewrite", "config|help",
	"info", "time", "lastsave", "shutdown", "debug",
	"slowlog|get", "slowlog|len", "slowlog|reset", "slowlog|help",
	"latency|latest", "latency|history", "latency|reset", "latency|doctor", "latency|graph", "latency|help",
	"memory|usage", "memory|stats", "memory|doctor", "memory|malloc-stats", "memory|purge", "memory|help",
	"command|count", "command|docs", "command|getkeys", "command|getkeysandflags", "command|help", "command|info", "command|list",
	"get",
}

func TestCommandInfoDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	n := 0
	for _, proto := range []string{"2", "3"} {
		d.A.Do("HELLO", proto)
		d.R.Do("HELLO", proto)
		for _, name := range svOwnCommands {
			d.Do("COMMAND", "INFO", name)
			n++
		}
		d.Do("COMMAND", "INFO", "nosuch")
		d.Do("COMMAND", "INFO", "CONFIG|GET", "nosuch", "TIME", "config|nosuch", "config|get|x")
		d.Do("COMMAND", "DOCS", "nosuch")
		n += 3
	}
	t.Logf("%d COMMAND INFO cases compared", n)
}

func TestCommandKeysDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	text := `
COMMAND GETKEYS get a
COMMAND GETKEYSANDFLAGS get a
COMMAND GETKEYS GET a
COMMAND GETKEYS get a b
COMMAND GETKEYS get
COMMAND GETKEYS nosuch x
COMMAND GETKEYS config get x
COMMAND GETKEYS config nosuch x
COMMAND GETKEYS memory usage k
COMMAND GETKEYSANDFLAGS memory usage k
COMMAND GETKEYS memory usage k SAMPLES 5
COMMAND GETKEYS ping x
COMMAND GETKEYS ping
COMMAND GETKEYS
COMMAND GETKEYSANDFLAGS
COMMAND LIST FILTERBY
COMMAND LIST foo
COMMAND LIST FILTERBY foo bar
COMMAND LIST FILTERBY MODULE x
COMMAND LIST FILTERBY ACLCAT nosuch
COMMAND LIST FILTERBY ACLCAT @dangerous
COMMAND LIST FILTERBY PATTERN nosuch*
COMMAND COUNT x
COMMAND foo
COMMAND DOCS nosuch other
`
	d.Lines(text)
	n := strings.Count(strings.TrimSpace(text), "\n") + 1
	// Which config, memory, slowlog and latency names a pattern lists
	// (Redis lists them in its hash order).
	for _, pat := range []string{"config*", "MEMORY|*", "slowlog|?e?", "c[o]nfig|*"} {
		list := func(c *servertest.Conn) string {
			names := servertest.MustParse(t, c.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", pat)).Strings()
			sort.Strings(names)
			return strings.Join(names, " ")
		}
		if a, r := list(d.A), list(d.R); a != r {
			t.Errorf("LIST PATTERN %s:\n abacus %s\n  redis %s", pat, a, r)
		}
		n++
	}
	t.Logf("%d COMMAND cases compared", n)
}

// TestCommandTable checks every command's COMMAND INFO entry is well
// formed and parses with go-redis, and that the table drives COUNT, LIST,
// DOCS and GETKEYS.
func TestCommandTable(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	all := servertest.MustParse(t, c.Do("COMMAND"))
	count := servertest.MustParse(t, c.Do("COMMAND", "COUNT"))
	if count.Str != strconv.Itoa(len(all.Items)) || len(all.Items) != len(engine.All()) {
		t.Fatalf("COMMAND has %d entries, COUNT %s, table %d", len(all.Items), count.Str, len(engine.All()))
	}
	var check func(e servertest.Reply, parent string)
	listed := 0
	check = func(e servertest.Reply, parent string) {
		listed++
		if len(e.Items) != 10 {
			t.Fatalf("entry %v has %d fields", e.Items[0], len(e.Items))
		}
		name := e.Items[0].Str
		if parent != "" && !strings.HasPrefix(name, parent+"|") {
			t.Errorf("subcommand %s of %s", name, parent)
		}
		if e.Items[1].Str == "0" {
			t.Errorf("%s: arity 0", name)
		}
		for _, cat := range e.Items[6].Items {
			if !strings.HasPrefix(cat.Str, "@") {
				t.Errorf("%s: category %q", name, cat.Str)
			}
		}
		first := e.Items[3].Str
		// Movable-key commands (LMPOP, ZUNIONSTORE...) have key specs and
		// first key 0, as in Redis.
		movable := svContains(e.Items[2].Strings(), "movablekeys")
		if (first != "0") != (len(e.Items[8].Items) > 0) && !(movable && first == "0") {
			t.Errorf("%s: first key %s but %d key specs", name, first, len(e.Items[8].Items))
		}
		for _, s := range e.Items[9].Items {
			check(s, name)
		}
	}
	for _, e := range all.Items {
		check(e, "")
	}
	list := servertest.MustParse(t, c.Do("COMMAND", "LIST"))
	if len(list.Items) != listed {
		t.Errorf("COMMAND LIST has %d names, COMMAND %d entries", len(list.Items), listed)
	}
	docs := servertest.MustParse(t, c.Do("COMMAND", "DOCS"))
	if len(docs.Items) != 2*len(all.Items) {
		t.Errorf("COMMAND DOCS has %d entries", len(docs.Items)/2)
	}
	conf := servertest.MustParse(t, c.Do("COMMAND", "DOCS", "config", "get"))
	if len(conf.Items) != 4 || conf.Items[0].Str != "config" {
		t.Fatalf("DOCS config get: %v", conf)
	}
	fields := conf.Items[1].Strings()
	if len(fields) < 9 || fields[0] != "summary" || fields[2] != "since" || fields[4] != "group" || fields[5] != "server" ||
		fields[6] != "complexity" || fields[8] != "subcommands" {
		t.Errorf("DOCS config fields %q", fields)
	}
	acl := servertest.MustParse(t, c.Do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "ADMIN")).Strings()
	if !svContains(acl, "config|set") || !svContains(acl, "shutdown") || svContains(acl, "time") {
		t.Errorf("ACLCAT admin: %v", acl)
	}
	if help := servertest.MustParse(t, c.Do("COMMAND", "HELP")); len(help.Items) < 10 {
		t.Errorf("help %v", help.Strings())
	}

	g := inst.Client(t)
	infos, err := g.Command(servertest.Ctx).Result()
	if err != nil || len(infos) != len(all.Items) {
		t.Fatalf("go-redis COMMAND: %d %v", len(infos), err)
	}
	if gi := infos["get"]; gi == nil || gi.Arity != 2 || gi.FirstKeyPos != 1 || !gi.ReadOnly {
		t.Errorf("go-redis get %+v", gi)
	}
	keys, err := g.CommandGetKeys(servertest.Ctx, "memory", "usage", "k").Result()
	if err != nil || len(keys) != 1 || keys[0] != "k" {
		t.Errorf("go-redis GETKEYS %v %v", keys, err)
	}
}

func svContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
