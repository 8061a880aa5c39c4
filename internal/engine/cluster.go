package engine

// ClusterView is what the engine asks of the cluster layer to route a
// command in cluster mode (cluster-enabled yes). The cluster layer owns
// the node table, the bus and the slot map; the engine owns the decision
// a command's keys lead to (Redis's getNodeByQuery: -MOVED, -ASK,
// -TRYAGAIN, -CROSSSLOT, -CLUSTERDOWN). Both methods are called under the
// server lock and must not block.
type ClusterView interface {
	// Route says who serves a hash slot (0..16383) as this node sees it.
	Route(slot int) SlotRoute
	// OK reports whether the cluster state is ok; false answers
	// -CLUSTERDOWN unless cluster-allow-reads-when-down lets reads by.
	OK() bool
}

// SlotRoute is one hash slot's routing as this node sees it.
type SlotRoute struct {
	// Served: some node owns the slot (false answers -CLUSTERDOWN Hash
	// slot not served).
	Served bool
	// Self: this node owns the slot.
	Self bool
	// OfMyPrimary: this node is a replica of the slot's owner (a READONLY
	// client's reads are served here).
	OfMyPrimary bool
	// Addr is the owner's "ip:port" for -MOVED.
	Addr string
	// MigratingTo is the target's "ip:port" while this node migrates the
	// slot away (-ASK for keys no longer here); empty otherwise.
	MigratingTo string
	// Importing: this node imports the slot (commands flagged ASKING are
	// served).
	Importing bool
	// PAddr and PMigratingTo are Addr and MigratingTo with the nodes'
	// plaintext ports, set when the cluster bus is TLS (tls-cluster):
	// then Addr names TLS ports and a plaintext client is sent to these,
	// as Redis sends it to the node's pport.
	PAddr, PMigratingTo string
}

// redirAddr is the address a redirect names for s: the plaintext one
// when the cluster announces TLS ports and s is not a TLS client.
func redirAddr(s *Session, addr, paddr string) string {
	if paddr != "" && (s == nil || !s.TLS) {
		return paddr
	}
	return addr
}

// SetCluster installs the cluster layer; nil leaves cluster mode off.
// Called once at startup, before clients connect. It turns on the
// keyspace's per-slot key index (keyspace.IndexSlots), which CLUSTER
// COUNTKEYSINSLOT/GETKEYSINSLOT and slot migration read.
func (e *Env) SetCluster(v ClusterView) {
	e.cluster = v
	if v != nil {
		e.KS.IndexSlots()
	}
}

// Cluster returns the installed cluster layer, or nil.
func (e *Env) Cluster() ClusterView { return e.cluster }
