package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/atomicfile"
)

// nodes.conf: one CLUSTER NODES line per node (handshake nodes left
// out), then "vars currentEpoch N lastVoteEpoch N", as Redis writes it,
// so a redis-server can read an Abacus node's file and the reverse.

var flagNames = []struct {
	f    uint16
	name string
}{
	{flagMyself, "myself"}, {flagMaster, "master"}, {flagSlave, "slave"}, {flagPFail, "fail?"},
	{flagFail, "fail"}, {flagHandshake, "handshake"}, {flagNoAddr, "noaddr"}, {flagNoFailover, "nofailover"},
}

func flagsString(f uint16) string {
	var parts []string
	for _, x := range flagNames {
		if f&x.f != 0 {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "noflags"
	}
	return strings.Join(parts, ",")
}

// slotRanges lists a bitmap's slots as start-end ranges.
func slotRanges(b *slotBitmap) [][2]int {
	var out [][2]int
	start := -1
	// A word (64 slots; bit j is byte j/8's bit j%8, so a little-endian
	// word's bit j%64) that neither starts nor ends a range is skipped
	// whole: nodes.conf is rendered on every slot change.
	for w := 0; w < NumSlots/64; w++ {
		x := binary.LittleEndian.Uint64(b[w*8:])
		if (x == 0 && start < 0) || (x == ^uint64(0) && start >= 0) {
			continue
		}
		for i := 0; i < 64; i++ {
			in := x&(1<<i) != 0
			if in && start < 0 {
				start = w*64 + i
			} else if !in && start >= 0 {
				out = append(out, [2]int{start, w*64 + i - 1})
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, NumSlots - 1})
	}
	return out
}

// describe is a node's CLUSTER NODES line (clusterGenNodeDescription).
// usePPort shows the node's plaintext port (pport) where it has one,
// for plaintext clients of a TLS cluster bus.
func (c *Cluster) describe(n *Node, usePPort bool) string {
	return string(c.appendNode(nil, n, usePPort))
}

// appendNode appends describe's line to b. nodes.conf is rendered on
// every slot change (each SETSLOT of a reshard), hence appends rather
// than formatting.
func (c *Cluster) appendNode(b []byte, n *Node, usePPort bool) []byte {
	b = append(b, n.name...)
	port := n.port
	if usePPort && n.pport != 0 {
		port = n.pport
	}
	b = append(b, ' ')
	b = append(b, n.ip...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(port), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(n.cport), 10)
	if n.hostname != "" {
		b = append(b, ',')
		b = append(b, n.hostname...)
	}
	b = append(b, ' ')
	b = append(b, flagsString(n.flags)...)
	b = append(b, ' ')
	if n.master != nil {
		b = append(b, n.master.name...)
	} else {
		b = append(b, '-')
	}
	epoch := n.configEpoch
	if n.isSlave() && n.master != nil {
		epoch = n.master.configEpoch
	}
	state := " disconnected"
	if n.link != nil || n.flags&flagMyself != 0 {
		state = " connected"
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pingSent, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pongRecv, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, epoch, 10)
	b = append(b, state...)
	for _, r := range slotRanges(&n.slots) {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r[0]), 10)
		if r[0] != r[1] {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(r[1]), 10)
		}
	}
	if n.flags&flagMyself != 0 {
		// Up to the last open entry: c.open counts them.
		for j, left := 0, c.open; j < NumSlots && left > 0; j++ {
			if c.migrating[j] != nil {
				left--
			}
			if c.importing[j] != nil {
				left--
			}
			if t := c.migrating[j]; t != nil {
				b = append(b, " ["...)
				b = strconv.AppendInt(b, int64(j), 10)
				b = append(b, "->-"...)
				b = append(b, t.name...)
				b = append(b, ']')
			} else if f := c.importing[j]; f != nil {
				b = append(b, " ["...)
				b = strconv.AppendInt(b, int64(j), 10)
				b = append(b, "-<-"...)
				b = append(b, f.name...)
				b = append(b, ']')
			}
		}
	}
	return b
}

// nodesText is CLUSTER NODES (and the body of nodes.conf): every node
// not filtered out, one line each.
func (c *Cluster) nodesText(skip uint16, usePPort bool) string {
	return string(c.appendNodes(nil, skip, usePPort))
}

func (c *Cluster) appendNodes(b []byte, skip uint16, usePPort bool) []byte {
	for _, n := range c.sortedNodes() {
		if n.flags&skip != 0 {
			continue
		}
		b = c.appendNode(b, n, usePPort)
		b = append(b, '\n')
	}
	return b
}

func (c *Cluster) saveConfig() error { return c.writeConfig(false) }

// saveConfigSync is saveConfig made durable before it returns: a vote
// or a won election must survive a crash (Redis's FSYNC_CONFIG).
func (c *Cluster) saveConfigSync() error { return c.writeConfig(true) }

