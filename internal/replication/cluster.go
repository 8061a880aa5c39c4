package replication

// What the cluster layer (internal/cluster) asks of replication: a
// cluster replica follows its primary with the same link REPLICAOF
// starts, is promoted when it wins an election, and reports its offset
// and how old its data is. All of it is called under the server lock.

// Promote makes a replica a primary that continues its history, as
// REPLICAOF NO ONE does; a primary is left as it is.
func (p *Primary) Promote() {
	if p.link != nil {
		p.promote()
	}
}

// Following reports the primary's address while the server is a replica.
func (p *Primary) Following() (host string, port int, ok bool) {
	if p.link == nil {
		return "", 0, false
	}
	return p.link.host, p.link.port, true
}

// Offset is master_repl_offset, which a replica also keeps as the bytes
// of its primary's stream it applied.
func (p *Primary) Offset() int64 { return p.offset }

// LinkUp reports whether a replica's link to its primary is streaming.
func (p *Primary) LinkUp() bool { return p.link != nil && p.link.state == "connected" }

// LastIO is the unix ms of the last byte from the primary (0: none yet,
// or not a replica): a replica's data is as old as now minus it.
func (p *Primary) LastIO() int64 {
	if p.link == nil {
		return 0
	}
	return p.link.lastIO
}

// HoldPings keeps the stream's PINGs back until the given unix ms (0
// ends it): during a cluster manual failover the offset this primary
// reported must stay its last, as Redis sends no PING then.
func (p *Primary) HoldPings(until int64) { p.noPingUntil = until }
