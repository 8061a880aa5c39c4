package commands_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// pipe sends cmds to both servers in one write, as a client pipelines
// them, and compares the next n frames (the replies, then what was pushed
// with them).
func (p *peer) pipe(n int, cmds ...[]string) {
	p.t.Helper()
	b := servertest.Cat(cmds...)
	p.a.Write(b)
	p.r.Write(b)
	for i := 0; i < n; i++ {
		p.next("pipeline frame " + string(rune('0'+i)))
	}
}

// BCAST invalidations go out once per event-loop round, as Redis's
// beforeSleep sends them: the writes of a pipeline read in one round
// make one message per prefix with all their keys (sorted), not one per
// command; a MULTI/EXEC makes one too, whether it came in one round or
// several. Checked with the event loop and with a goroutine per client.
func TestTrackingDiffBcastRound(t *testing.T) {
	for _, loop := range []string{"yes", "no"} {
		t.Run("io-event-loop="+loop, func(t *testing.T) {
			d, inst := servertest.StartDiff(t, servertest.WithConfig("io-event-loop", loop))
			tr := &peer{t: t, a: d.A, r: d.R}
			w := newPeer(t, inst, d.R.Addr)
			nl := newPeer(t, inst, d.R.Addr)
			k := "trkround:" + strings.ReplaceAll(t.Name(), "/", ":") + ":"
			tr.do("HELLO", "3")
			tr.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", k+"a", "PREFIX", k+"b")
			nl.do("HELLO", "3")
			nl.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", k+"a", "NOLOOP")

			// Another client's pipeline: one message per prefix, a key
			// written twice named once, a key under no prefix left out.
			w.pipe(6,
				[]string{"SET", k + "a2", "1"},
				[]string{"SET", k + "b1", "1"},
				[]string{"SET", k + "a1", "1"},
				[]string{"INCR", k + "b1"},
				[]string{"SET", k + "c", "1"},
				[]string{"DEL", k + "a2"},
			)
			tr.next("prefix a: a1 a2")
			tr.next("prefix b: b1")
			nl.next("prefix a: a1 a2")
			tr.quiet()
			nl.quiet()

			// MULTI/EXEC in one write, then across rounds.
			w.pipe(4,
				[]string{"MULTI"},
				[]string{"SET", k + "a3", "1"},
				[]string{"SET", k + "a1", "2"},
				[]string{"EXEC"},
			)
			tr.next("exec in one round")
			nl.next("exec in one round")
			w.do("MULTI")
			w.do("SET", k+"b2", "1")
			w.do("SET", k+"a4", "1")
			tr.quiet()
			w.do("EXEC")
			tr.next("exec: prefix a")
			tr.next("exec: prefix b")
			nl.next("exec: prefix a")

			// The tracking client's own pipeline: the message follows its
			// replies. A NOLOOP client's own keys are left out of its
			// message, others' in the same round kept.
			tr.pipe(3,
				[]string{"SET", k + "a5", "x"},
				[]string{"GET", k + "a5"},
			)
			nl.next("tr's keys")
			nl.pipe(2,
				[]string{"SET", k + "a6", "x"},
				[]string{"SET", k + "a7", "x"},
			)
			tr.next("nl's keys")
			nl.quiet()
			tr.quiet()
			w.quiet()
		})
	}
}

// A client served after blocking hears of its own write after its reply:
// BLMOVE into a list it tracks answers the element, then the invalidation
// (NOLOOP: no invalidation at all). Checked with the event loop and with a
// goroutine per client.
func TestTrackingDiffServedBlocked(t *testing.T) {
	for _, loop := range []string{"yes", "no"} {
		t.Run("io-event-loop="+loop, func(t *testing.T) {
			d, inst := servertest.StartDiff(t, servertest.WithConfig("io-event-loop", loop))
			w := &peer{t: t, a: d.A, r: d.R}
			for _, opts := range [][]string{nil, {"NOLOOP"}} {
				tr := newPeer(t, inst, d.R.Addr)
				k := "trkblk:" + strings.ReplaceAll(t.Name(), "/", ":") + strings.Join(opts, "") + ":"
				tr.do("HELLO", "3")
				tr.do(append([]string{"CLIENT", "TRACKING", "ON"}, opts...)...)
				w.do("RPUSH", k+"dst", "a")
				tr.do("LRANGE", k+"dst", "0", "-1")
				tr.send("BLMOVE", k+"src", k+"dst", "LEFT", "LEFT", "0")
				w.waitBlocked("BLMOVE")
				w.do("RPUSH", k+"src", "foo")
				tr.next("BLMOVE's reply")
				if len(opts) == 0 {
					tr.next("the invalidation of " + k + "dst")
				}
				tr.quiet()
			}
		})
	}
}
