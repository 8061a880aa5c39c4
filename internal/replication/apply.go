package replication

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
)

// The replica applies its primary's stream the way the event loop runs a
// client's pipeline: one read (one read deadline), every complete command
// in it parsed in place (arguments alias the input, resp.Reader), the
// keys of the next few looked up together (engine.Env.PrefetchBatch),
// then the batch run under one acquisition of the server lock.
//
// Offsets stay exact: the stream's bytes are passed on (backlog, our own
// replicas) as they arrived, every byte counted once, in order, whatever
// the commands are (empty requests included). A REPLCONF GETACK is
// answered with the offset of the bytes before it, as Redis does, so the
// bytes before it in the batch are passed on before its offset is taken.
// A command split across reads waits in the reader, parsed as far as it
// came, and runs with the batch in which it completes; a MULTI ... EXEC
// split across batches queues in the primary link's session as before.

// applyPrefetch is how many commands of a batch have their keys looked
// up together (the client path's window).
const applyPrefetch = 16

// applier is the stream's input and the scratch of its batches. Only the
// link's goroutine uses it.
type applier struct {
	in   resp.Reader
	argv [][]byte
	ends []int // command i's arguments end at argv[ends[i]]
	// begins[i] is where command i's bytes start (a value of in.Pos):
	// empty requests before it lie between it and the command before.
	begins []int
	pf     [][]byte
	w      resp.Writer
	acks   []int64 // the GETACK answers of the batch, in order
}

// readStream reads what the primary sent next into a, one deadline per
// read. A timeout is errMasterTimeout.
func readStream(conn net.Conn, a *applier, timeout time.Duration) error {
	room := a.in.ReadBuf(0)
	conn.SetReadDeadline(time.Now().Add(timeout))
	n, err := conn.Read(room)
	if n > 0 {
		a.in.Filled(n)
		return nil
	}
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return errMasterTimeout
	}
	return err
}

// parse parses every complete command in a's input from the cursor on.
// It returns the cursor before them and a protocol error, if the input
// holds one after them.
func (a *applier) parse(maxBulk int64) (start int, perr error) {
	a.in.MaxBulk, a.in.Authenticated = maxBulk, true
	a.argv, a.ends, a.begins = a.argv[:0], a.ends[:0], a.begins[:0]
	start = a.in.Pos()
	for {
		begin := a.in.Pos()
		args, err := a.in.Next(a.argv)
		if err == resp.ErrIncomplete {
			return start, nil
		}
		if err != nil {
			return start, err
		}
		if len(args) == len(a.argv) {
			continue // an empty request: its bytes count, nothing runs
		}
		a.argv = args
		a.ends = append(a.ends, len(a.argv))
		a.begins = append(a.begins, begin)
	}
}

// applyBatch runs the commands a.parse found, under the server lock, and
// appends their bytes to our own stream. start is the cursor before them.
// The GETACK answers due are left in a.acks.
func (p *Primary) applyBatch(l *link, a *applier, start int) error {
	a.acks = a.acks[:0]
	p.lock.Lock()
	defer p.lock.Unlock()
	if p.link != l {
		return errStopped
	}
	l.lastIO = p.e.Clock.NowMs()
	sess := l.sess
	sent, from, pfEnd := start, 0, 0
	for i, end := range a.ends {
		if i == pfEnd && len(a.ends)-i > 1 {
			pfEnd = min(i+applyPrefetch, len(a.ends))
			a.pf = p.e.PrefetchBatch(sess, a.argv, from, a.ends[i:pfEnd], a.pf)
		}
		args := a.argv[from:end]
		from = end
		switch {
		case len(args) == 3 && ascii.EqualFold(args[0], "replconf") && ascii.EqualFold(args[1], "getack"):
			// Answered with the offset before it: what precedes it joins
			// our stream first.
			a.in.Span(sent, a.begins[i], p.send)
			sent = a.begins[i]
			a.acks = append(a.acks, p.offset)
		case ascii.EqualFold(args[0], "ping"):
			// The primary's keepalive: it only counts in the offset.
		default:
			a.w.Reset()
			p.e.Execute(sess, args, &a.w)
		}
	}
	// The bytes applied are the replica's own stream, as they came.
	a.in.Span(sent, a.in.Pos(), p.send)
	l.readOff = p.offset
	p.streamDB = sess.DB
	return nil
}

// streamLoop applies the primary's stream until the link breaks or stops,
// answering GETACKs after each batch.
func (p *Primary) streamLoop(l *link, conn net.Conn, a *applier, timeout time.Duration) error {
	for {
		// What the handshake's reader had buffered beyond the snapshot
		// is already in a: it runs before the first read.
		start, perr := a.parse(p.e.Cfg.Int(config.ProtoMaxBulkLen))
		if len(a.ends) > 0 || a.in.Pos() != start {
			if err := p.applyBatch(l, a, start); err != nil {
				return err
			}
			a.in.Discard()
			for _, off := range a.acks {
				conn.SetWriteDeadline(time.Now().Add(timeout))
				if _, err := conn.Write(resp.AppendCommand(nil, []byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(nil, off, 10))); err != nil {
					return err
				}
			}
		}
		if perr != nil {
			return perr
		}
		if err := readStream(conn, a, timeout); err != nil {
			return err
		}
	}
}
