package replication

import (
	"fmt"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// FAILOVER, a coordinated hand-over from this primary to one of its
// replicas, as Redis 7.0 does it:
//
//  1. waiting-for-sync: writes are paused (as CLIENT PAUSE WRITE) and the
//     stream's PINGs held back, so the offset stops moving; the primary
//     waits for the target (or, without TO, any replica) to acknowledge
//     exactly its offset.
//  2. failover-in-progress: the primary becomes a replica of the target
//     and its PSYNC carries a FAILOVER argument; the target, seeing its
//     own replid, promotes itself and answers +CONTINUE under its new id.
//  3. Any +CONTINUE or +FULLRESYNC ends the failover and the pause; an
//     error reply aborts it and the server is a primary again.
//
// TIMEOUT ends the wait: without FORCE the failover is aborted, with it
// the hand-over starts anyway. ABORT ends a failover in either state.
// The pause shares CLIENT PAUSE's slot: CLIENT UNPAUSE lifts it too.

// Failover states, as INFO replication names them.
const (
	noFailover         = "no-failover"
	failoverWaitSync   = "waiting-for-sync"
	failoverInProgress = "failover-in-progress"
)

// failoverPauseUntil is "until the failover ends": CLIENT PAUSE's slot
// holds a unix ms shifted left by one bit.
const failoverPauseUntil = 1 << 61

type failover struct {
	state string // "" is noFailover
	// host and port are the target: given with TO, or the first replica
	// found caught up.
	host  string
	port  int
	end   int64 // unix ms the wait ends (0: none)
	force bool
	timer *time.Timer
}

func init() {
	engine.Register(&engine.Command{Name: "failover", Arity: -1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagStale,
		Group: "server", Summary: "Start a coordinated failover between this server and one of its replicas.", Since: "6.2.0",
		Complexity: "O(1)", Handler: cmdFailover})
}

func (p *Primary) failoverState() string {
	if p.fo.state == "" {
		return noFailover
	}
	return p.fo.state
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]
func cmdFailover(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if c.Env.Cfg.Bool(config.ClusterEnabled) {
		c.Error("ERR FAILOVER not allowed in cluster mode.")
		return
	}
	if len(c.Args) == 2 && ascii.EqualFold(c.Args[1], "abort") {
		if p.fo.state == "" {
			c.Error("ERR No failover in progress.")
			return
		}
		p.abortFailover("Failover manually aborted")
		c.W.OK()
		return
	}
	var timeout, port int64
	var host string
	hasHost, force := false, false
	for j := 1; j < len(c.Args); j++ {
		a := c.Args[j]
		switch {
		case ascii.EqualFold(a, "timeout") && j+1 < len(c.Args) && timeout == 0:
			v, ok := num.ParseInt(c.Args[j+1])
			if !ok {
				c.Error(engine.ErrNotInt)
				return
			}
			if v <= 0 {
				c.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = v
			j++
		case ascii.EqualFold(a, "to") && j+2 < len(c.Args) && !hasHost:
			v, ok := num.ParseInt(c.Args[j+2])
			if !ok {
				c.Error(engine.ErrNotInt)
				return
			}
			host, port, hasHost = string(c.Args[j+1]), v, true
			j += 2
		case ascii.EqualFold(a, "force") && !force:
			force = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	switch {
	case p.fo.state != "":
		c.Error("ERR FAILOVER already in progress.")
		return
	case p.link != nil:
		c.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	case len(p.live()) == 0:
		c.Error("ERR FAILOVER requires connected replicas.")
		return
	case force && (timeout == 0 || !hasHost):
		c.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if hasHost {
		r := p.findReplica(host, int(port))
		if r == nil {
			c.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if !r.online {
			c.Error("ERR FAILOVER target replica is not online.")
			return
		}
		p.fo.host, p.fo.port = host, int(port)
		c.Env.Log.Info(fmt.Sprintf("FAILOVER requested to %s:%d.", host, port))
	} else {
		c.Env.Log.Info("FAILOVER requested to any replica.")
	}
	if timeout > 0 {
		p.fo.end = c.Now + timeout
		p.fo.timer = time.AfterFunc(time.Duration(timeout)*time.Millisecond, func() {
			p.lock.Lock()
			defer p.lock.Unlock()
			p.updateFailover()
		})
	}
	p.fo.force = force
	p.fo.state = failoverWaitSync
	c.Env.Host.Pause(engine.PauseByFailover, failoverPauseUntil, true)
	c.W.OK()
	p.updateFailover()
}

// findReplica is the live replica that announced host:port (its
// ip-address, else its connection's address, and its listening-port).
func (p *Primary) findReplica(host string, port int) *replica {
	for _, r := range p.live() {
		if strings.EqualFold(p.ip(r), host) && r.port == port {
			return r
		}
	}
	return nil
}

// updateFailover moves a waiting failover on: to the hand-over when the
// target caught up (or the timeout passed with FORCE), or to its end when
// the timeout passed without. It runs when the failover starts, on each
// ACK, on the cron and at the timeout, under the server lock.
func (p *Primary) updateFailover() {
	f := &p.fo
	if f.state != failoverWaitSync {
		return
	}
	if f.end > 0 && f.end <= p.e.Clock.NowMs() {
		if f.force {
			p.e.Log.Info(fmt.Sprintf("FAILOVER to %s:%d time out exceeded, failing over.", f.host, f.port))
			p.handOver()
			return
		}
		p.abortFailover("Replica never caught up before timeout")
		return
	}
	var r *replica
	if f.host != "" {
		r = p.findReplica(f.host, f.port)
	} else {
		for _, c := range p.live() {
			if c.ackOff == p.offset {
				r = c
				f.host, f.port = p.ip(c), c.port
				break
			}
		}
	}
	if r != nil && r.ackOff == p.offset {
		p.e.Log.Info(fmt.Sprintf("Failover target %s:%d is synced, failing over.", f.host, f.port))
		p.handOver()
	}
}

// handOver makes this server a replica of the target; the link's PSYNC
// carries FAILOVER while the state says so. Our replicas stay attached
// until the target's answer changes our history.
func (p *Primary) handOver() {
	p.fo.state = failoverInProgress
	p.follow(p.fo.host, p.fo.port)
}

// abortFailover ends a failover with err logged; a server that already
// became a replica is a primary again.
func (p *Primary) abortFailover(err string) {
	f := &p.fo
	if f.state == "" {
		return
	}
	if f.host != "" {
		p.e.Log.Info(fmt.Sprintf("FAILOVER to %s:%d aborted: %s", f.host, f.port, err))
	} else {
		p.e.Log.Info("FAILOVER to any replica aborted: " + err)
	}
	if f.state == failoverInProgress && p.link != nil {
		p.promote()
	}
	p.clearFailover()
}

// clearFailover ends the failover's state and its pause.
func (p *Primary) clearFailover() {
	if p.fo.timer != nil {
		p.fo.timer.Stop()
	}
	p.fo = failover{}
	p.e.Host.Unpause(engine.PauseByFailover)
}

// failoverRequest handles PSYNC's FAILOVER argument on the target: a
// primary handing over to us, whose history is ours (its replid is our
// replid), makes us a primary before its PSYNC continues. It reports
// false when it replied with an error.
func (p *Primary) failoverRequest(c *engine.Ctx) bool {
	if string(c.Args[1]) != c.Env.Stats.Info.ReplID() {
		c.Error("ERR PSYNC FAILOVER replid must match my replid.")
		return false
	}
	if p.link != nil {
		p.promote()
		c.Env.Log.Info("MASTER MODE enabled (failover request from '" + c.S.Addr + "')")
	}
	c.Env.Log.Info(fmt.Sprintf("Failover request received for replid %s, accepting the request from %s", c.Args[1], c.S.Addr))
	return true
}

// failoverAnswered ends the hand-over on the target's answer to PSYNC
// FAILOVER: a sync (full or partial) completes it, anything else aborts
// it and makes this server a primary again (errStopped: the link ends).
func (p *Primary) failoverAnswered(l *link, reply string) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	if p.link != l {
		return errStopped
	}
	if p.fo.state != failoverInProgress {
		return nil
	}
	if strings.HasPrefix(reply, "+FULLRESYNC") || strings.HasPrefix(reply, "+CONTINUE") {
		p.clearFailover()
		return nil
	}
	p.abortFailover("Failover target rejected psync request")
	return errStopped
}
