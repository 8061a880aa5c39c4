package commands_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// peer is one client connected to both servers: what it sends goes to
// both, and what each answers (or pushes) must be the same.
type peer struct {
	t    *testing.T
	a, r *servertest.Conn
}

func newPeer(t *testing.T, inst *servertest.Instance, redisAddr string) *peer {
	return &peer{t: t, a: inst.Raw(t), r: servertest.Dial(t, redisAddr)}
}

// do sends a command to both and compares the replies.
func (p *peer) do(args ...string) string {
	p.t.Helper()
	p.send(args...)
	return p.next(strings.Join(args, " "))
}

// next reads one frame (a reply or a pushed message) from both.
func (p *peer) next(what string) string {
	p.t.Helper()
	a, r := servertest.MaskHello(p.a.Read()), servertest.MaskHello(p.r.Read())
	if a != r {
		p.t.Errorf("%s\n abacus: %q\n  redis: %q", what, a, r)
	}
	return a
}

// send writes a command to both servers without reading a reply (one
// that blocks, or one whose reply is silenced).
func (p *peer) send(args ...string) {
	b := servertest.Encode(args...)
	p.a.Write(b)
	p.r.Write(b)
}

// waitBlocked waits, asking through p, until both servers count one
// blocked client (what another peer just sent blocked).
func (p *peer) waitBlocked(what string) {
	p.t.Helper()
	for _, c := range []*servertest.Conn{p.a, p.r} {
		for deadline := time.Now().Add(10 * time.Second); servertest.InfoField(servertest.BulkBody(p.t, c.Do("INFO", "clients")), "blocked_clients") != "1"; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				p.t.Fatalf("%s: %s did not block", c.Addr, what)
			}
		}
	}
}

// quiet checks that neither server has more to say.
func (p *peer) quiet() {
	p.t.Helper()
	for _, c := range []*servertest.Conn{p.a, p.r} {
		if got, err := c.ReadErr(50 * time.Millisecond); err == nil {
			p.t.Errorf("%s: unexpected frame %q", c.Addr, got)
		}
	}
}

func pubsubPeers(t *testing.T, n int) []*peer {
	d, inst := servertest.StartDiff(t)
	out := []*peer{{t: t, a: d.A, r: d.R}}
	for len(out) < n {
		out = append(out, newPeer(t, inst, d.R.Addr))
	}
	return out
}

func TestPubsubDiffBasics(t *testing.T) {
	ps := pubsubPeers(t, 4)
	pub, s2, s3, pat := ps[0], ps[1], ps[2], ps[3]
	ch := "psdiff:" + t.Name()
	s3.do("HELLO", "3")
	s2.do("SUBSCRIBE", ch, ch+":b", ch) // a repeated channel is confirmed again
	s2.next("confirm")
	s2.next("confirm")
	s3.do("SUBSCRIBE", ch)
	pat.do("PSUBSCRIBE", "psdiff:*", "psdiff:?")
	pat.next("confirm")
	pat.do("SUBSCRIBE", ch)

	// PUBLISH counts every delivery: s2, s3, pat's channel and one of
	// its patterns.
	pub.do("PUBLISH", ch, "hello")
	s2.next("message")
	s3.next("message")
	pat.next("message or pmessage")
	pat.next("message or pmessage")
	pub.do("PUBLISH", ch+":b", "")
	s2.next("message b")
	pat.next("pmessage b")
	pub.do("PUBLISH", "nobody:"+ch, "x")

	// Commands a RESP2 subscriber may and may not send.
	s2.do("GET", "x")
	s2.do("CLIENT", "LIST")
	s2.do("PING")
	s2.do("PING", "arg")
	s3.do("GET", "psdiff:nokey") // RESP3: anything goes
	s3.do("PING")
	s3.do("SUBSCRIBE", ch+":2")
	s3.do("PSUBSCRIBE", "psdiff:x*")
	clientFlags(t, s3, "flags", "sub", "psub", "ssub")
	s3.do("UNSUBSCRIBE", ch+":2") // unsubscribing from all goes in Redis's hash order
	s3.do("PUNSUBSCRIBE", "psdiff:x*")
	s2.do("SSUBSCRIBE", ch+":s")
	pub.do("SPUBLISH", ch+":s", "shard")
	s2.next("smessage")
	pub.do("PUBSUB", "NUMSUB", ch, ch+":b", "nobody")
	pub.do("PUBSUB", "SHARDNUMSUB", ch+":s", ch)
	for _, sub := range []string{"CHANNELS", "SHARDCHANNELS"} {
		// Redis lists channels in its hash table's order.
		a := servertest.MustStrings(t, pub.a.Do("PUBSUB", sub, "psdiff:*"))
		r := servertest.MustStrings(t, pub.r.Do("PUBSUB", sub, "psdiff:*"))
		sort.Strings(a)
		sort.Strings(r)
		if strings.Join(a, "|") != strings.Join(r, "|") {
			t.Errorf("PUBSUB %s: abacus %q redis %q", sub, a, r)
		}
	}

	// Unsubscribing: named, unknown, all, none left.
	s2.do("UNSUBSCRIBE", ch+":b", "never")
	s2.next("confirm")
	s2.do("UNSUBSCRIBE")
	s2.do("UNSUBSCRIBE")
	s2.do("PING") // still in the shard channel
	s2.do("SUNSUBSCRIBE")
	s2.do("SUNSUBSCRIBE")
	s2.do("PING")
	s2.do("GET", "x")
	pat.do("PUNSUBSCRIBE", "psdiff:?")
	pat.do("RESET")
	pat.do("PING")
	s3.do("UNSUBSCRIBE")
	s3.do("UNSUBSCRIBE")
	pub.do("PUBLISH", ch, "after")
	for _, p := range ps {
		p.quiet()
	}
}

