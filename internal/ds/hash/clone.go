package hash

// Clone returns a deep copy of h in the same encoding, field expiry times
// included (COPY, as Redis 7.4's hashTypeDup keeps them). Fields that have
// expired but were not reclaimed yet are copied too; they stay invisible.
func (h *Hash) Clone() *Hash {
	n := &Hash{}
	if h.block() != nil {
		n.setBlock(append([]byte(nil), h.block()...))
	}
	if t := h.tab(); t != nil {
		c := *t
		c.arena = append([]byte(nil), t.arena...)
		c.slots = append([]uint64(nil), t.slots...)
		c.heap = append([]expEnt(nil), t.heap...)
		n.setTable(&c)
	}
	return n
}

// CloneValue is Clone for keyspace's Value contract.
func (h *Hash) CloneValue() any { return h.Clone() }
