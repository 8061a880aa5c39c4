package commands_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The 64-byte Object keeps a string's bytes with spare capacity (APPEND
// grows into it) and a small hash inside the object. This stress test
// mixes the commands that copy, move or serialize values with the ones
// that write into a value's buffer in place, on a handful of keys, with
// collections forced between steps, and checks every reply and the whole
// keyspace against a model: any two keys sharing a buffer, or a journal
// copy sharing one with the live value, shows up as a value changing
// behind a write to another key.

type cellVal struct {
	hash bool
	s    string
	h    map[string]string
}

func (v *cellVal) clone() *cellVal {
	c := &cellVal{hash: v.hash, s: v.s}
	if v.h != nil {
		c.h = map[string]string{}
		for f, x := range v.h {
			c.h[f] = x
		}
	}
	return c
}

func (v *cellVal) render() string {
	if !v.hash {
		return "s:" + v.s
	}
	var p []string
	for f, x := range v.h {
		p = append(p, f+"="+x)
	}
	sort.Strings(p)
	return "h:" + strings.Join(p, ",")
}

func canonicalInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

func TestCellStressAgainstModel(t *testing.T) {
	// Collections all the time, not only at the forced ones below.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	inst := servertest.Start(t, servertest.WithConfig("dir", t.TempDir(), "enable-debug-command", "yes"))
	ctx := context.Background()
	c0 := redis.NewClient(&redis.Options{Addr: inst.Addr, MaxRetries: -1, DisableIdentity: true, Protocol: 2, PoolSize: 1})
	c1 := redis.NewClient(&redis.Options{Addr: inst.Addr, MaxRetries: -1, DisableIdentity: true, Protocol: 2, PoolSize: 1, DB: 1})
	defer c0.Close()
	defer c1.Close()
	model := [2]map[string]*cellVal{{}, {}}
	keys := []string{"a", "b", "c", "d"}
	r := rand.New(rand.NewPCG(7, 64))
	val := func() string {
		switch r.IntN(4) {
		case 0:
			return strconv.Itoa(r.IntN(2000) - 1000)
		case 1:
			return strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(60))
		default:
			return fmt.Sprintf("v%d", r.IntN(100000))
		}
	}
	key := func() string { return keys[r.IntN(len(keys))] }
	wrongType := "WRONGTYPE Operation against a key holding the wrong kind of value"
	check := func(step int, what string, err error, want string) {
		t.Helper()
		got := "<nil>"
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Fatalf("step %d %s: error %q, want %q", step, what, got, want)
		}
	}
	verify := func(step int) {
		t.Helper()
		for db, cl := range []*redis.Client{c0, c1} {
			ks, err := cl.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != len(model[db]) {
				t.Fatalf("step %d db %d: keys %v, model has %d", step, db, ks, len(model[db]))
			}
			for _, k := range ks {
				m := model[db][k]
				if m == nil {
					t.Fatalf("step %d db %d: unexpected key %q", step, db, k)
				}
				var got *cellVal
				if typ := cl.Type(ctx, k).Val(); typ == "hash" {
					got = &cellVal{hash: true, h: cl.HGetAll(ctx, k).Val()}
				} else {
					got = &cellVal{s: cl.Get(ctx, k).Val()}
				}
				if got.render() != m.render() {
					t.Fatalf("step %d db %d key %q:\n got  %.200s\n want %.200s", step, db, k, got.render(), m.render())
				}
			}
		}
	}
	for step := 0; step < 4000; step++ {
		m := model[0]
		k, k2, v := key(), key(), val()
		switch op := r.IntN(18); op {
		case 0:
			check(step, "SET", c0.Set(ctx, k, v, 0).Err(), "<nil>")
			m[k] = &cellVal{s: v}
		case 1, 2:
			n, err := c0.Append(ctx, k, v).Result()
			if cur := m[k]; cur != nil && cur.hash {
				check(step, "APPEND", err, wrongType)
				break
			}
			check(step, "APPEND", err, "<nil>")
			if m[k] == nil {
				m[k] = &cellVal{}
			}
			m[k].s += v
			if n != int64(len(m[k].s)) {
				t.Fatalf("step %d APPEND: %d, want %d", step, n, len(m[k].s))
			}
		case 3:
			off := r.IntN(40)
			_, err := c0.SetRange(ctx, k, int64(off), v).Result()
			if cur := m[k]; cur != nil && cur.hash {
				check(step, "SETRANGE", err, wrongType)
				break
			}
			check(step, "SETRANGE", err, "<nil>")
			if m[k] == nil {
				m[k] = &cellVal{}
			}
			b := []byte(m[k].s)
			if need := off + len(v); need > len(b) {
				b = append(b, make([]byte, need-len(b))...)
			}
			copy(b[off:], v)
			m[k].s = string(b)
		case 4:
			n, err := c0.Incr(ctx, k).Result()
			cur := m[k]
			switch {
			case cur == nil:
				check(step, "INCR", err, "<nil>")
				m[k] = &cellVal{s: "1"}
			case cur.hash:
				check(step, "INCR", err, wrongType)
			default:
				x, ok := canonicalInt(cur.s)
				if !ok {
					check(step, "INCR", err, "ERR value is not an integer or out of range")
					break
				}
				check(step, "INCR", err, "<nil>")
				cur.s = strconv.FormatInt(x+1, 10)
				if n != x+1 {
					t.Fatalf("step %d INCR: %d, want %d", step, n, x+1)
				}
			}
		case 5:
			_, err := c0.Copy(ctx, k, k2, 0, true).Result()
			switch {
			case k == k2:
				check(step, "COPY", err, "ERR source and destination objects are the same")
			case m[k] == nil:
				check(step, "COPY", err, "<nil>")
			default:
				check(step, "COPY", err, "<nil>")
				m[k2] = m[k].clone()
			}
		case 6:
			err := c0.Rename(ctx, k, k2).Err()
			if m[k] == nil {
				check(step, "RENAME", err, "ERR no such key")
				break
			}
			check(step, "RENAME", err, "<nil>")
			x := m[k]
			delete(m, k)
			m[k2] = x
		case 7:
			p, err := c0.Dump(ctx, k).Result()
			if m[k] == nil {
				check(step, "DUMP", err, "redis: nil")
				break
			}
			check(step, "DUMP", err, "<nil>")
			check(step, "RESTORE", c0.RestoreReplace(ctx, k2, 0, p).Err(), "<nil>")
			m[k2] = m[k].clone()
		case 8:
			old, err := c0.GetSet(ctx, k, v).Result()
			cur := m[k]
			switch {
			case cur == nil:
				check(step, "GETSET", err, "redis: nil")
			case cur.hash:
				check(step, "GETSET", err, wrongType)
				continue
			default:
				check(step, "GETSET", err, "<nil>")
				if old != cur.s {
					t.Fatalf("step %d GETSET: old %q, want %q", step, old, cur.s)
				}
			}
			m[k] = &cellVal{s: v}
		case 9:
			old, err := c0.GetDel(ctx, k).Result()
			cur := m[k]
			switch {
			case cur == nil:
				check(step, "GETDEL", err, "redis: nil")
			case cur.hash:
				check(step, "GETDEL", err, wrongType)
			default:
				check(step, "GETDEL", err, "<nil>")
				if old != cur.s {
					t.Fatalf("step %d GETDEL: %q, want %q", step, old, cur.s)
				}
				delete(m, k)
			}
		case 10, 11:
			f := "f" + strconv.Itoa(r.IntN(r.IntN(200)+1))
			err := c0.HSet(ctx, k, f, v).Err()
			if cur := m[k]; cur != nil && !cur.hash {
				check(step, "HSET", err, wrongType)
				break
			}
			check(step, "HSET", err, "<nil>")
			if m[k] == nil {
				m[k] = &cellVal{hash: true, h: map[string]string{}}
			}
			m[k].h[f] = v
		case 12:
			moved, err := c0.Move(ctx, k, 1).Result()
			check(step, "MOVE", err, "<nil>")
			want := m[k] != nil && model[1][k] == nil
			if moved != want {
				t.Fatalf("step %d MOVE: %v, want %v", step, moved, want)
			}
			if want {
				model[1][k] = m[k]
				delete(m, k)
			}
		case 13:
			check(step, "SWAPDB", c0.Do(ctx, "SWAPDB", 0, 1).Err(), "<nil>")
			model[0], model[1] = model[1], model[0]
		case 16: // the same bytes to two keys
			err := c0.MSet(ctx, k, v, k2, v).Err()
			check(step, "MSET", err, "<nil>")
			m[k], m[k2] = &cellVal{s: v}, &cellVal{s: v}
		case 17:
			off, bit := r.IntN(400), r.IntN(2)
			old, err := c0.SetBit(ctx, k, int64(off), bit).Result()
			cur := m[k]
			if cur != nil && cur.hash {
				check(step, "SETBIT", err, wrongType)
				break
			}
			check(step, "SETBIT", err, "<nil>")
			if cur == nil {
				cur = &cellVal{}
				m[k] = cur
			}
			b := []byte(cur.s)
			if need := off/8 + 1; need > len(b) {
				b = append(b, make([]byte, need-len(b))...)
			}
			mask := byte(1) << (7 - off%8)
			wasSet := b[off/8]&mask != 0
			if (old == 1) != wasSet {
				t.Fatalf("step %d SETBIT: old %d, model %v", step, old, wasSet)
			}
			if bit == 1 {
				b[off/8] |= mask
			} else {
				b[off/8] &^= mask
			}
			cur.s = string(b)
		case 14, 15:
			// A transactional script writes in place to values (APPEND,
			// SETRANGE, HSET, COPY, INCR), then fails: all is undone.
			body := "#!lua flags=transactional\n" +
				"redis.pcall('APPEND', KEYS[1], ARGV[1]) " +
				"redis.pcall('SETRANGE', KEYS[2], 0, ARGV[1]) " +
				"redis.pcall('HSET', KEYS[3], 'f1', ARGV[1]) " +
				"redis.pcall('COPY', KEYS[1], KEYS[4], 'REPLACE') " +
				"redis.pcall('APPEND', KEYS[4], ARGV[1]) " +
				"redis.pcall('INCR', KEYS[2]) " +
				"redis.pcall('RENAME', KEYS[3], KEYS[1]) " +
				"error('undo me')"
			ks := []string{key(), key(), key(), key()}
			err := c0.Eval(ctx, body, ks, v).Err()
			if err == nil || !strings.Contains(err.Error(), "undo me") {
				t.Fatalf("step %d script: %v", step, err)
			}
		}
		if step%97 == 0 {
			runtime.GC()
		}
		// Snapshots: BGSAVE copies values on first touch while the steps
		// after it write; DEBUG RELOAD takes every value through RDB.
		switch step % 400 {
		case 5:
			if err := c0.BgSave(ctx).Err(); err != nil && !strings.Contains(err.Error(), "in progress") {
				t.Fatalf("step %d BGSAVE: %v", step, err)
			}
		case 300:
			check(step, "DEBUG RELOAD", c0.Do(ctx, "DEBUG", "RELOAD").Err(), "<nil>")
		}
		if step%50 == 0 || step > 3900 {
			verify(step)
		}
	}
	for strings.Contains(c0.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress:1") {
		runtime.Gosched()
	}
}
