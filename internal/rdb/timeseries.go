package rdb

import (
	"encoding/binary"
	"math"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Time series are written as module values (TypeModule2) of a module type
// of Abacus's own, "ABACUS-TS", never RedisTimeSeries's "TSDB-TYPE": a
// redis-server without that module type refuses the value cleanly ("no
// matching module type"), a redis-server with RedisTimeSeries does too
// (another name, so its loader is never handed bytes it would misread),
// and redis-check-rdb walks the value through the module opcodes without
// knowing the type. See docs/rdb.md for the layout.

// Module value opcodes (RDB_MODULE_OPCODE_*).
const (
	modEOF    = 0
	modSInt   = 1
	modUInt   = 2
	modFloat  = 3
	modDouble = 4
	modString = 5
)

// Time series module type: name and encoding version. Version 2 writes a
// compressed chunk's bit stream as it is in memory (under a byte a sample
// for regular metrics); version 1 wrote every chunk's samples as varint
// timestamp deltas and 8-byte values (about 10 bytes a sample), and is
// still read.
const (
	TSModuleName   = "ABACUS-TS"
	TSModuleEncVer = 2
)

const moduleCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleID is the 64-bit id Redis writes for a 9-character module type
// name and encoding version (moduleTypeEncodeId).
func ModuleID(name string, encver int) uint64 {
	var id uint64
	for i := 0; i < len(name); i++ {
		id = id<<6 | uint64(indexByte(moduleCharset, name[i]))
	}
	return id<<10 | uint64(encver&1023)
}

// ModuleName is the type name and encoding version a module id holds.
func ModuleName(id uint64) (string, int) {
	var b [9]byte
	enc := int(id & 1023)
	id >>= 10
	for i := 8; i >= 0; i-- {
		b[i] = moduleCharset[id&63]
		id >>= 6
	}
	return string(b[:]), enc
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return 0
}

// tsModuleID is the id series are written under; tsModuleIDv1 that of
// version 1.
var (
	tsModuleID   = ModuleID(TSModuleName, TSModuleEncVer)
	tsModuleIDv1 = ModuleID(TSModuleName, 1)
)

func appendModUInt(b []byte, v uint64) []byte { return appendLen(append(b, modUInt), v) }
func appendModSInt(b []byte, v int64) []byte  { return appendLen(append(b, modSInt), uint64(v)) }
func appendModDouble(b []byte, f float64) []byte {
	return appendBinaryDouble(append(b, modDouble), f)
}
func appendModString(b []byte, s []byte) []byte {
	return appendString(append(b, modString), s, false)
}

func boolBit(v bool, bit uint64) uint64 {
	if v {
		return bit
	}
	return 0
}

const (
	tsUncompressed = 1
	ruleOpen       = 1
	ruleUsed       = 2
	ruleHasPrev    = 4
)

// appendSeries writes a series' module value (after the type byte): the
// module id, then the fields, each behind its opcode, then EOF.
func appendSeries(dst []byte, s *ts.Series) []byte {
	dst = appendLen(dst, tsModuleID)
	dst = appendModSInt(dst, s.Retention)
	dst = appendModUInt(dst, uint64(s.ChunkSize))
	dst = appendModUInt(dst, boolBit(s.Uncompressed, tsUncompressed))
	dst = appendModUInt(dst, uint64(s.Policy))
	dst = appendModSInt(dst, s.IgnoreMaxTime)
	dst = appendModDouble(dst, s.IgnoreMaxVal)
	dst = appendModUInt(dst, uint64(len(s.Labels)))
	for _, l := range s.Labels {
		dst = appendModString(dst, []byte(l.Name))
		dst = appendModString(dst, []byte(l.Value))
	}
	dst = appendModString(dst, []byte(s.Source))
	dst = appendModUInt(dst, uint64(len(s.Rules)))
	for _, r := range s.Rules {
		st := r.State()
		dst = appendModString(dst, []byte(r.Dest))
		dst = appendModUInt(dst, uint64(r.Agg))
		dst = appendModSInt(dst, r.Bucket)
		dst = appendModSInt(dst, r.Align)
		dst = appendModUInt(dst, boolBit(st.Open, ruleOpen)|boolBit(st.Used, ruleUsed)|boolBit(st.HasPrev, ruleHasPrev))
		for _, v := range [...]int64{st.Origin, st.Start, st.Count, st.FirstT, st.LastT, st.Prev.T} {
			dst = appendModSInt(dst, v)
		}
		for _, f := range [...]float64{st.Sum, st.Min, st.Max, st.First, st.Last, st.DSum, st.DSq, st.Area, st.Prev.V} {
			dst = appendModDouble(dst, f)
		}
	}
	dst = appendModUInt(dst, uint64(s.Chunks()))
	var blob []byte
	s.EachChunkData(func(d *ts.ChunkData) {
		dst = appendModUInt(dst, uint64(d.N))
		if !s.Uncompressed {
			// the Gorilla stream as it is: its length in bits, its bytes
			dst = appendModUInt(dst, uint64(d.Bits))
			dst = appendModString(dst, d.Stream)
			return
		}
		blob = appendSamplesBlob(blob[:0], d.TS, d.VS)
		dst = appendModString(dst, blob)
	})
	return append(dst, modEOF)
}

// appendSamplesBlob is an uncompressed chunk's samples (every chunk's in
// version 1): the first timestamp whole, then deltas, as varints; values
// as their 8 raw bytes.
func appendSamplesBlob(blob []byte, tss []int64, vs []float64) []byte {
	prev := int64(0)
	for i, t := range tss {
		blob = binary.AppendVarint(blob, t-prev)
		prev = t
		blob = binary.LittleEndian.AppendUint64(blob, math.Float64bits(vs[i]))
	}
	return blob
}

// modReader reads module opcodes.
type modReader struct{ *reader }

func (m modReader) op(want byte) error {
	c, err := m.byte()
	if err != nil {
		return err
	}
	if c != want {
		m.off--
		return m.corrupt("module value: opcode %d where %d was expected", c, want)
	}
	return nil
}

func (m modReader) uint() (uint64, error) {
	if err := m.op(modUInt); err != nil {
		return 0, err
	}
	return m.plainLen()
}

func (m modReader) sint() (int64, error) {
	if err := m.op(modSInt); err != nil {
		return 0, err
	}
	v, err := m.plainLen()
	return int64(v), err
}

func (m modReader) plainLen() (uint64, error) {
	v, special, err := m.length()
	if err != nil {
		return 0, err
	}
	if special {
		return 0, m.corrupt("module value: encoded string where a number was expected")
	}
	return v, nil
}

func (m modReader) double() (float64, error) {
	if err := m.op(modDouble); err != nil {
		return 0, err
	}
	return m.binaryDouble()
}

func (m modReader) str() (string, error) {
	if err := m.op(modString); err != nil {
		return "", err
	}
	s, err := m.bstr()
	return string(s), err
}

// moduleValue reads a module value: a series of Abacus's type, or an
// UnsupportedError for any other module.
func (r *reader) moduleValue(typ byte) (*keyspace.Object, error) {
	start := r.off - 1
	id, special, err := r.length()
	if err != nil {
		return nil, err
	}
	if special || typ != TypeModule2 || (id != tsModuleID && id != tsModuleIDv1) {
		r.off = start
		return nil, &UnsupportedError{Type: typ}
	}
	s, err := modReader{r}.series(id == tsModuleIDv1)
	if err != nil {
		return nil, err
	}
	return keyspace.NewValue(keyspace.TypeTimeSeries, s), nil
}

// series reads the fields appendSeries writes (in version 1 when v1).
func (m modReader) series(v1 bool) (*ts.Series, error) {
	s := ts.New()
	var err error
	var u uint64
	fail := func() (*ts.Series, error) {
		if err == nil {
			err = m.corrupt("module value: bad time series")
		}
		return nil, err
	}
	if s.Retention, err = m.sint(); err != nil {
		return fail()
	}
	if u, err = m.uint(); err != nil || u > math.MaxInt32 {
		return fail()
	}
	s.ChunkSize = int(u)
	if u, err = m.uint(); err != nil || u&^tsUncompressed != 0 {
		return fail()
	}
	s.Uncompressed = u&tsUncompressed != 0
	if u, err = m.uint(); err != nil || u > uint64(ts.PolicySum) {
		return fail()
	}
	s.Policy = ts.Policy(u)
	if s.IgnoreMaxTime, err = m.sint(); err != nil {
		return fail()
	}
	if s.IgnoreMaxVal, err = m.double(); err != nil || !s.ValidSettings() {
		return fail()
	}
	if u, err = m.uint(); err != nil || u > uint64(m.bound()) {
		return fail()
	}
	for n := u; n > 0; n-- {
		var l ts.Label
		if l.Name, err = m.str(); err != nil {
			return fail()
		}
		if l.Value, err = m.str(); err != nil {
			return fail()
		}
		s.Labels = append(s.Labels, l)
	}
	if s.Source, err = m.str(); err != nil {
		return fail()
	}
	if u, err = m.uint(); err != nil || u > uint64(m.bound()) {
		return fail()
	}
	for n := u; n > 0; n-- {
		if err = m.rule(s); err != nil {
			return fail()
		}
	}
	if u, err = m.uint(); err != nil || u > uint64(m.bound()) {
		return fail()
	}
	var d ts.ChunkData
	for n := u; n > 0; n-- {
		if v1 || s.Uncompressed {
			if d.TS, d.VS, err = m.chunk(d.TS[:0], d.VS[:0]); err != nil {
				return fail()
			}
			err = s.AppendChunk(d.TS, d.VS)
		} else {
			if err = m.stream(&d); err != nil {
				return fail()
			}
			err = s.AppendChunkData(&d)
		}
		if err != nil {
			err = nil
			return fail()
		}
	}
	if err = m.op(modEOF); err != nil {
		return fail()
	}
	return s, nil
}

func (m modReader) rule(s *ts.Series) error {
	dest, err := m.str()
	if err != nil {
		return err
	}
	agg, err := m.uint()
	if err != nil {
		return err
	}
	if agg > 255 || !ts.ValidAgg(ts.Agg(agg)) || s.Rule(dest) != nil {
		return m.corrupt("module value: bad compaction rule")
	}
	var ints [8]int64 // bucket, align, origin, start, count, firstT, lastT, prev.T
	for i := range 2 {
		if ints[i], err = m.sint(); err != nil {
			return err
		}
	}
	flags, err := m.uint()
	if err != nil {
		return err
	}
	for i := 2; i < len(ints); i++ {
		if ints[i], err = m.sint(); err != nil {
			return err
		}
	}
	var fs [9]float64
	for i := range fs {
		if fs[i], err = m.double(); err != nil {
			return err
		}
	}
	if ints[0] <= 0 || flags&^(ruleOpen|ruleUsed|ruleHasPrev) != 0 || ints[4] < 0 {
		return m.corrupt("module value: bad compaction rule")
	}
	s.AddRule(dest, ts.Agg(agg), ints[0], ints[1])
	s.Rule(dest).SetState(ts.RuleState{
		Open: flags&ruleOpen != 0, Used: flags&ruleUsed != 0, HasPrev: flags&ruleHasPrev != 0,
		Origin: ints[2], Start: ints[3], Count: ints[4], FirstT: ints[5], LastT: ints[6],
		Sum: fs[0], Min: fs[1], Max: fs[2], First: fs[3], Last: fs[4], DSum: fs[5], DSq: fs[6], Area: fs[7],
		Prev: ts.Sample{T: ints[7], V: fs[8]},
	})
	return nil
}

// stream reads a compressed chunk of version 2: its sample count, its
// length in bits and its bytes (checked by AppendChunkData).
func (m modReader) stream(d *ts.ChunkData) error {
	n, err := m.uint()
	if err != nil {
		return err
	}
	bits, err := m.uint()
	if err != nil {
		return err
	}
	if err := m.op(modString); err != nil {
		return err
	}
	blob, err := m.blob()
	if err != nil {
		return err
	}
	if n == 0 || n > bits || bits > math.MaxUint32 || uint64(len(blob)) != (bits+7)/8 {
		return m.corrupt("module value: bad chunk")
	}
	d.N, d.Bits, d.Stream = int(n), uint32(bits), blob
	return nil
}

// chunk reads one chunk's samples (an uncompressed chunk, or any chunk of
// version 1).
func (m modReader) chunk(tss []int64, vs []float64) ([]int64, []float64, error) {
	n, err := m.uint()
	if err != nil {
		return nil, nil, err
	}
	if err := m.op(modString); err != nil {
		return nil, nil, err
	}
	blob, err := m.blob()
	if err != nil {
		return nil, nil, err
	}
	if n == 0 || n > uint64(len(blob))/9 {
		return nil, nil, m.corrupt("module value: bad chunk")
	}
	t := int64(0)
	for i := uint64(0); i < n; i++ {
		d, k := binary.Varint(blob)
		if k <= 0 || len(blob) < k+8 {
			return nil, nil, m.corrupt("module value: bad chunk")
		}
		t += d
		tss = append(tss, t)
		vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(blob[k:])))
		blob = blob[k+8:]
	}
	if len(blob) != 0 {
		return nil, nil, m.corrupt("module value: bad chunk")
	}
	return tss, vs, nil
}
