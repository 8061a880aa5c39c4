package commands_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// ids returns the peer's client id on each server.
func (p *peer) ids() (a, r string) {
	p.t.Helper()
	return servertest.MustParse(p.t, p.a.Do("CLIENT", "ID")).Str, servertest.MustParse(p.t, p.r.Do("CLIENT", "ID")).Str
}

// doIDs sends args to both servers with "{a}"/"{r}" ... "{id}" replaced by
// the other peer's id on each, and compares the replies with those ids
// masked.
func (p *peer) doIDs(ia, ir string, args ...string) string {
	p.t.Helper()
	sub := func(id string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, "{id}", id)
		}
		return out
	}
	if len(args) > 0 {
		p.a.Write(servertest.Encode(sub(ia)...))
		p.r.Write(servertest.Encode(sub(ir)...))
	}
	a := strings.ReplaceAll(p.a.Read(), ":"+ia+"\r\n", ":ID\r\n")
	r := strings.ReplaceAll(p.r.Read(), ":"+ir+"\r\n", ":ID\r\n")
	if a != r {
		p.t.Errorf("%q\n abacus: %q\n  redis: %q", args, a, r)
	}
	return a
}

// flags is the flags and redir fields of the peer's CLIENT INFO on both.
func (p *peer) flags() {
	p.t.Helper()
	get := func(c *servertest.Conn) string {
		line := servertest.BulkBody(p.t, c.Do("CLIENT", "INFO"))
		_, f := servertest.ClientFields(p.t, line)
		redir := f["redir"]
		if redir != "-1" && redir != "0" {
			redir = "ID"
		}
		return f["flags"] + " redir=" + redir
	}
	if a, r := get(p.a), get(p.r); a != r {
		p.t.Errorf("CLIENT INFO flags: abacus %q redis %q", a, r)
	}
}

func TestTrackingDiffDefault(t *testing.T) {
	ps := pubsubPeers(t, 3)
	tr, w, other := ps[0], ps[1], ps[2]
	k := "trk:" + t.Name()
	tr.do("HELLO", "3")
	tr.do("CLIENT", "TRACKING", "ON")
	tr.flags()
	tr.do("CLIENT", "TRACKINGINFO")
	tr.do("CLIENT", "GETREDIR")
	w.do("SET", k, "1")
	tr.do("GET", k)
	tr.do("MGET", k+":a", k+":b")
	w.do("SET", k, "2")
	tr.next("invalidate " + k)
	w.do("SET", k, "3") // not read again: nothing
	w.do("MSET", k+":a", "x", k+":b", "y")
	tr.next("invalidate a")
	tr.next("invalidate b")
	// Its own write: the invalidation follows the reply.
	tr.do("GET", k)
	tr.do("SET", k, "4")
	tr.next("own invalidate")
	tr.do("GET", k)
	tr.do("MULTI")
	tr.do("INCR", k)
	tr.do("GET", k)
	tr.do("EXEC")
	tr.next("invalidate after EXEC")
	// Expiry and deletion invalidate; FLUSHALL sends one null.
	tr.do("GET", k)
	w.do("DEL", k)
	tr.next("invalidate on DEL")
	w.do("SET", k+":a", "1")
	tr.do("GET", k+":a")
	other.do("FLUSHALL")
	tr.next("flush invalidation")
	tr.do("GET", k)
	tr.do("FLUSHDB")
	tr.next("own flush invalidation")
	// A key that expires is invalidated when it is reclaimed: lazily by
	// the reading client (the invalidation follows its reply) or by the
	// active cycle before it (then it comes first): the two frames are
	// compared in either order.
	w.do("SET", k+":e", "x", "PX", "50")
	tr.do("GET", k+":e")
	time.Sleep(100 * time.Millisecond)
	tr.a.Write(servertest.Encode("GET", k+":e"))
	tr.r.Write(servertest.Encode("GET", k+":e"))
	a := []string{tr.a.Read(), tr.a.Read()}
	r := []string{tr.r.Read(), tr.r.Read()}
	sort.Strings(a)
	sort.Strings(r)
	if a[0] != r[0] || a[1] != r[1] {
		t.Errorf("GET of an expired key: abacus %q redis %q", a, r)
	}
	// Scripts: a script that reads makes its caller track the keys it
	// declared, not the ones its commands named; one that only writes,
	// none.
	tr.do("EVAL", "return redis.call('get', KEYS[1])", "1", k)
	w.do("SET", k, "5")
	tr.next("invalidate after script read")
	tr.do("EVAL", "redis.call('set', KEYS[1], 'w')", "2", k+":s1", k+":s2")
	w.do("MSET", k+":s1", "1", k+":s2", "1")
	tr.do("EVAL", "return redis.call('get', ARGV[1])", "2", k+":s1", k+":s2", k+":u")
	w.do("SET", k+":u", "1")
	w.do("MSET", k+":s2", "2", k+":s1", "2")
	tr.next("invalidate a declared key")
	tr.next("invalidate the other declared key")
	tr.do("CLIENT", "TRACKING", "OFF")
	tr.do("GET", k)
	w.do("SET", k, "6")
	tr.flags()
	tr.quiet()
	w.quiet()
}

