package metrics_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Randomized bad-argument streams through raw RESP, one per family of the
// metrics commands: whatever the arguments, the server answers every
// command with one well-formed reply (the reader rejects a malformed one
// and fails on a dropped connection), never with the recovered-panic
// error, and no handler panics.

// fuzzNumbers are the numeric arguments most likely to hit a parsing hole.
var fuzzNumbers = []string{
	"0", "1", "-1", "2", "10", "1000", "60000", "86400000", "-0", "0.5", "-0.5", "1.5",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "4294967296", "2147483648",
	"1e308", "1e309", "-1e309", "1e-320", "nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity",
	"", " ", "1 ", " 1", "0x10", "1e3", "12abc", "+1", "00", "007", "*", "-", "+",
	"99999999999999999999999999999", "0.1e1", "5e-324", "1.7976931348623157e308",
}

type fuzzFamily struct {
	name  string
	cmds  []string
	words []string // option keywords and other family tokens
	keys  []string
	valid [][]string // well-formed commands the stream mutates
}

var fuzzFamilies = []fuzzFamily{
	{
		name: "timeseries",
		cmds: []string{"TS.CREATE", "TS.ALTER", "TS.ADD", "TS.MADD", "TS.INCRBY", "TS.DECRBY", "TS.DEL",
			"TS.GET", "TS.CREATERULE", "TS.DELETERULE", "TS.INFO", "TS.QUERYINDEX", "TS.RANGE",
			"TS.REVRANGE", "TS.MRANGE", "TS.MREVRANGE", "TS.MGET"},
		words: []string{"RETENTION", "ENCODING", "COMPRESSED", "UNCOMPRESSED", "CHUNK_SIZE",
			"DUPLICATE_POLICY", "ON_DUPLICATE", "IGNORE", "LABELS", "TIMESTAMP", "AGGREGATION",
			"avg", "sum", "min", "max", "range", "count", "first", "last", "std.p", "std.s",
			"var.p", "var.s", "twa", "countnan", "countall", "BLOCK", "FIRST", "LAST", "MIN", "MAX", "SUM",
			"LATEST", "FILTER_BY_TS", "FILTER_BY_VALUE", "COUNT", "ALIGN", "start", "end",
			"BUCKETTIMESTAMP", "mid", "EMPTY", "FILTER", "WITHLABELS", "SELECTED_LABELS", "GROUPBY",
			"REDUCE", "DEBUG", "a=1", "a!=1", "a=", "a!=", "a=(1,2)", "a!=(1,)", "=1", "a", "b=x"},
		keys: []string{"ts:a", "ts:b", "ts:c", "str"},
		valid: [][]string{
			{"TS.CREATE", "ts:c", "RETENTION", "1000", "ENCODING", "UNCOMPRESSED", "CHUNK_SIZE", "128", "DUPLICATE_POLICY", "LAST", "IGNORE", "10", "0.5", "LABELS", "a", "1"},
			{"TS.ALTER", "ts:a", "RETENTION", "0", "CHUNK_SIZE", "48", "DUPLICATE_POLICY", "SUM", "IGNORE", "1", "1", "LABELS", "a", "2"},
			{"TS.ADD", "ts:a", "*", "1", "RETENTION", "100", "ON_DUPLICATE", "SUM", "LABELS", "a", "1"},
			{"TS.ADD", "ts:a", "1700000000000", "1.5"},
			{"TS.MADD", "ts:a", "*", "1", "ts:b", "1000", "2"},
			{"TS.INCRBY", "ts:a", "1", "TIMESTAMP", "*", "RETENTION", "10", "UNCOMPRESSED", "CHUNK_SIZE", "64", "LABELS", "a", "1"},
			{"TS.DECRBY", "ts:c", "2", "TIMESTAMP", "1700000000000"},
			{"TS.DEL", "ts:a", "-", "+"},
			{"TS.GET", "ts:b", "LATEST"},
			{"TS.CREATERULE", "ts:a", "ts:c", "AGGREGATION", "twa", "60000", "1000"},
			{"TS.DELETERULE", "ts:a", "ts:b"},
			{"TS.INFO", "ts:a", "DEBUG"},
			{"TS.QUERYINDEX", "a=1", "b!="},
			{"TS.RANGE", "ts:a", "-", "+", "LATEST", "FILTER_BY_TS", "1", "2", "FILTER_BY_VALUE", "0", "10", "COUNT", "5", "ALIGN", "start", "AGGREGATION", "avg", "1000", "BUCKETTIMESTAMP", "mid", "EMPTY"},
			{"TS.REVRANGE", "ts:b", "0", "+", "AGGREGATION", "std.s", "10", "COUNT", "3"},
			{"TS.MRANGE", "-", "+", "WITHLABELS", "COUNT", "2", "AGGREGATION", "sum", "100", "FILTER", "a=1", "GROUPBY", "a", "REDUCE", "max"},
			{"TS.MREVRANGE", "-", "+", "SELECTED_LABELS", "a", "FILTER", "a=(1,2)"},
			{"TS.MGET", "LATEST", "WITHLABELS", "FILTER", "a!=3"},
		},
	},
	{
		name:  "ratelimit",
		cmds:  []string{"CL.THROTTLE", "GCRA", "RATELIMIT.SLIDING"},
		words: []string{"TOKENS", "LIMITS", "WEIGHT", "NOW", "tokens"},
		keys:  []string{"rl:a", "rl:b", "str"},
		valid: [][]string{
			{"CL.THROTTLE", "rl:a", "15", "30", "60", "1"},
			{"CL.THROTTLE", "rl:b", "0", "1", "1"},
			{"GCRA", "rl:a", "10", "5", "1", "TOKENS", "2"},
			{"GCRA", "rl:b", "0", "1", "0.5"},
			{"RATELIMIT.SLIDING", "2", "rl:a", "rl:b", "LIMITS", "2", "60", "10", "1", "3600", "100", "60", "WEIGHT", "2", "NOW", "1700000000"},
			{"RATELIMIT.SLIDING", "1", "rl:a", "LIMITS", "1", "1.5", "3", "0.5"},
		},
	},
	{
		name: "condwrite",
		cmds: []string{"SET", "DIGEST", "DELEX", "DELIFEQ", "MSETEX", "INCREX"},
		words: []string{"IFEQ", "IFNE", "IFDEQ", "IFDNE", "NX", "XX", "GET", "EX", "PX", "EXAT", "PXAT",
			"KEEPTTL", "PERSIST", "BYFLOAT", "BYINT", "LBOUND", "UBOUND", "ENX", "b6acb9d84a38ff74",
			"0", "ffffffffffffffff", "10000000000000000", "xyz", "v", "Hello world"},
		keys: []string{"cw:a", "cw:b", "cw:n", "str", "list"},
		valid: [][]string{
			{"SET", "cw:a", "v", "IFEQ", "v", "PX", "1000", "GET"},
			{"SET", "cw:a", "w", "IFNE", "v", "EX", "10"},
			{"SET", "cw:a", "v", "IFDEQ", "b6acb9d84a38ff74", "KEEPTTL"},
			{"SET", "cw:a", "v", "IFDNE", "0", "PXAT", "1700000100000"},
			{"DIGEST", "cw:a"},
			{"DELEX", "cw:a", "IFEQ", "v"},
			{"DELEX", "cw:a", "IFDNE", "ffff"},
			{"DELEX", "cw:a"},
			{"DELIFEQ", "cw:a", "v"},
			{"MSETEX", "2", "cw:a", "1", "cw:b", "2", "NX", "PX", "1000"},
			{"MSETEX", "1", "cw:a", "1", "XX", "KEEPTTL"},
			{"INCREX", "cw:n", "BYINT", "5", "LBOUND", "0", "UBOUND", "100", "PX", "1000", "ENX"},
			{"INCREX", "cw:n", "BYFLOAT", "1.5", "EXAT", "1700000100"},
			{"INCREX", "cw:n", "PERSIST"},
		},
	},
}

