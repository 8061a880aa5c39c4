package commands_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Random streams of hash commands (fixed seeds) over a few keys, sent to
// Abacus and redis-server with every reply compared (see hhDo), and the
// dirty, hit and miss counters compared every 100 commands. Each stream runs
// under its own listpack limits, so that both encodings and the conversion
// between them come up.

const hhStreamLen = 3500

type hhGen struct{ *skGen }

// field draws a field name: mostly from a small set so commands meet each
// other's fields, sometimes long (past a small hash-max-listpack-value).
func (g hhGen) field() string {
	switch g.r.IntN(20) {
	case 0:
		return "long-field-name-" + strings.Repeat("f", 10+g.r.IntN(60))
	case 1:
		return ""
	default:
		return "f" + g.intn(12)
	}
}

// hvalue draws a value: those of the strings tests, plus numbers that
// HINCRBY and HINCRBYFLOAT accept and long text.
func (g hhGen) hvalue() string {
	switch g.r.IntN(10) {
	case 0:
		return strings.Repeat("v", 20+g.r.IntN(60))
	case 1, 2:
		return strconv.Itoa(g.r.IntN(200) - 100)
	case 3:
		return g.pick("1.5", "-2.25", "1e3", "0.1", "3.0e-5", "inf", "abc")
	default:
		return g.value()
	}
}

func (g hhGen) incr() string {
	switch g.r.IntN(8) {
	case 0:
		return g.pick("9223372036854775807", "-9223372036854775808", "4611686018427387904")
	case 1:
		return g.pick("1.5", "x", "")
	default:
		return strconv.Itoa(g.r.IntN(21) - 10)
	}
}

func (g hhGen) fincr() string {
	switch g.r.IntN(8) {
	case 0:
		return g.pick("1e30", "-1e30", "1e-20", "inf", "nan", "x", "1.7976931348623157e308")
	case 1:
		return strconv.FormatFloat(g.r.NormFloat64()*1000, 'f', g.r.IntN(8), 64)
	default:
		return strconv.Itoa(g.r.IntN(21)-10) + g.pick("", ".5", ".25", ".125", "e1", "e-2")
	}
}

// command returns the next command; scan reports an HSCAN to be run as a
// whole iteration on each server.
func (g hhGen) command() (args []string, scan bool) {
	k := g.key()
	switch g.r.IntN(30) {
	case 0, 1, 2, 3:
		args = []string{g.pick("HSET", "HSET", "HMSET"), k}
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			args = append(args, g.field(), g.hvalue())
		}
	case 4:
		args = []string{"HSETNX", k, g.field(), g.hvalue()}
	case 5, 6:
		args = []string{"HGET", k, g.field()}
	case 7:
		args = []string{"HMGET", k}
		for n := 1 + g.r.IntN(4); n > 0; n-- {
			args = append(args, g.field())
		}
	case 8, 9:
		args = []string{"HDEL", k}
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			args = append(args, g.field())
		}
	case 10:
		args = []string{g.pick("HLEN", "EXISTS", "TYPE", "OBJECT"), k}
		if args[0] == "OBJECT" {
			args = []string{"OBJECT", "ENCODING", k}
		}
	case 11:
		args = []string{g.pick("HEXISTS", "HSTRLEN"), k, g.field()}
	case 12, 13, 14:
		args = []string{"HINCRBY", k, g.field(), g.incr()}
	case 15, 16:
		args = []string{"HINCRBYFLOAT", k, g.field(), g.fincr()}
	case 17, 18:
		args = []string{g.pick("HGETALL", "HKEYS", "HVALS"), k}
	case 19:
		// Counts that give the whole hash (compared exactly in the
		// listpack form), none, or a fixed number of random picks
		// (compared by shape in hhRandShape).
		args = []string{"HRANDFIELD", k, g.pick("0", "100", "1000", "-3", "2", "1")}
		if g.r.IntN(2) == 0 {
			args = append(args, "WITHVALUES")
		}
	case 20:
		args = []string{"HRANDFIELD", k}
	case 21, 22:
		args = []string{"HSCAN", k, "0"}
		if g.r.IntN(2) == 0 {
			args = append(args, "MATCH", g.pick("f1*", "*", "f?", "long*", "[f]*0"))
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", g.pick("1", "5", "100"))
		}
		return args, true
	case 23:
		// Keys restart often, so that new hashes keep passing through
		// the listpack form.
		args = []string{"DEL", k}
	case 24:
		// Wrong type: s holds a string.
		args = []string{g.pick("HSET", "HGET", "HINCRBY", "HDEL", "HLEN", "HGETALL", "HSCAN", "HRANDFIELD"), "s"}
		switch args[0] {
		case "HSET", "HINCRBY":
			args = append(args, "f", "1")
		case "HGET", "HDEL":
			args = append(args, "f")
		case "HSCAN":
			args = append(args, "0")
		}
	case 25:
		args = []string{"HSET", k, g.field(), strings.Repeat("x", g.r.IntN(100))}
	default:
		args = []string{"HSET", k, g.field(), g.hvalue()}
	}
	return args, false
}