// writeConfig saves nodes.conf. A durable save (a vote, an election won,
// an epoch bumped: Redis's FSYNC_CONFIG) writes a new file, fsyncs it and
// renames it over the old one, then fsyncs the directory, so that even a
// machine crash leaves the old file or the new one, never a mix. Other
// saves, which Redis does not fsync either, overwrite the file in place
// as Redis 7.0's clusterSaveConfig does: one write from offset 0, padded
// with newlines to the old length (blank lines are skipped on load), then
// a truncate to the content. A killed process cannot split one write of a
// regular file, so it leaves the old content or the new; a save per
// SETSLOT then costs no new inode (creating one, and the rename, were
// most of a reshard's CPU here: docs/benchmarks.md).
func (c *Cluster) writeConfig(durable bool) error {
	c.todoSave = false
	c.confBuf = c.appendNodes(c.confBuf[:0], flagHandshake, false)
	c.confBuf = append(c.confBuf, "vars currentEpoch "...)
	c.confBuf = strconv.AppendUint(c.confBuf, c.currentEpoch, 10)
	c.confBuf = append(c.confBuf, " lastVoteEpoch "...)
	c.confBuf = strconv.AppendUint(c.confBuf, c.lastVoteEpoch, 10)
	c.confBuf = append(c.confBuf, '\n')
	if !durable {
		return writeInPlace(c.confPath, c.confBuf)
	}
	tmp := c.confPath + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(c.confBuf)
	if err = atomicfile.Commit(f, tmp, c.confPath, err); err != nil {
		return err
	}
	return atomicfile.SyncDir(c.confPath)
}

// writeInPlace overwrites path with text as described at writeConfig.
// text's spare capacity may be used for the padding.
func writeInPlace(path string, text []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	n := len(text)
	for int64(len(text)) < st.Size() {
		text = append(text, '\n')
	}
	if _, err := f.WriteAt(text, 0); err != nil {
		return err
	}
	if len(text) != n {
		return f.Truncate(int64(n))
	}
	return nil
}

// loadConfig reads nodes.conf; false when there is none (a new node).
func (c *Cluster) loadConfig() (bool, error) {
	data, err := os.ReadFile(c.confPath)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(data) == 0) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("Loading the cluster node config from %s: %v", c.confPath, err)
	}
	fmtErr := func(line string) (bool, error) {
		return false, fmt.Errorf("Unrecoverable error: corrupted cluster config file %q.", strings.TrimSpace(line))
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.EqualFold(f[0], "vars") {
			if len(f)%2 == 0 {
				return fmtErr(line)
			}
			for j := 1; j+1 < len(f); j += 2 {
				v, _ := strconv.ParseUint(f[j+1], 10, 64)
				switch strings.ToLower(f[j]) {
				case "currentepoch":
					c.currentEpoch = v
				case "lastvoteepoch":
					c.lastVoteEpoch = v
				}
			}
			continue
		}
		if len(f) < 8 || !validName(f[0]) {
			return fmtErr(line)
		}
		n := c.lookup(f[0])
		if n == nil {
			n = c.newNode(f[0], 0)
			c.addNode(n)
		}
		addr := f[1]
		if i := strings.IndexByte(addr, ','); i >= 0 {
			n.hostname = addr[i+1:]
			addr = addr[:i]
		}
		at := strings.LastIndexByte(addr, '@')
		colon := strings.LastIndexByte(addr, ':')
		if colon < 0 {
			return fmtErr(line)
		}
		n.ip = addr[:colon]
		if at > colon {
			n.port, _ = strconv.Atoi(addr[colon+1 : at])
			n.cport, _ = strconv.Atoi(addr[at+1:])
		} else {
			n.port, _ = strconv.Atoi(addr[colon+1:])
			n.cport = n.port + 10000
		}
		for _, fl := range strings.Split(f[2], ",") {
			switch fl {
			case "myself":
				if c.myself != nil {
					return fmtErr(line)
				}
				c.myself = n
				n.flags |= flagMyself
			case "master":
				n.flags |= flagMaster
			case "slave":
				n.flags |= flagSlave
			case "fail?":
				n.flags |= flagPFail
			case "fail":
				n.flags |= flagFail
				n.failTime = c.now()
			case "handshake":
				n.flags |= flagHandshake
			case "noaddr":
				n.flags |= flagNoAddr
			case "nofailover":
				n.flags |= flagNoFailover
			case "noflags":
			default:
				return fmtErr(line)
			}
		}
		if f[3] != "-" {
			m := c.lookup(f[3])
			if m == nil {
				m = c.newNode(f[3], 0)
				c.addNode(m)
			}
			n.master = m
			m.addReplica(n)
		}
		n.pongRecv = c.now()
		n.configEpoch, _ = strconv.ParseUint(f[6], 10, 64)
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				// [slot->-id] migrating, [slot-<-id] importing.
				s = strings.Trim(s, "[]")
				table, sep := &c.migrating, "->-"
				if !strings.Contains(s, sep) {
					table, sep = &c.importing, "-<-"
				}
				i := strings.Index(s, sep)
				if i <= 0 {
					return fmtErr(line)
				}
				j, err := strconv.Atoi(s[:i])
				if err != nil || j < 0 || j >= NumSlots {
					return fmtErr(line)
				}
				t := c.lookup(s[i+3:])
				if t == nil {
					t = c.newNode(s[i+3:], 0)
					c.addNode(t)
				}
				c.setOpen(table, j, t)
				continue
			}
			lo, hi, ok := strings.Cut(s, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if ok {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || a < 0 || b >= NumSlots || a > b {
				return fmtErr(line)
			}
			for j := a; j <= b; j++ {
				c.addSlot(n, j)
			}
		}
	}
	if c.myself == nil {
		return false, fmt.Errorf("Unrecoverable error: corrupted cluster config file: no myself node.")
	}
	return true, nil
}
