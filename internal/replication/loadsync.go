package replication

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/gcgoal"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// A replica loads its primary's snapshot as the bytes arrive (rdb.LoadFrom),
// into a keyspace of its own, without the server lock: the old data is
// served meanwhile (or refused, per replica-serve-stale-data), transfer
// and decoding overlap, and the payload is never held whole. Only when the
// stream ended with a good checksum (and, diskless, the end mark) does
// the new keyspace take the old one's place, under the lock: a truncated
// or corrupt transfer leaves nothing of itself behind.

// deadlineReader reads from the link's buffered reader with a read
// deadline of timeout for each read: a primary that stalls mid-transfer
// ends the sync.
type deadlineReader struct {
	r       *bufio.Reader
	conn    net.Conn
	timeout time.Duration
}

func (d deadlineReader) Read(p []byte) (int, error) {
	d.conn.SetReadDeadline(time.Now().Add(d.timeout))
	return d.r.Read(p)
}

// snapshotHeader reads the snapshot bulk's header: $<len>, or the
// diskless form $EOF:<40-byte mark> (mark set, n -1).
func snapshotHeader(r *bufio.Reader, conn net.Conn, timeout time.Duration) (n int64, mark string, err error) {
	for {
		conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue // the primary's keepalive newlines while it prepares
		}
		if line[0] != '$' {
			return 0, "", fmt.Errorf("bad protocol from MASTER, the first byte is not '$': %q", line)
		}
		if mark, ok := strings.CutPrefix(line, "$EOF:"); ok {
			// Redis's replica takes the first 40 bytes as the mark.
			if len(mark) < 40 {
				return 0, "", fmt.Errorf("bad snapshot end mark %q", line)
			}
			return -1, mark[:40], nil
		}
		n, err := strconv.ParseInt(line[1:], 10, 64)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("bad snapshot length %q", line)
		}
		return n, "", nil
	}
}

// loadSnapshot reads and loads the primary's snapshot and, only when it
// loaded whole, puts it in place of the data. It returns the bytes read
// past the snapshot: the stream's first.
func (p *Primary) loadSnapshot(l *link, r *bufio.Reader, conn net.Conn, timeout time.Duration, replid string, off int64) ([]byte, error) {
	size, mark, err := snapshotHeader(r, conn, timeout)
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	if mark != "" {
		p.e.Log.Info("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser")
	} else {
		p.e.Log.Info(fmt.Sprintf("MASTER <-> REPLICA sync: receiving %d bytes from master to parser", size))
	}
	p.lock.Lock()
	if p.link != l {
		p.lock.Unlock()
		return nil, errStopped
	}
	e := p.e
	ks := keyspace.New(len(e.KS.DBs))
	ks.Now = e.Clock.NowMs()
	opt := e.RestoreOptions(ks.Now)
	opt.KeepExpired = true
	p.lock.Unlock()

	var src io.Reader = deadlineReader{r, conn, timeout}
	var limited *io.LimitedReader
	if mark == "" {
		limited = &io.LimitedReader{R: src, N: size}
		src = limited
	}
	var codes []string
	// The load keeps nearly all it allocates: collections during it
	// would mark the growing keyspace again and again (gcgoal).
	loaded := gcgoal.Loading()
	info, rest, err := rdb.LoadKeyspaceFrom(ks, src, opt, func(code []byte) error {
		codes = append(codes, string(code))
		return nil
	})
	loaded()
	if err != nil {
		return nil, fmt.Errorf("failed loading the primary's snapshot: %w", err)
	}
	var extra []byte
	if mark == "" {
		if len(rest) > 0 || limited.N > 0 {
			return nil, fmt.Errorf("failed loading the primary's snapshot: %d bytes after the RDB's end", int64(len(rest))+limited.N)
		}
	} else {
		// The end mark follows the RDB; the primary sends nothing after it
		// until our first ACK, but whatever came is the stream's.
		tail := bytes.Clone(rest)
		if len(tail) < len(mark) {
			more := make([]byte, len(mark)-len(tail))
			if _, err := io.ReadFull(src, more); err != nil {
				return nil, fmt.Errorf("reading the snapshot's end mark: %w", err)
			}
			tail = append(tail, more...)
		}
		if string(tail[:len(mark)]) != mark {
			return nil, fmt.Errorf("failed loading the primary's snapshot: the RDB is not followed by its end mark")
		}
		extra = tail[len(mark):]
	}

	p.lock.Lock()
	defer p.lock.Unlock()
	if p.link != l {
		return nil, errStopped
	}
	defer giveBack() // the old data, and the load's garbage
	if err := e.RestoreFunctions(codes); err != nil {
		return nil, fmt.Errorf("failed loading the primary's functions: %w", err)
	}
	e.KS.Adopt(ks)
	p.dropReplicas()
	e.Stats.Info.SetReplID(replid)
	p.offset, p.replid2, p.off2 = off, "", -1
	// The stream goes on in the database it had selected at the
	// snapshot's moment.
	p.streamDB = 0
	if db, err := strconv.Atoi(info.Aux["repl-stream-db"]); err == nil && db >= 0 && db < len(e.KS.DBs) {
		p.streamDB = db
	}
	p.backlog = newRing(p.backlogSize())
	l.syncing, l.state = false, "connected"
	e.Log.Info("MASTER <-> REPLICA sync: Finished with success")
	return extra, nil
}

// giveBack returns freed memory to the system soon, on a goroutine of its
// own, one at a time: after a full sync the replica's old dataset, the
// load's garbage and the primary's sync buffers are free, and Go's
// scavenger would return them only slowly (RSS stayed at the heap's
// peak). The pause lets the connections' writers drop the chunks lent to
// them. It costs one collection per full sync.
func giveBack() {
	if !givingBack.CompareAndSwap(false, true) {
		return
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		debug.FreeOSMemory()
		givingBack.Store(false)
	}()
}

var givingBack atomic.Bool
