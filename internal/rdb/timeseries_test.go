package rdb

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/testenv"
)

// Time series as ABACUS-TS module values: every field comes back, the
// encoding survives decoding/re-encoding, redis-check-rdb walks a file
// holding them, and malformed values are refused.

// describeSeries lists everything serialization must keep.
func describeSeries(s *ts.Series) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ts ret=%d chunk=%d unc=%v pol=%d ign=%d/%v src=%q n=%d chunks=%d\n",
		s.Retention, s.ChunkSize, s.Uncompressed, s.Policy, s.IgnoreMaxTime, s.IgnoreMaxVal, s.Source, s.Len(), s.Chunks())
	for _, l := range s.Labels {
		fmt.Fprintf(&b, "label %q=%q\n", l.Name, l.Value)
	}
	for _, r := range s.Rules {
		fmt.Fprintf(&b, "rule %q %s %d %d %+v\n", r.Dest, r.Agg, r.Bucket, r.Align, r.State())
	}
	s.EachChunk(func(tss []int64, vs []float64) {
		fmt.Fprintf(&b, "chunk")
		for i, t := range tss {
			fmt.Fprintf(&b, " %d:%x", t, math.Float64bits(vs[i]))
		}
		b.WriteByte('\n')
	})
	return b.String()
}

// tsFixtures are series covering the settings and value shapes.
func tsFixtures() map[string]*ts.Series {
	out := map[string]*ts.Series{}
	out["empty"] = ts.New()

	s := ts.New()
	s.Retention, s.ChunkSize, s.Policy = 5000, 64, ts.PolicySum
	s.IgnoreMaxTime, s.IgnoreMaxVal = 3, 0.25
	s.Labels = []ts.Label{{Name: "kind", Value: "temp"}, {Name: "", Value: "é"}}
	s.AddRule("avg", ts.AggAvg, 100, 0)
	s.AddRule("twa", ts.AggTwa, 70, 13)
	for i := range 400 {
		s.Add(int64(1000+i*9), float64(i%23)-0.5, s.Policy)
	}
	s.Add(1009, 4, ts.PolicySum) // an edit before the latest
	out["rules"] = s

	u := ts.New()
	u.Uncompressed, u.ChunkSize = true, 48
	u.Source = "rules"
	for i, v := range []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.NaN(), 1e308, -5e-324} {
		u.Add(int64(i)*1_000_000_007-3, v, ts.PolicyLast)
	}
	out["raw"] = u

	w := ts.New()
	w.Add(math.MinInt64+1, 1, ts.PolicyNone) // extreme timestamps
	w.Add(math.MaxInt64, 2, ts.PolicyNone)
	out["wide"] = w
	return out
}

