package rdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// check-rdb on good files, corrupted copies and truncations.

func runCheck(t *testing.T, b []byte) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.rdb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := CheckMain([]string{path}, &out)
	return out.String(), code
}

func TestCheckRedisFile(t *testing.T) {
	b, err := os.ReadFile("testdata/redis70.rdb")
	if err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, b)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// redis-check-rdb 7.0 on this file: 42 keys read, 6 expires
	for _, want := range []string{"[info] RDB version 10,", "AUX FIELD redis-ver = '7.0.15'", "[info] 42 keys read\n", "[info] 6 expires\n",
		"[info] 0 already expired\n", fmt.Sprintf("[offset %d] Checksum OK (%016x)", len(b)-8, binary.LittleEndian.Uint64(b[len(b)-8:])), "RDB looks OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	// the checksum stored in the file is wrong: both values are shown
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 1
	out, code = runCheck(t, bad)
	stored := binary.LittleEndian.Uint64(bad[len(bad)-8:])
	want := fmt.Sprintf("Checksum MISMATCH: file says %016x, computed %016x", stored, checksum(b[:len(b)-8]))
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "--- RDB ERROR DETECTED ---") {
		t.Errorf("bad checksum: exit %d, want %q in:\n%s", code, want, out)
	}
	// no checksum written
	zero := append([]byte(nil), b...)
	clear(zero[len(zero)-8:])
	if out, code = runCheck(t, zero); code != 0 || !strings.Contains(out, "checksum disabled") {
		t.Errorf("zero checksum: exit %d\n%s", code, out)
	}
	// every truncation fails and names an offset within the file
	offset := regexp.MustCompile(`(?m)^\[offset (\d+)\] `)
	for n := 0; n < len(b); n += 1 + n/7 {
		out, code = runCheck(t, b[:n])
		if code != 1 {
			t.Fatalf("truncated to %d: exit %d\n%s", n, code, out)
		}
		m := offset.FindAllStringSubmatch(out, -1)
		var at int
		fmt.Sscan(m[len(m)-1][1], &at)
		if at > n {
			t.Fatalf("truncated to %d: error at offset %d\n%s", n, at, out)
		}
	}
	// a byte changed inside a record: a decoding error or the CRC says so
	for _, i := range []int{9, 100, len(b) / 2, len(b) - 20} {
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		if out, code = runCheck(t, c); code != 1 || !strings.Contains(out, "--- RDB ERROR DETECTED ---\n[offset ") {
			t.Errorf("byte %d flipped: exit %d\n%s", i, code, out)
		}
	}
	// bytes after the checksum
	if out, code = runCheck(t, append(append([]byte(nil), b...), 0)); code != 1 {
		t.Errorf("trailing byte: exit %d\n%s", code, out)
	}
}

// Per-database counts, with TTLs and keys already expired, and series.
func TestCheckSummary(t *testing.T) {
	const now = 1_700_000_000_000
	ks := keyspace.New(16)
	for name, s := range tsFixtures() {
		ks.DBs[3].Add(name, keyspace.NewValue(keyspace.TypeTimeSeries, s))
	}
	for i := range 5 {
		o := keyspace.NewString([]byte("v"))
		if i < 2 {
			o.Expire = now + 1000*int64(i+1)
		}
		ks.DBs[0].Add(fmt.Sprint("s", i), o)
	}
	var buf bytes.Buffer
	if err := WriteKeyspace(&buf, ks, []string{"redis-ver", "7.0.15", "abacus", "yes"}, nil, EncodeOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.rdb")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// checked 1.5 s later: one of the two TTLs has passed
	rep, err := Check(f, now+1500)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	for _, want := range []string{
		"[info] AUX FIELD abacus = 'yes'\n",
		"[info] db 0: 4 keys (string=4), 1 with expiry, 1 already expired\n",
		"[info] db 3: 4 keys (TSDB-TYPE=4), 0 with expiry, 0 already expired\n",
		"[info] 8 keys read\n", "Checksum OK",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if !rep.Checked || rep.Stored != rep.Computed || rep.Stored != checksum(buf.Bytes()[:buf.Len()-8]) {
		t.Errorf("checksum %+v", rep)
	}
}