// A client that publishes to its own channel sees the message before the
// reply, in RESP3; a transaction delivers in order; scripts may publish.
func TestPubsubDiffSelfAndTransactions(t *testing.T) {
	ps := pubsubPeers(t, 2)
	self, sub := ps[0], ps[1]
	ch := "psdiff:" + t.Name()
	self.do("HELLO", "3")
	self.do("SUBSCRIBE", ch)
	self.do("PUBLISH", ch, "to myself")
	self.next("publish reply")
	self.do("UNSUBSCRIBE", ch)
	sub.do("SUBSCRIBE", ch)
	self.do("MULTI")
	self.do("PUBLISH", ch, "one")
	self.do("SET", "psdiff:k", "v")
	self.do("PUBLISH", ch, "two")
	self.do("EXEC")
	sub.next("one")
	sub.next("two")
	self.do("EVAL", "redis.call('publish', KEYS[1], 'from lua'); return redis.call('publish', KEYS[1], 'again')", "1", ch)
	sub.next("from lua")
	sub.next("again")
	self.do("EVAL", "return redis.call('subscribe', 'x')", "0")
	self.do("MULTI")
	self.do("SUBSCRIBE", ch+":m")
	self.do("SSUBSCRIBE", ch+":s")
	self.do("EXEC")
	self.do("RESET")
	sub.do("PUNSUBSCRIBE")
	sub.do("UNSUBSCRIBE")
	self.quiet()
	sub.quiet()
}

// Random subscriptions and publishes over a few channels and patterns:
// each publish's count and every subscriber's messages must match.
func TestPubsubDiffRandom(t *testing.T) {
	ps := pubsubPeers(t, 5)
	rng := rand.New(rand.NewSource(7))
	prefix := "psrand:" + t.Name() + ":"
	channels := []string{"a", "b", "ab", "b.c"}
	patterns := []string{"a*", "?b", "b.[a-c]", "*"}
	// want tracks each client's subscriptions, to know how many frames
	// each publish pushes to it.
	type state struct{ subs, pats map[string]bool }
	st := make([]state, len(ps))
	for i := range st {
		st[i] = state{map[string]bool{}, map[string]bool{}}
	}
	pubOnly := ps[0]
	for i := 1; i < len(ps); i++ {
		if i%2 == 0 {
			ps[i].do("HELLO", "3")
		}
	}
	for step := 0; step < 300; step++ {
		i := 1 + rng.Intn(len(ps)-1)
		p, s := ps[i], &st[i]
		switch rng.Intn(5) {
		case 0:
			c := channels[rng.Intn(len(channels))]
			p.do("SUBSCRIBE", prefix+c)
			s.subs[c] = true
		case 1:
			c := channels[rng.Intn(len(channels))]
			p.do("UNSUBSCRIBE", prefix+c)
			delete(s.subs, c)
		case 2:
			pt := patterns[rng.Intn(len(patterns))]
			p.do("PSUBSCRIBE", prefix+pt)
			s.pats[pt] = true
		case 3:
			pt := patterns[rng.Intn(len(patterns))]
			p.do("PUNSUBSCRIBE", prefix+pt)
			delete(s.pats, pt)
		default:
			c := channels[rng.Intn(len(channels))]
			msg := fmt.Sprint("m", step)
			pubOnly.do("PUBLISH", prefix+c, msg)
			for j := 1; j < len(ps); j++ {
				n := 0
				if st[j].subs[c] {
					n++
				}
				for pt := range st[j].pats {
					if globMatch(pt, c) {
						n++
					}
				}
				// Several frames to one client come in an order that
				// depends on Redis's hash tables: compare them as a set.
				var a, r []string
				for k := 0; k < n; k++ {
					a = append(a, ps[j].a.Read())
					r = append(r, ps[j].r.Read())
				}
				sort.Strings(a)
				sort.Strings(r)
				if strings.Join(a, "|") != strings.Join(r, "|") {
					t.Fatalf("step %d client %d: abacus %q redis %q", step, j, a, r)
				}
			}
		}
	}
	for _, p := range ps {
		p.quiet()
	}
}

