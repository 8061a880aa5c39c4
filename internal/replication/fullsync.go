package replication

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/persist"
)

// Full sync without fork() and without stopping the world: the snapshot
// is the keyspace's point-in-time snapshot (keyspace/snapshot.go), the
// one BGSAVE uses, encoded a slice at a time under the server lock by the
// event loop between its rounds of clients (persist.Background.Stream
// driven by engine.Env.SaveDriver), the encoded chunks written out by the
// job's goroutine.
//
// A replica that needs a full sync waits (wait_bgsave) until a job takes
// it. A job starts when the keyspace's snapshot is free (a BGSAVE or AOF
// rewrite may hold it) and, for a diskless job, once
// repl-diskless-sync-delay has passed since the first waiting replica
// came (or repl-diskless-sync-max-replicas are waiting), so that replicas
// arriving together share one snapshot. At its start, under the lock, the
// job fixes the moment: each of its replicas gets +FULLRESYNC with the
// offset of that moment, and from then on the stream the replica would be
// sent is kept aside (replica.pending) while the snapshot goes out:
//
//   - diskless (repl-diskless-sync yes and every replica of the job said
//     REPLCONF capa eof): $EOF:<40 random hex bytes>, the RDB as it is
//     encoded, the same 40 bytes;
//   - disk-based: the RDB is written to a temporary file in dir and sent
//     from it, EOF-marked as it is written when every replica said capa
//     eof (tailsync.go), else as $<length> and the file's bytes once it
//     is complete; then the file is removed.
//
// The bytes go through each replica's output queue, at most syncWindow
// of them queued at a time, so a slow replica slows its job down instead
// of filling memory. When the RDB is out (diskless: and the replica's
// first ACK says it loaded it) the job, under the lock, queues each
// replica's pending stream and makes it online: from then on it gets the
// stream as every online replica does.
//
// A redis-server replica (it did not say REPLCONF capa abacus) gets a
// payload Redis 7.0 reads: RDB version 10, hashes without their field
// TTLs, and no time series (docs/design.md, "Replication").

// syncWindow is how many bytes of snapshot a job keeps queued per
// replica before it waits for the socket to take them.
const syncWindow = 4 << 20

// syncJob is one snapshot sent to one or more replicas.
type syncJob struct {
	replicas []*replica
	diskless bool
	// eof: every replica said REPLCONF capa eof, so the payload is sent
	// in the EOF-marked form, from a file too (tailsync.go).
	eof bool
	bg  *persist.Background
}

// queueFullSync makes r wait for the next full sync job.
func (p *Primary) queueFullSync(r *replica) {
	if len(p.waiting) == 0 {
		p.waitSince = time.Now()
	}
	p.waiting = append(p.waiting, r)
	if !p.syncer {
		p.syncer = true
		go p.runSyncs()
	}
}

// runSyncs starts jobs while replicas wait, one at a time.
func (p *Primary) runSyncs() {
	for {
		p.lock.Lock()
		left := p.waiting[:0]
		for _, r := range p.waiting {
			if !r.s.Closed() {
				left = append(left, r)
			}
		}
		clear(p.waiting[len(left):])
		p.waiting = left
		if len(p.waiting) == 0 {
			p.syncer = false
			p.lock.Unlock()
			return
		}
		job := p.readyJob()
		p.lock.Unlock()
		if job == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		err := p.sendJob(job)
		p.lock.Lock()
		p.finishJob(job, err)
		p.lock.Unlock()
		giveBack()
	}
}

