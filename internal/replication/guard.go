package replication

import (
	"fmt"
	"strings"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// The refusals replication adds to command execution, with Redis 7.0's
// texts, and the cron's housekeeping: replicas that stopped ACKing, the
// backlog of a primary left without replicas.

const (
	errNoReplicas = "NOREPLICAS Not enough good replicas to write."
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// refusal is installed as the engine's SetReplRefusal: a primary refuses
// writes while fewer than min-replicas-to-write replicas ACKed within
// min-replicas-max-lag seconds; a replica whose link is not up refuses
// what may not see stale data when replica-serve-stale-data is no.
func (p *Primary) refusal(s *engine.Session, cmd *engine.Command) string {
	if strings.Contains(s.Flags, "M") {
		return ""
	}
	cfg := p.e.Cfg
	if p.link == nil {
		want, lag := cfg.Int(config.MinReplicasToWrite), cfg.Int(config.MinReplicasMaxLag)
		if want > 0 && lag > 0 && s.EffectiveFlags(cmd)&engine.FlagWrite != 0 && int64(p.goodReplicas()) < want {
			return errNoReplicas
		}
		return ""
	}
	if p.link.state != "connected" && !cfg.Bool(config.ReplicaServeStaleData) && !s.ServesStale(cmd) {
		return errMasterDown
	}
	return ""
}

// goodReplicas counts the online replicas whose last ACK is at most
// min-replicas-max-lag seconds old (INFO min_slaves_good_slaves).
func (p *Primary) goodReplicas() int {
	lag := p.e.Cfg.Int(config.MinReplicasMaxLag)
	now := p.e.Clock.NowMs()
	n := 0
	for _, r := range p.live() {
		if r.online && (now-r.ackAt)/1000 <= lag {
			n++
		}
	}
	return n
}

// housekeeping runs once a second under the lock: it drops replicas that
// sent nothing for repl-timeout seconds (those that speak PSYNC ACK every
// second), and frees the backlog of a primary that has had no replica for
// repl-backlog-ttl seconds, as Redis's replicationCron does.
func (p *Primary) housekeeping() {
	e := p.e
	now := e.Clock.NowMs()
	timeout := e.Cfg.Int(config.ReplTimeout) * 1000
	for _, r := range p.live() {
		if r.online && r.psync && now-r.ackAt > timeout {
			e.Log.Warn(fmt.Sprintf("Disconnecting timedout replica (streaming sync): %s", p.name(r)))
			r.s.Killed.Store(true)
			e.Host.Kill(r.s)
		}
	}
	if len(p.live()) > 0 || p.link != nil {
		p.alone = 0
		return
	}
	if p.alone == 0 {
		p.alone = now
	}
	ttl := e.Cfg.Int(config.ReplBacklogTTL)
	if p.backlog != nil && ttl > 0 && now-p.alone >= ttl*1000 {
		// A new history: nobody can continue the old one from us now.
		e.SetPropTap(nil)
		p.backlog = nil
		e.Stats.Info.NewReplID()
		p.replid2, p.off2 = "", -1
		e.Log.Info(fmt.Sprintf("Replication backlog freed after %d seconds without connected replicas.", ttl))
	}
}
