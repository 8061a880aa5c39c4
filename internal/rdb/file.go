package rdb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"unsafe"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The file layout: "REDIS" and a four-digit version, then records each
// introduced by an opcode or a value type:
//
//	AUX (250)            string key, string value
//	SELECTDB (254)       length: database id
//	RESIZEDB (251)       length: keys, length: keys with a TTL
//	EXPIRETIME_MS (252)  8-byte little-endian unix ms, for the next key
//	EXPIRETIME (253)     4-byte little-endian unix seconds (old files)
//	IDLE (248), FREQ (249)  LRU idle seconds / LFU counter of the next key
//	FUNCTION2 (245)      string: a function library's code
//	type (0-25)          string key, then the value
//	EOF (255)            then the CRC-64 of every byte before (version >= 5;
//	                     zero when the writer had rdbchecksum off)

const (
	opSlotInfo      = 244 // Redis 7.4 cluster: slot id, slot size, expires size
	opFunctionPreGA = 246
)

// Writer writes an RDB file. Errors stick: after one, every call does
// nothing and Close returns it.
type Writer struct {
	w   *bufio.Writer
	opt EncodeOptions
	crc uint64
	buf []byte
	err error
}

// NewWriter starts a file of the given version (Version, or
// VersionFieldTTL when a hash with field TTLs is in it; see FileVersion).
func NewWriter(w io.Writer, version int, opt EncodeOptions) *Writer {
	fw := &Writer{w: bufio.NewWriterSize(w, 64<<10), opt: opt}
	fw.buf = fmt.Appendf(fw.buf[:0], "REDIS%04d", version)
	fw.flush()
	return fw
}

