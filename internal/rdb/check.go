package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/crc64"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// CheckMain is `abacus check-rdb FILE`, Abacus's redis-check-rdb: it
// verifies the CRC-64 (read in parallel from the file while the records
// are decoded), decodes every key, and prints a summary: the version, AUX
// fields, per database the keys by type, keys with a TTL and keys already
// expired, and the checksum. A corrupt or truncated file prints the offset
// and the reason and exits 1; 2 is a usage or I/O error.
func CheckMain(args []string, out io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") && args[0] != "-" {
		fmt.Fprintln(out, "Usage: abacus check-rdb <rdb-file-name>")
		return 2
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintf(out, "Cannot open RDB file %s: %v\n", args[0], err)
		return 2
	}
	defer f.Close()
	rep, err := Check(f, time.Now().UnixMilli())
	fmt.Fprintf(out, "[offset 0] Checking RDB file %s\n", args[0])
	if rep != nil {
		rep.Print(out)
	}
	if err != nil {
		var ce *CorruptError
		fmt.Fprintln(out, "--- RDB ERROR DETECTED ---")
		if errors.As(err, &ce) {
			fmt.Fprintf(out, "[offset %d] %s\n", ce.Offset, ce.What)
		} else {
			fmt.Fprintf(out, "%v\n", err)
		}
		return 1
	}
	fmt.Fprintf(out, "[offset %d] \\o/ RDB looks OK! \\o/\n", rep.Size)
	return 0
}

// DBReport counts the keys of one database in a checked file.
type DBReport struct {
	Keys    map[string]int // by type name
	Expires int            // keys with a TTL still ahead
	Expired int            // keys whose TTL had passed
}

// CheckReport is what Check found.
type CheckReport struct {
	Size      int64
	Version   int
	Aux       map[string]string
	Functions int
	DBs       map[int]*DBReport
	// Checksum: Stored is the file's (0: written without one), Computed
	// ours; Checked is false when there is nothing to compare (version < 5
	// or Stored 0).
	Stored, Computed uint64
	Checked          bool
	ChecksumAt       int64
}

// Print writes the summary.
func (r *CheckReport) Print(out io.Writer) {
	if r.Version == 0 {
		return
	}
	fmt.Fprintf(out, "[info] RDB version %d, %d bytes\n", r.Version, r.Size)
	for _, k := range slices.Sorted(mapKeys(r.Aux)) {
		fmt.Fprintf(out, "[info] AUX FIELD %s = '%s'\n", k, r.Aux[k])
	}
	if r.Functions > 0 {
		fmt.Fprintf(out, "[info] %d function libraries\n", r.Functions)
	}
	total, exp, gone := 0, 0, 0
	for _, id := range slices.Sorted(mapKeys(r.DBs)) {
		d := r.DBs[id]
		var parts []string
		n := 0
		for _, t := range slices.Sorted(mapKeys(d.Keys)) {
			parts = append(parts, fmt.Sprintf("%s=%d", t, d.Keys[t]))
			n += d.Keys[t]
		}
		fmt.Fprintf(out, "[info] db %d: %d keys (%s), %d with expiry, %d already expired\n",
			id, n, strings.Join(parts, " "), d.Expires, d.Expired)
		total, exp, gone = total+n, exp+d.Expires, gone+d.Expired
	}
	fmt.Fprintf(out, "[info] %d keys read\n[info] %d expires\n[info] %d already expired\n", total, exp, gone)
	switch {
	case r.Checked && r.Stored == r.Computed:
		fmt.Fprintf(out, "[offset %d] Checksum OK (%016x)\n", r.ChecksumAt, r.Stored)
	case r.Checked:
		fmt.Fprintf(out, "[offset %d] Checksum MISMATCH: file says %016x, computed %016x\n", r.ChecksumAt, r.Stored, r.Computed)
	case r.Version >= 5 && r.ChecksumAt > 0:
		fmt.Fprintf(out, "[offset %d] RDB file was saved with checksum disabled: no check performed.\n", r.ChecksumAt)
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Check reads a whole RDB file from f, decoding every record as a loader
// would at time now (unix ms) while the CRC-64 is computed from the file
// by parallel readers (crc64.ChecksumReaderAt). The report is filled as
// far as the file could be read; the error is a *CorruptError with the
// offset for a malformed or truncated file or a wrong checksum.
func Check(f *os.File, now int64) (*CheckReport, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, err
	}
	rep := &CheckReport{Size: size, DBs: map[int]*DBReport{}}
	// the checksum covers everything but the last 8 bytes; it runs while
	// the records are decoded
	type crcResult struct {
		crc uint64
		err error
	}
	crcDone := make(chan crcResult, 1)
	if size >= 9+1+8 {
		go func() {
			c, err := crc64.ChecksumReaderAt(f, 0, size-8, 0)
			crcDone <- crcResult{c, err}
		}()
	} else {
		crcDone <- crcResult{}
	}
	db := func(id int) *DBReport {
		d := rep.DBs[id]
		if d == nil {
			d = &DBReport{Keys: map[string]int{}}
			rep.DBs[id] = d
		}
		return d
	}
	opt := DefaultOptions()
	opt.Now = now
	l := &Loader{Opt: opt, SkipChecksum: true,
		Key: func(id int, o *keyspace.Object) error {
			d := db(id)
			d.Keys[o.Type.String()]++
			if o.Expire != 0 {
				d.Expires++
			}
			return nil
		},
		Function: func([]byte) error { return nil },
		Expired:  func(id int, _ keyspace.Type) { db(id).Expired++ },
	}
	info, lerr := l.Load(b)
	cr := <-crcDone
	if info != nil {
		rep.Version, rep.Aux, rep.Functions = info.Version, info.Aux, info.Functions
	} else if len(b) >= 9 {
		// the header was read; the summary says what came before the error
		fmt.Sscanf(string(b[5:9]), "%d", &rep.Version)
	}
	if lerr != nil {
		return rep, lerr
	}
	if info.Version < 5 {
		return rep, nil
	}
	end := int(size) - 8
	if info.EOFOffset != end-1 {
		return rep, &CorruptError{Offset: info.EOFOffset + 1, What: fmt.Sprintf("%d bytes after the EOF opcode where 8 (the checksum) were expected", int(size)-info.EOFOffset-1)}
	}
	if cr.err != nil {
		return rep, cr.err
	}
	rep.ChecksumAt = int64(end)
	rep.Stored = binary.LittleEndian.Uint64(b[end:])
	rep.Computed = cr.crc
	rep.Checked = rep.Stored != 0
	if rep.Checked && rep.Stored != rep.Computed {
		return rep, &CorruptError{Offset: end, What: fmt.Sprintf("RDB CRC error: file says %016x, computed %016x", rep.Stored, rep.Computed)}
	}
	return rep, nil
}