func TestTrackingDiffModes(t *testing.T) {
	ps := pubsubPeers(t, 3)
	tr, w, redir := ps[0], ps[1], ps[2]
	k := "trk:" + t.Name()
	tr.do("HELLO", "3")

	// OPTIN: only reads after CLIENT CACHING YES are remembered.
	tr.do("CLIENT", "TRACKING", "ON", "OPTIN")
	tr.do("CLIENT", "TRACKINGINFO")
	tr.do("GET", k)
	w.do("SET", k, "1")
	tr.do("CLIENT", "CACHING", "YES")
	tr.do("CLIENT", "TRACKINGINFO")
	tr.do("GET", k)
	tr.do("CLIENT", "TRACKINGINFO") // the override lasted one command
	w.do("SET", k, "2")
	tr.next("optin invalidate")
	tr.do("CLIENT", "CACHING", "NO")
	tr.do("CLIENT", "TRACKING", "ON", "OPTOUT")
	tr.do("CLIENT", "TRACKING", "OFF")

	// OPTOUT: reads are remembered unless CLIENT CACHING NO.
	tr.do("CLIENT", "TRACKING", "ON", "OPTOUT", "NOLOOP")
	tr.do("CLIENT", "CACHING", "NO")
	tr.do("GET", k)
	w.do("SET", k, "3")
	tr.do("GET", k)
	w.do("SET", k, "4")
	tr.next("optout invalidate")
	tr.do("GET", k)
	tr.do("SET", k, "5") // NOLOOP: its own write says nothing
	tr.flags()
	tr.do("CLIENT", "TRACKING", "OFF")

	// BCAST with prefixes, NOLOOP excluding its own keys.
	tr.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", k+":a", "PREFIX", k+":b")
	tr.flags()
	tr.do("CLIENT", "TRACKINGINFO")
	w.do("SET", k+":a1", "1")
	tr.next("bcast a1")
	w.do("MSET", k+":b2", "1", k+":b1", "1", k+":c", "1")
	tr.next("bcast b1 b2")
	tr.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", k+":c", "NOLOOP")
	tr.do("SET", k+":c1", "x")
	w.do("SET", k+":c2", "x")
	tr.next("bcast c2")
	tr.do("CLIENT", "TRACKING", "OFF")

	// Redirection to a RESP2 subscriber of __redis__:invalidate.
	ia, ir := redir.ids()
	redir.do("SUBSCRIBE", "__redis__:invalidate")
	tr.doIDs(ia, ir, "CLIENT", "TRACKING", "ON", "REDIRECT", "{id}")
	tr.doIDs(ia, ir, "CLIENT", "GETREDIR")
	tr.flags()
	tr.do("GET", k)
	w.do("SET", k, "6")
	redir.next("redirected invalidate")
	tr.do("GET", k)
	w.do("FLUSHALL")
	redir.next("redirected flush")
	tr.do("CLIENT", "TRACKING", "OFF")
	tr.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", k)
	tr.do("CLIENT", "TRACKING", "OFF")
	redir.do("UNSUBSCRIBE")
	tr.quiet()
	w.quiet()
	redir.quiet()
}

// The redirection client goes away: a RESP3 tracking client hears of it
// once a key it read changes.
func TestTrackingDiffBrokenRedirect(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	tr := &peer{t: t, a: d.A, r: d.R}
	w := newPeer(t, inst, d.R.Addr)
	redir := newPeer(t, inst, d.R.Addr)
	k := "trk:" + t.Name()
	tr.do("HELLO", "3")
	ia, ir := redir.ids()
	tr.doIDs(ia, ir, "CLIENT", "TRACKING", "ON", "REDIRECT", "{id}")
	tr.do("GET", k)
	redir.a.C.Close()
	redir.r.C.Close()
	// Wait until both servers have seen the close.
	for _, c := range []*servertest.Conn{tr.a, tr.r} {
		for i := 0; i < 500 && strings.Count(servertest.BulkBody(t, c.Do("CLIENT", "LIST")), "\n") > 2; i++ {
			time.Sleep(2 * time.Millisecond)
		}
	}
	w.do("SET", k, "1")
	got := tr.doIDs(ia, ir) // reads the push from both, ids masked
	if !strings.Contains(got, "tracking-redir-broken") {
		t.Errorf("no tracking-redir-broken push: %q", got)
	}
	tr.flags()
	tr.quiet()
}

