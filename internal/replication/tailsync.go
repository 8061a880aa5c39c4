package replication

import (
	"io"
	"os"
	"sync"
)

// A disk-based full sync writes the snapshot to a file so that the
// snapshot ends when the file is written, however slowly the replicas
// take it. Redis sends the file once it is complete, after a $<length>
// header; when every replica of the job said REPLCONF capa eof, the file
// is sent instead as it is written, in the EOF-marked form a diskless
// sync uses: the transfer and the replicas' load overlap the save rather
// than follow it, and the snapshot's life is still the save's alone (the
// replicas read behind the writer, from the file).

// tailFile is the file being written, read behind its writer.
type tailFile struct {
	f       *os.File
	mu      sync.Mutex
	cond    sync.Cond
	written int64 // bytes of f written so far
	done    bool  // the writer ended (with err)
	err     error
}

func newTailFile(f *os.File) *tailFile {
	t := &tailFile{f: f}
	t.cond.L = &t.mu
	return t
}

// Write appends to the file and wakes the reader.
func (t *tailFile) Write(p []byte) (int, error) {
	n, err := t.f.Write(p)
	t.mu.Lock()
	t.written += int64(n)
	t.cond.Broadcast()
	t.mu.Unlock()
	return n, err
}

// finish records the writer's end: io.EOF for a complete file.
func (t *tailFile) finish(err error) {
	if err == nil {
		err = io.EOF
	}
	t.mu.Lock()
	t.done, t.err = true, err
	t.cond.Broadcast()
	t.mu.Unlock()
}

// wait returns how many bytes are written once n more than off are, or
// the writer has ended (with its error: io.EOF when complete).
func (t *tailFile) wait(off, n int64) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.written < off+n && !t.done {
		t.cond.Wait()
	}
	if t.written > off {
		return t.written, nil
	}
	return t.written, t.err
}

// sendTail writes the job's snapshot to f and sends it to the replicas
// as it is written, between the EOF mark's two copies (eofHeader and
// eof). It returns once the whole file went out, or the first error.
func (p *Primary) sendTail(job *syncJob, out *jobWriter, f *os.File, eofHeader, eof []byte) error {
	t := newTailFile(f)
	saved := make(chan error, 1)
	go func() {
		err := job.bg.Stream(t)
		t.finish(err)
		saved <- err
	}()
	err := out.copyTail(t, eofHeader)
	if err != nil {
		// The save must not go on for nobody, nor outlive the file.
		p.cancelJob(job, err)
		<-saved
		return err
	}
	if err := <-saved; err != nil {
		return err
	}
	_, err = out.Write(eof)
	return err
}

// tailChunk is how many bytes the sender waits for before it reads: the
// writer's pieces are small, and sending each as it came made many small
// writes on both ends of the link.
const tailChunk = 1 << 20

// copyTail sends header, then the file's bytes as they are written,
// through lent buffers of tailChunk bytes, until the writer ends.
func (w *jobWriter) copyTail(t *tailFile, header []byte) error {
	if _, err := w.Write(header); err != nil {
		return err
	}
	var off int64
	for {
		end, err := t.wait(off, tailChunk)
		if end == off {
			if err == io.EOF {
				return nil
			}
			return err
		}
		for off < end {
			buf := w.reuse()
			if cap(buf) == 0 {
				buf = make([]byte, 0, tailChunk)
			}
			n, err := t.f.ReadAt(buf[:min(int64(cap(buf)), end-off)], off)
			if n > 0 {
				if err := w.push(buf[:n], true); err != nil {
					return err
				}
				off += int64(n)
			}
			if err != nil && err != io.EOF {
				return err
			}
			if n == 0 {
				return io.ErrUnexpectedEOF
			}
		}
	}
}