// readyJob starts a job for the waiting replicas when it may start now,
// under the lock.
func (p *Primary) readyJob() *syncJob {
	if p.e.KS.SnapshotOpen() || p.link != nil && p.link.syncing {
		return nil
	}
	cfg := p.e.Cfg
	// One kind per job: Abacus replicas and Redis's get different payloads.
	abacus := p.waiting[0].abacus
	diskless := cfg.Bool(config.ReplDisklessSync)
	var take, rest []*replica
	eof := true
	for _, r := range p.waiting {
		if r.abacus == abacus {
			take = append(take, r)
			eof = eof && r.capaEOF
		} else {
			rest = append(rest, r)
		}
	}
	diskless = diskless && eof
	if diskless {
		delay := time.Duration(cfg.Int(config.ReplDisklessSyncDelay)) * time.Second
		most := int(cfg.Int(config.ReplDisklessSyncMaxReplicas))
		if time.Since(p.waitSince) < delay && (most == 0 || len(take) < most) {
			return nil
		}
	}
	p.waiting = rest
	p.waitSince = time.Now()

	e := p.e
	now := e.Clock.NowMs()
	aux := persist.Aux(config.RedisVersion, now/1000, engine.UsedMemory())
	streamDB := 0 // a primary's own stream starts with a SELECT (seldb -1)
	if p.link != nil {
		streamDB = p.streamDB
	}
	aux = append(aux, "repl-stream-db", strconv.Itoa(streamDB), "repl-id", e.Stats.Info.ReplID(), "repl-offset", strconv.FormatInt(p.offset, 10))
	opt := persist.Options{Encode: e.FileEncodeOptions(now), Aux: aux, Functions: e.FunctionCodes(), Drive: e.SaveDriver(p.lock)}
	if !abacus {
		opt.Encode.NoFieldTTL = true
		opt.Skip = func(o *keyspace.Object) bool { return o.Type == keyspace.TypeTimeSeries }
	}
	job := &syncJob{replicas: take, diskless: diskless, eof: eof}
	job.bg = persist.StartBackground(e.KS, p.lock, opt)
	p.seldb = -1 // the stream after the snapshot starts with a SELECT
	for _, r := range take {
		r.syncing, r.pending = true, nil
		if r.psync {
			r.s.Push([]byte("+FULLRESYNC " + e.Stats.Info.ReplID() + " " + strconv.FormatInt(p.offset, 10) + "\r\n"))
		}
	}
	target := "disk"
	if diskless {
		target = "replicas sockets"
	}
	e.Log.Info(fmt.Sprintf("Starting BGSAVE for SYNC with target: %s (%d replicas)", target, len(take)))
	return job
}