func TestTimeSeriesRoundTrip(t *testing.T) {
	for name, s := range tsFixtures() {
		o := keyspace.NewValue(keyspace.TypeTimeSeries, s)
		p, err := Dump(o, EncodeOptions{Compress: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p[0] != TypeModule2 || VersionFor(p[0]) != Version {
			t.Fatalf("%s: type %d", name, p[0])
		}
		back, err := Restore(p, DefaultOptions())
		if err != nil {
			t.Fatalf("%s: restore: %v", name, err)
		}
		if back.Type != keyspace.TypeTimeSeries {
			t.Fatalf("%s: type %v", name, back.Type)
		}
		got, want := describeSeries(back.Val().(*ts.Series)), describeSeries(s)
		if got != want {
			t.Errorf("%s:\ngot  %.3000s\nwant %.3000s", name, got, want)
		}
		// a re-encoding is byte for byte the same
		if p2, _ := Dump(back, EncodeOptions{Compress: true}); !bytes.Equal(p, p2) {
			t.Errorf("%s: re-encoding differs", name)
		}
		// every truncation is an error, never a panic
		body := p[1 : len(p)-10]
		for n := range len(body) {
			if _, _, err := DecodeValue(TypeModule2, body[:n], DefaultOptions()); err == nil {
				t.Fatalf("%s: truncated to %d bytes accepted", name, n)
			}
		}
	}
}

func TestModuleID(t *testing.T) {
	id := ModuleID(TSModuleName, TSModuleEncVer)
	if name, ver := ModuleName(id); name != TSModuleName || ver != TSModuleEncVer {
		t.Fatalf("ModuleName(%x) = %s %d", id, name, ver)
	}
	// RedisTimeSeries's type is another id: its loader never sees ours
	if ModuleID("TSDB-TYPE", 1) == id {
		t.Fatal("same id as TSDB-TYPE")
	}
	// another module's value is refused as unsupported, not misread
	other := appendLen(nil, ModuleID("TSDB-TYPE", 4))
	_, _, err := DecodeValue(TypeModule2, append(other, modEOF), DefaultOptions())
	if _, ok := err.(*UnsupportedError); !ok {
		t.Fatalf("other module: %v", err)
	}
}

func TestTimeSeriesMalformed(t *testing.T) {
	s := tsFixtures()["rules"]
	good := appendSeries(nil, s)
	opt := DefaultOptions()
	if _, n, err := DecodeValue(TypeModule2, good, opt); err != nil || n != len(good) {
		t.Fatalf("good: %v %d/%d", err, n, len(good))
	}
	// flipping any single byte is refused or decodes to a series; never
	// panics (timestamps out of order are caught by AppendChunk)
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0x5a
		_, _, _ = DecodeValue(TypeModule2, b, opt)
	}
	// chunks out of order
	bad := ts.New()
	bad.Add(10, 1, ts.PolicyNone)
	enc := appendSeries(nil, bad)
	two := bytes.Replace(enc, []byte{modUInt, 1, modUInt, 1}, []byte{modUInt, 2, modUInt, 1}, 1)
	if bytes.Equal(two, enc) {
		t.Fatal("chunk count not found")
	}
	blob := enc[len(enc)-1-11 : len(enc)-1] // the chunk's string: length and 10 bytes
	two = append(append(two[:len(two)-1], modUInt, 1, modString), blob...)
	two = append(two, modEOF)
	if _, _, err := DecodeValue(TypeModule2, two, opt); err == nil {
		t.Fatal("a chunk repeating the timestamps of the one before was accepted")
	}
}

// A file with series: the loader returns them, redis-check-rdb (which
// walks module values by their opcodes) says the file is OK.
func TestTimeSeriesFile(t *testing.T) {
	ks := keyspace.New(16)
	for name, s := range tsFixtures() {
		ks.DBs[1].Add(name, keyspace.NewValue(keyspace.TypeTimeSeries, s))
	}
	ks.DBs[1].Add("str", keyspace.NewString([]byte("v")))
	var buf bytes.Buffer
	if err := WriteKeyspace(&buf, ks, []string{"redis-ver", "7.0.15"}, nil, EncodeOptions{Compress: true}); err != nil {
		t.Fatal(err)
	}
	back := keyspace.New(16)
	info, err := LoadKeyspace(back, buf.Bytes(), DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Keys[keyspace.TypeTimeSeries] != 4 || info.Keys[keyspace.TypeString] != 1 {
		t.Fatalf("info %+v", info)
	}
	for name, s := range tsFixtures() {
		o := back.DBs[1].Peek(name)
		if o == nil || o.Type != keyspace.TypeTimeSeries {
			t.Fatalf("%s missing", name)
		}
		if got, want := describeSeries(o.Val().(*ts.Series)), describeSeries(s); got != want {
			t.Errorf("%s:\ngot  %.2000s\nwant %.2000s", name, got, want)
		}
	}
	path := testenv.Need(t, "redis-check-rdb")
	f := filepath.Join(t.TempDir(), "ts.rdb")
	if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, f).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Errorf("redis-check-rdb: %v\n%s", err, out)
	}
}

// tsSeeds are series payloads for the fuzz targets.
func tsSeeds() [][]byte {
	var out [][]byte
	for _, s := range tsFixtures() {
		p, _ := Dump(keyspace.NewValue(keyspace.TypeTimeSeries, s), EncodeOptions{})
		if len(p) < 4096 {
			out = append(out, p)
		}
	}
	return out
}

// tsFileSeed is a small file holding series, for FuzzLoadFile.
func tsFileSeed() []byte {
	ks := keyspace.New(16)
	s := ts.New()
	s.Labels = []ts.Label{{Name: "a", Value: "b"}}
	s.AddRule("d", ts.AggMax, 10, 0)
	for i := range 5 {
		s.Add(int64(i*4), float64(i), ts.PolicyNone)
	}
	ks.DBs[0].Add("s", keyspace.NewValue(keyspace.TypeTimeSeries, s))
	var buf bytes.Buffer
	_ = WriteKeyspace(&buf, ks, nil, nil, EncodeOptions{})
	return buf.Bytes()
}

// Version 1 payloads (testdata/ts_v1, written by the version-1 encoder
// from tsFixtures) still load, to the same series; written again they are
// version 2, and a compressed series takes less room than before.
func TestTimeSeriesLoadsVersion1(t *testing.T) {
	for name, s := range tsFixtures() {
		p, err := os.ReadFile(filepath.Join("testdata", "ts_v1", name+".v1"))
		if err != nil {
			t.Fatal(err)
		}
		if id, _, _ := (&reader{b: p[1:]}).length(); id != ModuleID(TSModuleName, 1) {
			t.Fatalf("%s: fixture is not version 1", name)
		}
		back, err := Restore(p, DefaultOptions())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := describeSeries(back.Val().(*ts.Series)), describeSeries(s); got != want {
			t.Errorf("%s:\ngot  %.3000s\nwant %.3000s", name, got, want)
		}
		p2, _ := Dump(back, EncodeOptions{Compress: true})
		if id, _, _ := (&reader{b: p2[1:]}).length(); id != ModuleID(TSModuleName, TSModuleEncVer) {
			t.Fatalf("%s: rewritten with another version", name)
		}
		if name == "rules" && len(p2)*2 > len(p) {
			t.Errorf("%s: version 2 takes %d bytes, version 1 %d", name, len(p2), len(p))
		}
	}
}