func TestTrackingDiffErrors(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	d.Lines(`
		CLIENT CACHING YES
		CLIENT CACHING maybe
		CLIENT TRACKING maybe
		CLIENT TRACKING ON PREFIX a
		CLIENT TRACKING ON BCAST OPTIN
		CLIENT TRACKING ON OPTIN OPTOUT
		CLIENT TRACKING ON REDIRECT notanumber
		CLIENT TRACKING ON REDIRECT 999999999
		CLIENT TRACKING ON BCAST PREFIX a PREFIX ab
		CLIENT TRACKING ON NOLOOP extra
		CLIENT TRACKING ON
		CLIENT CACHING YES
		CLIENT CACHING NO
		CLIENT CACHING maybe
		CLIENT TRACKING ON BCAST
		CLIENT TRACKING ON OPTIN
		CLIENT TRACKING OFF
		CLIENT TRACKING ON OPTIN
		CLIENT TRACKING ON OPTOUT
		CLIENT CACHING NO
		CLIENT TRACKING OFF
		CLIENT TRACKING ON BCAST PREFIX a
		CLIENT TRACKING ON BCAST PREFIX abc
		CLIENT TRACKING ON BCAST PREFIX b
		CLIENT TRACKINGINFO
		CLIENT TRACKING OFF
		CLIENT TRACKINGINFO
		CLIENT GETREDIR
	`)
}

// tracking-table-max-keys: past the limit, keys leave the table with an
// invalidation (which one is random, on both servers), and INFO counts
// the table.
func TestTrackingTableMaxKeys(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	for _, c := range []*servertest.Conn{d.A, d.R} {
		if r := c.Do("CONFIG", "SET", "tracking-table-max-keys", "2"); r != "+OK\r\n" {
			t.Fatal(r)
		}
		c.Do("HELLO", "3")
		c.Do("CLIENT", "TRACKING", "ON")
		for i := 0; i < 3; i++ {
			if r := c.Do("GET", "trkmax:"+string(rune('a'+i))); r != "_\r\n" {
				t.Fatalf("%s: GET: %q", c.Addr, r)
			}
		}
		// The next command finds the table over the limit and evicts a
		// key, invalidating it.
		c.Write(servertest.Encode("PING"))
		var sawInvalidate bool
		for i := 0; i < 2; i++ {
			r := c.Read()
			if strings.Contains(r, "invalidate") {
				sawInvalidate = true
			}
		}
		info := c.Do("INFO", "stats")
		if !sawInvalidate || !strings.Contains(info, "tracking_total_keys:2\r\n") {
			t.Errorf("%s: invalidated=%v, INFO:\n%s", c.Addr, sawInvalidate, info)
		}
		c.Do("CLIENT", "TRACKING", "OFF")
		c.Do("CONFIG", "SET", "tracking-table-max-keys", "1000000")
	}
}

// A table far over tracking-table-max-keys shrinks to the limit without
// further commands from anyone: the cron goes on evicting where one
// command's effort stopped, and every evicted key is invalidated once.
func TestTrackingTableShrinksIdle(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	const keys, limit = 250, 1
	for _, c := range []*servertest.Conn{d.A, d.R} {
		c.Do("HELLO", "3")
		c.Do("CLIENT", "TRACKING", "ON")
		for i := 0; i < keys; i++ {
			c.Do("GET", "trkidle:"+strconv.Itoa(i))
		}
		c.Write(servertest.Encode("CONFIG", "SET", "tracking-table-max-keys", strconv.Itoa(limit)))
		invalidated, ok := 0, false
		for invalidated < keys-limit || !ok {
			r := c.Read()
			switch {
			case r == "+OK\r\n":
				ok = true
			case strings.Contains(r, "invalidate"):
				invalidated++
			default:
				t.Fatalf("%s: %q", c.Addr, r)
			}
		}
		if r, err := c.ReadErr(300 * time.Millisecond); err == nil {
			t.Errorf("%s: more than %d invalidations: %q", c.Addr, keys-limit, r)
		}
		c.Do("CLIENT", "TRACKING", "OFF")
		c.Do("CONFIG", "SET", "tracking-table-max-keys", "1000000")
	}
}