func (f *fuzzFamily) token(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fuzzNumbers[rng.IntN(len(fuzzNumbers))]
	case 1:
		return f.words[rng.IntN(len(f.words))]
	default:
		return f.keys[rng.IntN(len(f.keys))]
	}
}

func (f *fuzzFamily) command(rng *rand.Rand) []string {
	if rng.IntN(3) > 0 {
		return f.mutate(rng)
	}
	args := []string{f.cmds[rng.IntN(len(f.cmds))]}
	if rng.IntN(3) > 0 {
		args = append(args, f.keys[rng.IntN(len(f.keys))])
	}
	for n := rng.IntN(12); n > 0; n-- {
		args = append(args, f.token(rng))
	}
	return args
}

// mutate is a valid command with one to three changes: an argument
// replaced, dropped, duplicated (a repeated option) or a token appended.
func (f *fuzzFamily) mutate(rng *rand.Rand) []string {
	v := f.valid[rng.IntN(len(f.valid))]
	args := append([]string(nil), v...)
	for n := 1 + rng.IntN(3); n > 0; n-- {
		i := 1 + rng.IntN(len(args)-1)
		switch rng.IntN(4) {
		case 0:
			args[i] = f.token(rng)
		case 1:
			args = append(args[:i], args[i+1:]...)
		case 2:
			j := i + rng.IntN(3)
			if j > len(args) {
				j = len(args)
			}
			args = append(args, args[i:j]...)
		default:
			args = append(args, f.token(rng))
		}
		if len(args) < 2 {
			args = append(args, f.token(rng))
		}
	}
	return args
}