// clientFlags compares the named fields of the peer's CLIENT INFO.
func clientFlags(t *testing.T, p *peer, fields ...string) {
	t.Helper()
	get := func(c *servertest.Conn) string {
		_, f := servertest.ClientFields(t, servertest.BulkBody(t, c.Do("CLIENT", "INFO")))
		var out []string
		for _, name := range fields {
			out = append(out, name+"="+f[name])
		}
		return strings.Join(out, " ")
	}
	if a, r := get(p.a), get(p.r); a != r {
		t.Errorf("CLIENT INFO: abacus %q redis %q", a, r)
	}
}

// globMatch is the test's model of the few patterns it uses.
func globMatch(pat, s string) bool {
	switch pat {
	case "a*":
		return strings.HasPrefix(s, "a")
	case "?b":
		return len(s) == 2 && s[1] == 'b'
	case "b.[a-c]":
		return len(s) == 3 && strings.HasPrefix(s, "b.") && s[2] >= 'a' && s[2] <= 'c'
	case "*":
		return true
	}
	panic(pat)
}

// CLIENT REPLY OFF silences replies, not pub/sub: confirmations and
// messages still arrive, in RESP2 and RESP3 (Redis's CLIENT_PUSHING).
func TestPubSubReplyOffDiff(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		ps := pubsubPeers(t, 2)
		sub, pub := ps[0], ps[1]
		sub.do("HELLO", proto)
		sub.send("CLIENT", "REPLY", "OFF")
		sub.send("PING")
		sub.send("SUBSCRIBE", "off"+proto+":ch", "off"+proto+":ch2")
		sub.next("RESP" + proto + " subscribe off:ch")
		sub.next("RESP" + proto + " subscribe off:ch2")
		sub.send("SSUBSCRIBE", "off"+proto+":sh")
		sub.next("RESP" + proto + " ssubscribe off:sh")
		pub.do("PUBLISH", "off"+proto+":ch", "m")
		sub.next("RESP" + proto + " message")
		pub.do("SPUBLISH", "off"+proto+":sh", "s")
		sub.next("RESP" + proto + " smessage")
		sub.send("UNSUBSCRIBE", "off"+proto+":ch")
		sub.next("RESP" + proto + " unsubscribe off:ch")
		sub.send("PING")
		sub.quiet()
	}
}

// CONFIG SET maxmemory below what is used evicts at once, as Redis's
// does, not before the next command: a subscriber hears of the evicted
// key with no other command sent.
func TestEvictedOnConfigSetDiff(t *testing.T) {
	ps := pubsubPeers(t, 2)
	sub, c := ps[0], ps[1]
	c.do("FLUSHALL")
	c.do("CONFIG", "SET", "notify-keyspace-events", "Ee")
	c.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	sub.do("PSUBSCRIBE", "__keyevent@*__:evicted")
	c.do("SET", "evfoo", "bar")
	c.do("CONFIG", "SET", "maxmemory", "1")
	sub.next("evicted by CONFIG SET maxmemory")
	c.do("CONFIG", "SET", "maxmemory", "0")
	c.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	c.do("CONFIG", "SET", "notify-keyspace-events", "")
	sub.quiet()
}

// SWAPDB wakes an XREADGROUP whose stream the swap took away, or replaced
// by another type: it is answered that the key no longer exists.
func TestSwapdbWakesXreadgroupDiff(t *testing.T) {
	ps := pubsubPeers(t, 2)
	rd, c := ps[0], ps[1]
	for _, other := range [][]string{nil, {"LPUSH", "sws", "e1"}} {
		c.do("SELECT", "4")
		c.do("FLUSHDB")
		if other != nil {
			c.do(other...)
		}
		c.do("SELECT", "9")
		c.do("DEL", "sws")
		c.do("XADD", "sws", "666", "f", "v")
		c.do("XGROUP", "CREATE", "sws", "g", "$")
		rd.do("SELECT", "9")
		rd.send("XREADGROUP", "GROUP", "g", "Alice", "BLOCK", "0", "STREAMS", "sws", ">")
		c.waitBlocked("XREADGROUP")
		c.do("SWAPDB", "4", "9")
		rd.next(fmt.Sprintf("XREADGROUP after SWAPDB (other db: %v)", other))
	}
	c.do("SELECT", "4")
	c.do("FLUSHDB")
	c.do("SELECT", "9")
	c.do("FLUSHDB")
}
