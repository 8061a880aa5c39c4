package engine

import (
	"strconv"

	"github.com/abacusdb/abacus/internal/resp"
)

func init() {
	Register(
		&Command{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Group: "server",
			Summary: "Listens for all requests received by the server in real-time.", Since: "1.0.0", Handler: cmdMonitor},
	)
}

// MONITOR: from now on the client receives a line for every command the
// server runs (its own included), until it disconnects or sends RESET.
func cmdMonitor(c *Ctx) {
	if c.S.DenyBlocking {
		// Inside EXEC (or a script) every command owes one reply.
		c.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.S.Monitor {
		return // Redis ignores a second MONITOR, without a reply
	}
	c.S.Monitor = true
	c.Env.monitors = append(c.Env.monitors, c.S)
	c.W.OK()
}

func (e *Env) removeMonitor(s *Session) {
	s.Monitor = false
	for i, m := range e.monitors {
		if m == s {
			e.monitors = append(e.monitors[:i], e.monitors[i+1:]...)
			return
		}
	}
}

// Disconnected is called by the server, with its lock held, when a
// client's connection is gone: the client leaves every registry that holds
// it (MONITOR, subscriptions, a transaction's WATCHes).
func (e *Env) Disconnected(s *Session) {
	if s.Monitor {
		e.removeMonitor(s)
	}
	if s.subs != nil {
		e.unsubscribeAll(s)
	}
	s.closed = true
	e.DisableTracking(s)
	e.dropTx(s)
}

// FeedMonitors sends the command just run to every monitoring client in
// Redis's format: +<sec>.<usec> [<db> <ip:port>] "arg" "arg" ...
// QUIT is not shown: Redis handles it before the command is called.
func (e *Env) FeedMonitors(s *Session, cmd *Command, args [][]byte) {
	if cmd.Name == "quit" {
		return
	}
	us := e.Clock.NowUs()
	b := make([]byte, 0, 64+len(s.Addr)+16*len(args))
	b = append(b, '+')
	b = strconv.AppendInt(b, us/1e6, 10)
	b = append(b, '.')
	frac := us % 1e6
	for d := int64(100000); d > 1 && frac < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, frac, 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(s.DB), 10)
	b = append(b, ' ')
	b = append(b, s.Addr...)
	b = append(b, "] "...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = resp.AppendRepr(b, a)
	}
	b = append(b, '\r', '\n')
	for _, m := range e.monitors {
		if m.Push != nil && m.Reply != ReplyOff {
			m.Push(b)
		}
	}
}

// Monitored reports whether a client is in MONITOR mode.
func (e *Env) Monitored() bool { return len(e.monitors) > 0 }
