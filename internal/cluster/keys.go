package cluster

import "github.com/abacusdb/abacus/internal/keyspace"

// Keys by hash slot (keyspace's per-slot index, on in cluster mode), for
// COUNTKEYSINSLOT, GETKEYSINSLOT and the keys a node drops when another
// node takes a slot over. Cluster mode has one database.

func keySlot(key []byte) int { return keyspace.HashSlot(key) }

// keysInSlot counts the keys of slot j.
func (c *Cluster) keysInSlot(j int) int { return c.e.KS.DBs[0].CountKeysInSlot(j) }

// getKeysInSlot lists up to count keys of slot j.
func (c *Cluster) getKeysInSlot(j, count int) [][]byte { return c.e.KS.DBs[0].KeysInSlot(j, count) }

// delKeysInSlot deletes the keys of slot j, each DEL propagated.
func (c *Cluster) delKeysInSlot(j int) int {
	db := c.e.KS.DBs[0]
	return db.DelKeysInSlot(j, func(key string) { c.e.PropagateDel(db, key) })
}
