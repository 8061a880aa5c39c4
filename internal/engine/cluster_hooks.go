package engine

import "github.com/abacusdb/abacus/internal/keyspace"

// ClusterPublisher is implemented by a cluster layer that carries a
// client's PUBLISH to every node of the cluster and its SPUBLISH to the
// nodes of this node's shard (Redis's clusterPropagatePublish).
type ClusterPublisher interface {
	Publish(channel, msg []byte)
	PublishShard(channel, msg []byte)
}

// PublishCluster hands a client's PUBLISH or SPUBLISH to the cluster bus
// when cluster mode is on; the local delivery is Publish's.
func (e *Env) PublishCluster(kind SubKind, channel, msg []byte) {
	p, ok := e.cluster.(ClusterPublisher)
	if !ok {
		return
	}
	if kind == SubShard {
		p.PublishShard(channel, msg)
	} else {
		p.Publish(channel, msg)
	}
}

// PropagateDel puts a DEL of key in the effect stream (AOF, replicas) for
// a key the cluster layer deleted outside any command: the keys of a slot
// another node took over (Redis's delKeysInSlot propagates them so).
func (e *Env) PropagateDel(db *keyspace.DB, key string) { e.propExpired(db, key) }