// sendJob writes the job's snapshot to its replicas, without the lock.
func (p *Primary) sendJob(job *syncJob) error {
	out := &jobWriter{p: p, job: job}
	var mark [20]byte
	rand.Read(mark[:])
	eof := []byte(hex.EncodeToString(mark[:]))
	eofHeader := []byte("$EOF:" + string(eof) + "\r\n")
	if job.diskless {
		if _, err := out.Write(eofHeader); err != nil {
			return p.cancelJob(job, err)
		}
		if err := job.bg.Stream(out); err != nil {
			return err
		}
		_, err := out.Write(eof)
		return err
	}
	dir := p.e.Cfg.Str(config.Dir)
	f, err := os.CreateTemp(dir, fmt.Sprintf("temp-repl-%d-*.rdb", os.Getpid()))
	if err != nil {
		return p.cancelJob(job, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if job.eof {
		return p.sendTail(job, out, f, eofHeader, eof)
	}
	if err := job.bg.Stream(f); err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return err
	}
	if _, err := out.Write([]byte("$" + strconv.FormatInt(size, 10) + "\r\n")); err != nil {
		return err
	}
	return out.copyFile(f)
}

func (p *Primary) cancelJob(job *syncJob, err error) error {
	p.lock.Lock()
	job.bg.Cancel()
	p.lock.Unlock()
	return err
}

// finishJob makes the job's replicas online with the stream they missed
// meanwhile, or, when the job failed, closes their connections: they
// will ask again. Under the lock.
func (p *Primary) finishJob(job *syncJob, err error) {
	for _, r := range job.replicas {
		if r.s.Closed() || !r.syncing {
			continue
		}
		if err != nil {
			p.e.Log.Warn(fmt.Sprintf("Full sync to replica %s failed: %v", p.name(r), err))
			r.s.Killed.Store(true)
			p.e.Host.Kill(r.s)
			continue
		}
		if job.eof {
			// The replica finds the end mark as the last bytes it read,
			// so nothing may follow until it says it loaded the payload
			// (its first REPLCONF ACK), as Redis 7.0 waits too.
			r.ackWait = true
			continue
		}
		p.startStream(r)
	}
}

// startStream makes r online: the stream it missed during its full sync,
// then everything after.
func (p *Primary) startStream(r *replica) {
	if len(r.pending) > 0 {
		r.s.Push(r.pending)
	}
	r.pending, r.syncing, r.online, r.ackWait = nil, false, true, false
	r.ackAt = p.e.Clock.NowMs()
	p.e.Log.Info(fmt.Sprintf("Synchronization with replica %s succeeded", p.name(r)))
}

// jobWriter queues bytes to every replica of a job still connected,
// waiting while one has more than syncWindow bytes queued. It fails when
// none is left. The snapshot's chunks are lent to the replicas' queues
// (Session.PushLent), not copied, and come back once every replica has
// written them, to be filled again: a sync's bytes go round in a few
// buffers instead of turning the whole snapshot into garbage that the
// collector lets the heap grow for.
type jobWriter struct {
	p   *Primary
	job *syncJob
	// mu guards free, the chunks every replica has written. The queues
	// give them back under their own locks: mu is taken under those and
	// nothing is taken under it.
	mu   sync.Mutex
	free [][]byte
}

// Write queues copies of b.
func (w *jobWriter) Write(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 {
		n := min(len(b), 1<<20)
		if err := w.push(b[:n], false); err != nil {
			return 0, err
		}
		b = b[n:]
	}
	return total, nil
}

// WriteChunk implements persist.ChunkWriter: c is lent to the replicas,
// and a chunk they have all written is returned for reuse, if there is
// one.
func (w *jobWriter) WriteChunk(c []byte) ([]byte, error) {
	if err := w.push(c, true); err != nil {
		return nil, err
	}
	return w.reuse(), nil
}

// reuse returns a chunk every replica has written, or nil.
func (w *jobWriter) reuse() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.free)
	if n == 0 {
		return nil
	}
	c := w.free[n-1]
	w.free[n-1] = nil
	w.free = w.free[:n-1]
	return c[:0]
}

// copyFile sends the disk-based sync's file through lent buffers.
func (w *jobWriter) copyFile(f io.Reader) error {
	for {
		buf := w.reuse()
		if cap(buf) == 0 {
			buf = make([]byte, 0, 1<<20)
		}
		n, err := io.ReadFull(f, buf[:cap(buf)])
		if n > 0 {
			if err := w.push(buf[:n], true); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// push queues b to every replica of the job still syncing once none has
// more than syncWindow bytes queued; lent, b is lent (returned to free
// when all have written it), else copied.
func (w *jobWriter) push(b []byte, lent bool) error {
	p := w.p
	for {
		p.lock.Lock()
		alive, full := 0, false
		for _, r := range w.job.replicas {
			if r.s.Closed() || !r.syncing {
				continue
			}
			alive++
			full = full || r.s.OutBuf.Load() > syncWindow
		}
		if alive == 0 {
			p.lock.Unlock()
			return errNoneLeft
		}
		if full {
			p.lock.Unlock()
			time.Sleep(time.Millisecond)
			continue
		}
		var refs atomic.Int32
		refs.Store(int32(alive))
		release := func() {
			if refs.Add(-1) == 0 && lent {
				w.mu.Lock()
				w.free = append(w.free, b)
				w.mu.Unlock()
			}
		}
		for _, r := range w.job.replicas {
			if r.s.Closed() || !r.syncing {
				continue
			}
			if lent && r.s.PushLent != nil {
				r.s.PushLent(b, release)
			} else {
				r.s.Push(b)
				release()
			}
		}
		p.lock.Unlock()
		return nil
	}
}

var errNoneLeft = fmt.Errorf("no replica left to send the snapshot to")