// flush writes buf, adding it to the checksum.
func (w *Writer) flush() {
	if w.err == nil {
		w.crc = checksumUpdate(w.crc, w.buf)
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

// Aux writes an AUX field (redis-ver, ctime, used-mem ...).
func (w *Writer) Aux(key, val string) {
	w.buf = append(w.buf, opAux)
	w.buf = appendString(w.buf, []byte(key), false)
	w.buf = appendString(w.buf, []byte(val), false)
	w.flush()
}

// Function writes a function library's code (FUNCTION2).
func (w *Writer) Function(code []byte) {
	w.buf = append(w.buf, opFunction2)
	w.buf = appendString(w.buf, code, w.opt.Compress)
	w.flush()
}

// SelectDB starts database id, with its size hints.
func (w *Writer) SelectDB(id, keys, expires int) {
	w.buf = append(w.buf, opSelectDB)
	w.buf = appendLen(w.buf, uint64(id))
	w.buf = append(w.buf, opResizeDB)
	w.buf = appendLen(w.buf, uint64(keys))
	w.buf = appendLen(w.buf, uint64(expires))
	w.flush()
}

// Key writes one key: its TTL if it has one, then type, name and value.
func (w *Writer) Key(o *keyspace.Object) {
	if w.err != nil {
		return
	}
	if o.Expire != 0 {
		w.buf = append(w.buf, opExpireTimeMs)
		w.buf = appendMillis(w.buf, o.Expire)
	}
	switch w.opt.KeyMeta {
	case MetaIdle:
		w.buf = append(w.buf, opIdle)
		w.buf = appendLen(w.buf, keyspace.IdleSecondsAt(o.LRU, w.opt.Now))
	case MetaFreq:
		w.buf = append(w.buf, opFreq, byte(keyspace.LFUCounterAt(o.LRU, w.opt.Now, w.opt.LFUDecayTime)))
	}
	at := len(w.buf)
	w.buf = append(w.buf, 0)
	w.buf = appendString(w.buf, []byte(o.Key), w.opt.Compress)
	var typ byte
	w.buf, typ, w.err = AppendValue(w.buf, o, w.opt)
	w.buf[at] = typ
	w.flush()
}

// Close writes EOF and the checksum and flushes. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	w.buf = append(w.buf, opEOF)
	w.flush()
	crc := w.crc
	if w.opt.NoChecksum {
		crc = 0
	}
	w.buf = binary.LittleEndian.AppendUint64(w.buf, crc)
	if w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// FileVersion is the version a file of ks must carry: Version, or
// VersionFieldTTL when some hash has fields with TTLs (which Redis 7.0
// cannot load at all).
func FileVersion(ks *keyspace.Keyspace) int {
	for _, db := range ks.DBs {
		if db.FieldExpiresLen() > 0 {
			return VersionFieldTTL
		}
	}
	return Version
}

// WriteKeyspace writes every database of ks that holds keys, with the AUX
// fields given (in order, key then value) and the function libraries'
// code. Keys whose TTL has passed by opt.Now are left out. The caller
// holds whatever lock keeps ks still.
func WriteKeyspace(out io.Writer, ks *keyspace.Keyspace, aux []string, functions [][]byte, opt EncodeOptions) error {
	w := NewWriter(out, FileVersion(ks), opt)
	for i := 0; i+1 < len(aux); i += 2 {
		w.Aux(aux[i], aux[i+1])
	}
	for _, code := range functions {
		w.Function(code)
	}
	for _, db := range ks.DBs {
		if db.Len() == 0 {
			continue
		}
		w.SelectDB(db.ID, db.Len(), db.ExpiresLen())
		db.ForEach(func(o *keyspace.Object) {
			if o.Expire != 0 && o.Expire <= opt.Now {
				return
			}
			if h, ok := o.Val().(keyspace.FieldExpirer); ok && h.Len(opt.Now) == 0 {
				return
			}
			w.Key(o)
		})
	}
	return w.Close()
}

// FileInfo summarizes a loaded file.
type FileInfo struct {
	Version   int
	Aux       map[string]string
	Functions int
	Keys      map[keyspace.Type]int // by type
	Expires   int                   // keys with a TTL
	Skipped   int                   // keys whose TTL had passed
	Checksum  uint64                // 0 when the file carries none
	EOFOffset int                   // where the EOF opcode is
}

// Loader reads an RDB file and hands each key to Key. Opt.Now decides
// which keys have expired: those are skipped, as a primary does on load.
type Loader struct {
	Opt Options
	// Key receives each live key (Key, Expire set); required.
	Key func(db int, o *keyspace.Object) error
	// Function receives each function library's code (it aliases the
	// input: a caller copies what it keeps); nil refuses files that have
	// some.
	Function func(code []byte) error
	// Expired, when set, is told of each key left out because its TTL
	// (or all its fields' TTLs) had passed.
	Expired func(db int, typ keyspace.Type)
	// SkipChecksum leaves the CRC-64 to the caller (check-rdb computes it
	// in parallel with decoding). A file that does not end with the EOF
	// opcode and a checksum is then decoded as far as it goes, so that the
	// error names where its records stop.
	SkipChecksum bool
	// Reserve, when set, is told of each database's RESIZEDB hint: how
	// many keys, and keys with a TTL, the file says follow.
	Reserve func(db, keys, expires int)
	// Prefetch, when set, is told the keys of up to keyBatch records of
	// one database before they reach Key, in the file's order: a keyspace
	// touches their buckets together, so that the cache misses of the
	// batch's inserts overlap instead of following one another
	// (keyspace/prefetch.go). Errors are the same as key by key: a
	// batch reaches Key before any other error is returned.
	Prefetch func(db int, keys [][]byte)
}

// keyBatch is how many decoded keys wait for Key together when the
// Loader has a Prefetch.
const keyBatch = 16

// pending is the decoded keys not yet given to Key, with where each
// record starts in the file (not in the reader's window, which moves).
type pending struct {
	db   int
	objs []*keyspace.Object
	at   []int64
	keys [][]byte
}

// flush gives the pending keys to Key. An error names the record's
// offset in r's window (LoadFrom adds the window's base).
func (l *Loader) flush(p *pending, r *reader, info *FileInfo) error {
	if len(p.objs) == 0 {
		return nil
	}
	if l.Prefetch != nil {
		p.keys = p.keys[:0]
		for _, o := range p.objs {
			p.keys = append(p.keys, unsafe.Slice(unsafe.StringData(o.Key), len(o.Key)))
		}
		l.Prefetch(p.db, p.keys)
		clear(p.keys)
	}
	var err error
	for i, o := range p.objs {
		if err = l.Key(p.db, o); err != nil {
			err = &CorruptError{Offset: int(p.at[i] - r.base()), What: err.Error()}
			break
		}
		info.Keys[o.Type]++
		if o.Expire != 0 {
			info.Expires++
		}
	}
	clear(p.objs)
	p.objs, p.at = p.objs[:0], p.at[:0]
	return err
}

// Load parses a whole file held in b. It checks the checksum before
// anything reaches Key, so a corrupt file loads nothing, and a structural
// error names its offset.
func (l *Loader) Load(b []byte) (*FileInfo, error) { return l.load(&reader{b: b}) }

// load decodes the file r holds, or streams (loadstream.go).
func (l *Loader) load(r *reader) (*FileInfo, error) {
	info := &FileInfo{Aux: map[string]string{}, Keys: map[keyspace.Type]int{}}
	var p pending
	got, err := l.records(r, info, &p)
	if ferr := l.flush(&p, r, info); ferr != nil {
		// A key refused before the error found later, as key by key.
		return nil, ferr
	}
	return got, err
}

// records decodes the file's records, leaving up to keyBatch decoded
// keys in p for load to flush.
func (l *Loader) records(r *reader, info *FileInfo, p *pending) (*FileInfo, error) {
	if r.src != nil {
		r.fill(9) // too short is told below
	}
	b := r.b
	if len(b) < 9 || string(b[:5]) != "REDIS" {
		return nil, &CorruptError{Offset: 0, What: "wrong signature trying to load DB from file"}
	}
	ver, err := strconv.Atoi(string(b[5:9]))
	if err != nil || ver < 1 || ver > MaxVersion {
		return nil, &CorruptError{Offset: 5, What: fmt.Sprintf("can't handle RDB format version %q", b[5:9])}
	}
	info.Version = ver
	if r.src == nil {
		end, err := l.verify(b, ver, info)
		if err != nil {
			return nil, err
		}
		r.b = b[:end]
	}
	r.off = 9
	db := 0
	var expire int64
	// The IDLE or FREQ that came before the next key.
	var (
		idle             uint64
		freq             byte
		hasIdle, hasFreq bool
	)
	for {
		r.boundary()
		at := r.off
		op, err := r.byte()
		if err != nil {
			return nil, r.eofError(err)
		}
		switch op {
		case opEOF:
			if err := l.flush(p, r, info); err != nil {
				return nil, err
			}
			if r.src != nil {
				return info, r.finishStream(at, ver, l.SkipChecksum, info)
			}
			info.EOFOffset = at
			return info, nil
		case opAux:
			k, err := r.bstr()
			if err != nil {
				return nil, r.eofError(err)
			}
			v, err := r.bstr()
			if err != nil {
				return nil, r.eofError(err)
			}
			info.Aux[string(k)] = string(v)
		case opSelectDB:
			n, err := r.count()
			if err != nil {
				return nil, r.eofError(err)
			}
			if n > 1<<20 {
				return nil, &CorruptError{Offset: at, What: fmt.Sprintf("database id %d out of range", n)}
			}
			db = int(n)
		case opResizeDB:
			var hint [2]uint64
			for i := range hint {
				if hint[i], err = r.count(); err != nil {
					return nil, r.eofError(err)
				}
			}
			if l.Reserve != nil {
				// A key takes 3 bytes at least: a hint past what the
				// input can hold is not believed that far.
				most := uint64(r.bound() / 3)
				l.Reserve(db, int(min(hint[0], most)), int(min(hint[1], most)))
			}
		case opSlotInfo:
			for range 3 {
				if _, err := r.count(); err != nil {
					return nil, r.eofError(err)
				}
			}
		case opExpireTimeMs:
			if expire, err = r.millis(); err != nil {
				return nil, r.eofError(err)
			}
		case opExpireTime:
			p, err := r.bytes(4)
			if err != nil {
				return nil, r.eofError(err)
			}
			expire = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
		case opIdle:
			if idle, err = r.count(); err != nil {
				return nil, r.eofError(err)
			}
			hasIdle = true
		case opFreq:
			if freq, err = r.byte(); err != nil {
				return nil, r.eofError(err)
			}
			hasFreq = true
		case opFunction2:
			code, err := r.bstr()
			if err != nil {
				return nil, r.eofError(err)
			}
			if l.Function == nil {
				return nil, &CorruptError{Offset: at, What: "function libraries are not accepted here"}
			}
			if err := l.Function(code); err != nil {
				return nil, &CorruptError{Offset: at, What: "function library: " + err.Error()}
			}
			info.Functions++
		case opFunctionPreGA:
			return nil, &CorruptError{Offset: at, What: "pre-release function format (Redis 7.0 RC) is not supported"}
		case opModuleAux:
			return nil, &CorruptError{Offset: at, What: "module data is not supported"}
		default:
			key, err := r.bstrInto(&r.keyBuf)
			if err != nil {
				return nil, r.eofError(err)
			}
			o, err := r.value(op, l.Opt)
			if err == ErrAllExpired {
				l.skip(info, db, keyspace.TypeHash)
				expire, hasIdle, hasFreq = 0, false, false
				continue
			}
			if err != nil {
				if _, ok := err.(*CorruptError); !ok {
					err = &CorruptError{Offset: at, What: fmt.Sprintf("key %q: %v", key, err)}
				}
				return nil, r.eofError(err)
			}
			if expire != 0 && expire <= l.Opt.Now && !l.Opt.KeepExpired {
				l.skip(info, db, o.Type)
				expire, hasIdle, hasFreq = 0, false, false
				continue
			}
			o.Expire = expire
			o.Key = string(key)
			// The key's IDLE or FREQ, whichever the policy in force
			// uses (Redis's objectSetLRUOrLFU; the other is ignored), or
			// a new object's metadata under that policy (createObject's:
			// accessed now, or LFU_INIT_VAL), whatever the keyspace being
			// loaded into was told of the policy.
			switch {
			case l.Opt.LFU && hasFreq:
				o.LRU = keyspace.LFUFromFreq(freq, l.Opt.Now)
			case l.Opt.LFU:
				o.LRU = keyspace.LFUFromFreq(keyspace.LFUInitVal, l.Opt.Now)
			case hasIdle:
				o.LRU = keyspace.LRUFromIdle(idle, l.Opt.Now)
			default:
				o.LRU = keyspace.LRUFromIdle(0, l.Opt.Now)
			}
			hasIdle, hasFreq = false, false
			if s, ok := o.Val().(*ts.Series); ok {
				s.Name = o.Key // its compaction links are by this name
			}
			expire = 0
			if l.Prefetch == nil || len(p.objs) > 0 && p.db != db {
				if err := l.flush(p, r, info); err != nil {
					return nil, err
				}
			}
			p.db = db
			p.objs = append(p.objs, o)
			p.at = append(p.at, int64(at)+r.base())
			if l.Prefetch == nil || len(p.objs) == keyBatch {
				if err := l.flush(p, r, info); err != nil {
					return nil, err
				}
			}
		}
	}
}

// skip counts a key left out for its TTL.
func (l *Loader) skip(info *FileInfo, db int, typ keyspace.Type) {
	info.Skipped++
	if l.Expired != nil {
		l.Expired(db, typ)
	}
}

// eofError turns running out of input into an error with the offset.
func (r *reader) eofError(err error) error {
	if err == ErrTruncated {
		return &CorruptError{Offset: r.off, What: "unexpected end of file"}
	}
	return err
}

// verify checks the checksum of a version >= 5 file and returns where its
// records end (the EOF opcode included).
func (l *Loader) verify(b []byte, ver int, info *FileInfo) (int, error) {
	if ver < 5 {
		return len(b), nil
	}
	if l.SkipChecksum {
		if n := len(b); n >= 9+1+8 && b[n-9] == opEOF {
			info.Checksum = binary.LittleEndian.Uint64(b[n-8:])
			return n - 8, nil
		}
		return len(b), nil
	}
	if len(b) < 9+1+8 {
		return 0, &CorruptError{Offset: len(b), What: "unexpected end of file"}
	}
	end := len(b) - 8
	if b[end-1] != opEOF {
		return 0, &CorruptError{Offset: end - 1, What: "file does not end with the EOF opcode and checksum (truncated?)"}
	}
	want := binary.LittleEndian.Uint64(b[end:])
	info.Checksum = want
	if want != 0 {
		if got := checksum(b[:end]); got != want {
			return 0, &CorruptError{Offset: end, What: fmt.Sprintf("wrong RDB checksum expected: (%x) got: (%x)", want, got)}
		}
	}
	return end, nil
}

// LoadKeyspace loads a file into ks, whose databases must be empty, and
// refuses a file with function libraries unless fn takes them. Nothing is
// added when the checksum is wrong; a structural error found later leaves
// the keys read before it (the caller discards ks then).
func LoadKeyspace(ks *keyspace.Keyspace, b []byte, opt Options, fn func(code []byte) error) (*FileInfo, error) {
	return keyspaceLoader(ks, opt, fn).Load(b)
}

// keyspaceLoader is a Loader that adds each key to ks.
func keyspaceLoader(ks *keyspace.Keyspace, opt Options, fn func(code []byte) error) *Loader {
	return &Loader{Opt: opt, Function: fn, Reserve: func(db, keys, expires int) {
		if db < len(ks.DBs) {
			ks.DBs[db].Reserve(keys, expires)
		}
	}, Prefetch: func(db int, keys [][]byte) {
		if db < len(ks.DBs) {
			ks.DBs[db].Prefetch(keys, 1)
		}
	}, Key: func(db int, o *keyspace.Object) error {
		if db >= len(ks.DBs) {
			return fmt.Errorf("database %d out of range (databases %d)", db, len(ks.DBs))
		}
		// One lookup per key: a duplicate shows as a count that did not
		// grow (it replaced the first, but the load fails and ks goes).
		d := ks.DBs[db]
		n := d.Len()
		d.Add(o.Key, o)
		if d.Len() == n {
			return fmt.Errorf("duplicate key %q", o.Key)
		}
		return nil
	}}
}
