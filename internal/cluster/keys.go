package cluster

import "github.com/abacusdb/abacus/internal/keyspace"

// Keys by hash slot, for COUNTKEYSINSLOT, GETKEYSINSLOT and the keys a
// node drops when it loses a slot. Cluster mode has one database.

// keySlot is Redis's keyHashSlot: CRC16 (XMODEM) of the key, or of the
// part between the first { and the next } when that part is not empty.
func keySlot(key []byte) int {
	s := -1
	for i, ch := range key {
		if ch == '{' {
			s = i
			break
		}
	}
	if s >= 0 {
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e > s+1 {
					key = key[s+1 : e]
				}
				break
			}
		}
	}
	return int(crc16(key) & (NumSlots - 1))
}

var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for j := 0; j < 8; j++ {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()

func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>8)^x]
	}
	return c
}

// keysInSlot counts the keys of slot j (live or not yet expired).
func (c *Cluster) keysInSlot(j int) int {
	n := 0
	c.e.KS.DBs[0].ForEach(func(o *keyspace.Object) {
		if keySlot([]byte(o.Key)) == j {
			n++
		}
	})
	return n
}

// getKeysInSlot lists up to count keys of slot j.
func (c *Cluster) getKeysInSlot(j, count int) []string {
	var out []string
	c.e.KS.DBs[0].ForEach(func(o *keyspace.Object) {
		if len(out) < count && keySlot([]byte(o.Key)) == j {
			out = append(out, o.Key)
		}
	})
	return out
}

// delKeysInSlot deletes the keys of slot j (a slot this node lost).
func (c *Cluster) delKeysInSlot(j int) int {
	keys := c.getKeysInSlot(j, 1<<62)
	db := c.e.KS.DBs[0]
	for _, k := range keys {
		db.Delete(k)
	}
	return len(keys)
}