// hhStreamStats counts what a stream met, so that a test can require that
// it covered both encodings and the error paths.
type hhStreamStats struct {
	listpack, hashtable, errors, scans int
}

// hhRunStream sends n commands to both servers.
func hhRunStream(t *testing.T, d *servertest.Diff, seed uint64, n int) hhStreamStats {
	var st hhStreamStats
	g := hhGen{newSkGen(seed, 4)}
	for i, k := range g.keys {
		g.keys[i] = "h" + k
	}
	hhDo(t, d, "SET", "s", "string")
	dc := newSkDirtyCheck(t, d)
	for i := 0; i < n; i++ {
		args, scan := g.command()
		switch {
		case scan && d.Do("OBJECT", "ENCODING", args[1]) == "$9\r\nhashtable\r\n":
			// Cursors differ between the two tables: compare what a whole
			// iteration returns, then restart the counters (the two sides
			// may take different numbers of calls).
			a, _ := hhScanAll(t, d.A, args[1], args[3:]...)
			r, _ := hhScanAll(t, d.R, args[1], args[3:]...)
			if !slices.Equal(a, r) {
				t.Errorf("command %d: HSCAN %v iteration\n abacus: %q\n  redis: %q", i, args[1:], a, r)
			}
			dc = newSkDirtyCheck(t, d)
			st.scans++
		case args[0] == "HRANDFIELD" && args[1] != "s" && (len(args) == 2 || strings.HasPrefix(args[2], "-") || args[2] == "1" || args[2] == "2"):
			hhRandShape(t, d, args)
		default:
			reply := hhDo(t, d, args...)
			switch {
			case strings.HasPrefix(reply, "-"):
				st.errors++
			case args[0] == "OBJECT" && reply == "$8\r\nlistpack\r\n":
				st.listpack++
			case args[0] == "OBJECT" && reply == "$9\r\nhashtable\r\n":
				st.hashtable++
			}
		}
		if i%100 == 99 {
			dc.check(t, d, "stream up to command "+strconv.Itoa(i))
			if t.Failed() {
				t.FailNow() // one divergence cascades; stop at the first
			}
		}
	}
	for _, k := range g.keys {
		hhDo(t, d, "HGETALL", k)
		hhDo(t, d, "OBJECT", "ENCODING", k)
	}
	return st
}

// hhCovered fails the test if a stream did not meet both encodings, errors
// and whole HSCAN iterations of a hashtable.
func hhCovered(t *testing.T, st hhStreamStats) {
	t.Helper()
	t.Logf("stream met %+v", st)
	if st.listpack == 0 || st.hashtable == 0 || st.errors == 0 || st.scans == 0 {
		t.Errorf("the stream did not cover both encodings, errors and hashtable scans: %+v", st)
	}
}

// hhRandShape compares a random HRANDFIELD by shape: the same reply type and
// length, and fields that the key holds.
func hhRandShape(t *testing.T, d *servertest.Diff, args []string) {
	t.Helper()
	a, r := d.A.Do(args...), d.R.Do(args...)
	va, err1 := servertest.Parse(a)
	vr, err2 := servertest.Parse(r)
	if err1 != nil || err2 != nil || va.Kind != vr.Kind || len(va.Items) != len(vr.Items) || va.Null != vr.Null {
		t.Errorf("%v\n abacus: %.200q\n  redis: %.200q", args, a, r)
		return
	}
	if va.Kind == '$' && !va.Null {
		va.Items = []servertest.Reply{va}
	} else if va.Kind != '*' {
		return
	}
	step := 1
	if len(args) == 4 {
		step = 2
	}
	for i := 0; i < len(va.Items); i += step {
		f := va.Items[i].Str
		if got := d.A.Do("HEXISTS", args[1], f); got != ":1\r\n" {
			t.Errorf("%v returned %q, which HEXISTS does not find", args, f)
		}
		d.R.Do("HEXISTS", args[1], f) // the same lookups on both sides
	}
}

func TestHashesDiffStreamDefault(t *testing.T) {
	d, _ := hhDiff(t)
	hhCovered(t, hhRunStream(t, d, 1, hhStreamLen))
}

func TestHashesDiffStreamSmall(t *testing.T) {
	d, _ := hhDiff(t)
	hhLimits(t, d, "16", "24")
	hhCovered(t, hhRunStream(t, d, 2, hhStreamLen))
}

// TestHashesDiffStreamLimitsChange changes the limits in the middle of the
// stream: existing hashes meet the new limits at their next write.
func TestHashesDiffStreamLimitsChange(t *testing.T) {
	d, _ := hhDiff(t)
	var all hhStreamStats
	for i, l := range [][2]string{{"3", "8"}, {"512", "64"}, {"1", "100"}, {"20", "4"}, {"0", "64"}} {
		hhLimits(t, d, l[0], l[1])
		st := hhRunStream(t, d, uint64(10+i), 800)
		all.listpack += st.listpack
		all.hashtable += st.hashtable
		all.errors += st.errors
		all.scans += st.scans
	}
	hhCovered(t, all)
}
