package persist

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// entry is a key as the model holds it: its value's DUMP payload and its
// TTL.
type entry struct {
	payload string
	expire  int64
}

// commandsKeyspace is keys of every kind a rewrite's commands hold:
// strings raw and integer, with and without a TTL, and collections, in
// two databases.
func commandsKeyspace(n int) *keyspace.Keyspace {
	ks := keyspace.New(2)
	const future = int64(4_000_000_000_000)
	for i := range n {
		db := ks.DBs[i%2]
		key := fmt.Sprintf("k:%d", i)
		var o *keyspace.Object
		switch i % 7 {
		case 0, 1:
			o = keyspace.NewString([]byte(fmt.Sprintf("value:%d", i)))
		case 2:
			o = keyspace.NewString([]byte(strconv.Itoa(i))) // an integer
		case 3:
			o = keyspace.NewString(bytes.Repeat([]byte{byte(i)}, 150+i%300)) // binary, lengths past 99
		case 4:
			l := list.New(-2)
			l.PushBack([]byte("a"), []byte(strconv.Itoa(i)))
			o = keyspace.NewValue(keyspace.TypeList, l)
		case 5:
			var h *hash.Hash
			o, h = keyspace.NewHash()
			h.Set(0, []byte("f"), []byte(strconv.Itoa(i)), hash.Limits{MaxListpackEntries: 128, MaxListpackValue: 64})
		case 6:
			if i%2 == 0 {
				s := set.New()
				s.Add(set.DefaultLimits(), []byte("m"+strconv.Itoa(i)))
				o = keyspace.NewValue(keyspace.TypeSet, s)
			} else {
				z := zset.New(zset.DefaultLimits())
				z.Add("m", float64(i)/3)
				o = keyspace.NewValue(keyspace.TypeZSet, z)
			}
		}
		db.Set(key, o, false)
		if i%5 == 0 {
			db.SetExpire(o, future+int64(i))
		}
	}
	return ks
}

// modelOfKeyspace is ks as entries, by "db/key".
func modelOfKeyspace(t *testing.T, ks *keyspace.Keyspace) map[string]entry {
	m := map[string]entry{}
	for _, db := range ks.DBs {
		db.ForEach(func(o *keyspace.Object) {
			p, err := rdb.AppendDump(nil, o, rdb.EncodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m[fmt.Sprintf("%d/%s", db.ID, o.Key)] = entry{string(p), o.Expire}
		})
	}
	return m
}

// parseCommands splits a stream of RESP commands into their arguments.
func parseCommands(t *testing.T, b []byte) [][]string {
	var cmds [][]string
	line := func() string {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			t.Fatalf("unterminated line in %q", b)
		}
		l := string(b[:i])
		b = b[i+2:]
		return l
	}
	for len(b) > 0 {
		h := line()
		n, err := strconv.Atoi(h[1:])
		if h[0] != '*' || err != nil {
			t.Fatalf("bad array header %q", h)
		}
		args := make([]string, n)
		for j := range args {
			h := line()
			l, err := strconv.Atoi(h[1:])
			if h[0] != '$' || err != nil || h[1:] != strconv.Itoa(l) {
				t.Fatalf("bad bulk header %q", h)
			}
			args[j] = string(b[:l])
			if string(b[l:l+2]) != "\r\n" {
				t.Fatalf("bulk of %d not followed by CRLF", l)
			}
			b = b[l+2:]
		}
		cmds = append(cmds, args)
	}
	return cmds
}

// applyCommands runs a base's commands against a model, as loading the
// AOF does, and counts them by name.
func applyCommands(t *testing.T, cmds [][]string) (map[string]entry, map[string]int) {
	m := map[string]entry{}
	count := map[string]int{}
	db := 0
	for _, c := range cmds {
		count[c[0]]++
		switch c[0] {
		case "SELECT":
			db, _ = strconv.Atoi(c[1])
		case "SET":
			p, _ := rdb.AppendDump(nil, keyspace.NewString([]byte(c[2])), rdb.EncodeOptions{})
			m[fmt.Sprintf("%d/%s", db, c[1])] = entry{payload: string(p)}
		case "PEXPIREAT":
			k := fmt.Sprintf("%d/%s", db, c[1])
			e, ok := m[k]
			if !ok {
				t.Fatalf("PEXPIREAT of a missing key %s", k)
			}
			e.expire, _ = strconv.ParseInt(c[2], 10, 64)
			m[k] = e
		case "RESTORE":
			if len(c) != 6 || c[4] != "ABSTTL" || c[5] != "REPLACE" {
				t.Fatalf("RESTORE %q", c[1:])
			}
			o, err := rdb.Restore([]byte(c[3]), rdb.DefaultOptions())
			if err != nil {
				t.Fatalf("RESTORE %s: %v", c[1], err)
			}
			p, _ := rdb.AppendDump(nil, o, rdb.EncodeOptions{})
			at, _ := strconv.ParseInt(c[2], 10, 64)
			m[fmt.Sprintf("%d/%s", db, c[1])] = entry{string(p), at}
		case "FUNCTION":
		default:
			t.Fatalf("unexpected command %q", c)
		}
	}
	return m, count
}

// An AOF base without the RDB preamble loads to the data it was written
// from, whichever way it is written: a driven save's encoder (appending
// to its chunk in place, to a file itself or through Stream), a save
// without a driver, or at once (AppendCommands). Strings are SET and
// PEXPIREAT, as redis-server writes them; other values RESTORE.
func TestRestoreCommandsLoadToTheSameData(t *testing.T) {
	const n = 7000
	ks := commandsKeyspace(n)
	want := modelOfKeyspace(t, ks)
	save := func(drive, direct bool) []byte {
		var mu sync.Mutex
		opt := Options{RestoreCommands: true, Functions: [][]byte{[]byte("#!lua name=lib\nredis.register_function('f', function() return 1 end)")}}
		if drive {
			opt.Drive = goDrive(&mu)
		}
		mu.Lock()
		b := StartBackground(ks, &mu, opt)
		mu.Unlock()
		var out bytesWriter
		if err := b.stream(&out, direct); err != nil {
			t.Fatal(err)
		}
		return out.b
	}
	outs := map[string][]byte{
		"driven, direct": save(true, true),
		"driven":         save(true, false),
		"not driven":     save(false, false),
		"at once":        AppendCommands(nil, ks, Options{Functions: [][]byte{[]byte("#!lua name=lib\nredis.register_function('f', function() return 1 end)")}}),
	}
	for name, b := range outs {
		got, count := applyCommands(t, parseCommands(t, b))
		if len(got) != len(want) {
			t.Errorf("%s: %d keys, want %d", name, len(got), len(want))
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || g != w {
				t.Errorf("%s: key %s = %+v, want %+v", name, k, g, w)
				break
			}
		}
		if strings := n * 4 / 7; count["SET"] < strings-1 || count["SET"] > strings+1 {
			t.Errorf("%s: %d SET commands, want about %d (the strings)", name, count["SET"], strings)
		}
		if count["FUNCTION"] != 1 || count["SELECT"] < 2 {
			t.Errorf("%s: commands %v", name, count)
		}
	}
}