func TestMetricsBadArgumentFuzz(t *testing.T) {
	for fi := range fuzzFamilies {
		f := &fuzzFamilies[fi]
		for _, proto := range []string{"2", "3"} {
			t.Run(f.name+"/resp"+proto, func(t *testing.T) {
				inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
				r := inst.Raw(t)
				if proto == "3" {
					if rep := r.Do("HELLO", "3"); !strings.HasPrefix(rep, "%") {
						t.Fatalf("HELLO 3: %q", rep)
					}
				}
				rng := rand.New(rand.NewPCG(uint64(fi)*7+1, 42))
				for i := 0; i < fuzzN; i++ {
					if i%200 == 0 {
						r.Do("SET", "str", "x")
						r.Do("RPUSH", "list", "a")
						r.Do("TS.CREATE", "ts:a", "DUPLICATE_POLICY", "SUM")
						r.Do("TS.CREATE", "ts:b")
						r.Do("TS.CREATERULE", "ts:a", "ts:b", "AGGREGATION", "sum", "1000")
						r.Do("SET", "cw:n", "10")
					}
					if i%50 == 0 {
						inst.Clock.Advance(time.Duration(rng.IntN(5000)) * time.Millisecond)
					}
					args := f.command(rng)
					rep := r.Do(args...)
					if fuzzDump != nil {
						fuzzDump(args, rep)
					}
					if strings.Contains(rep, "internal error") {
						t.Fatalf("%q: %q", args, rep)
					}
					if n := inst.Srv.Env.Stats.PanicsRecovered.Load(); n != 0 {
						t.Fatalf("%q: panic recovered; log:\n%s", args, inst.Logs.String())
					}
				}
				if rep := r.Do("PING"); rep != "+PONG\r\n" {
					t.Fatalf("PING after the stream: %q", rep)
				}
				// No hash is left empty, and a limiter's hash always expires.
				c := inst.Client(t)
				for _, k := range c.Keys(servertest.Ctx, "*").Val() {
					if c.Type(servertest.Ctx, k).Val() != "hash" {
						continue
					}
					if n := c.HLen(servertest.Ctx, k).Val(); n == 0 {
						t.Errorf("hash %s left empty", k)
					}
					if ttl := c.PTTL(servertest.Ctx, k).Val(); ttl < 0 {
						t.Errorf("limiter hash %s without a TTL (%v)", k, ttl)
					}
				}
			})
		}
	}
}

// fuzzN is the length of each stream; fuzzDump, when set, sees every
// command and reply (for reviewing the replies by hand).
var (
	fuzzN    = 3000
	fuzzDump func(args []string, rep string)
)
