package commands

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// bmEnv is an Env driven directly through Execute, for tests that plant
// values in the keyspace directly and for benchmarks.
type bmEnv struct {
	env  *engine.Env
	sess *engine.Session
	w    resp.Writer
}

func newBMEnv() *bmEnv {
	env := engine.NewEnv(keyspace.New(16), config.New(), clock.NewManual(1_700_000_000_000),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &bmEnv{env: env, sess: &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}, w: resp.Writer{Proto: 2}}
}

// do runs one command and returns its raw reply.
func (e *bmEnv) do(args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	e.w.Reset()
	e.env.Execute(e.sess, argv, &e.w)
	return string(e.w.Buf)
}

// TestBitmapsWrongType plants empty values of other types (the
// differential TestBitmapsDiffWrongType makes them with commands) and
// checks that every command of the bitmap and HyperLogLog families refuses
// them with WRONGTYPE, in Redis's order relative to its other checks, and
// leaves them alone.
func TestBitmapsWrongType(t *testing.T) {
	e := newBMEnv()
	db := e.env.KS.DBs[0]
	db.Set("l", keyspace.NewValue(keyspace.TypeList, nil), false)
	db.Set("h", keyspace.NewValue(keyspace.TypeHash, nil), false)
	e.do("SET", "s", "abc")
	e.do("SET", "bad", "not an hll at all")
	const wrong = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	const notHLL = "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"
	for _, tc := range []struct{ cmd, want string }{
		{"SETBIT l 0 1", wrong},
		{"SETBIT l x 1", "-ERR bit offset is not an integer or out of range\r\n"},
		{"SETBIT l 0 2", "-ERR bit is not an integer or out of range\r\n"},
		{"GETBIT l 0", wrong},
		{"GETBIT l x", "-ERR bit offset is not an integer or out of range\r\n"},
		{"BITCOUNT l", wrong},
		{"BITCOUNT l x y", wrong},
		{"BITCOUNT l 0", wrong},
		{"BITPOS l 1", wrong},
		{"BITPOS l 1 x", wrong},
		{"BITPOS l 2", "-ERR The bit argument must be 1 or 0.\r\n"},
		{"BITOP AND d s l", wrong},
		{"BITOP AND d l s", wrong},
		{"BITOP AND l s", ":3\r\n"}, // the destination is overwritten whatever its type
		{"BITOP NOT d h s", "-ERR BITOP NOT must be called with a single source key.\r\n"},
		{"BITOP FOO d h", "-ERR syntax error\r\n"},
		{"BITFIELD h GET u8 0", wrong},
		{"BITFIELD h SET u8 0 1", wrong},
		{"BITFIELD h", wrong},
		{"BITFIELD h GET u64 0", "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"},
		{"BITFIELD_RO h GET u8 0", wrong},
		{"BITFIELD_RO h", wrong},
		{"BITFIELD_RO h SET u8 0 1", "-ERR BITFIELD_RO only supports the GET subcommand\r\n"},
		{"PFADD h a", wrong},
		{"PFADD h", wrong},
		{"PFCOUNT h", wrong},
		{"PFCOUNT h bad", wrong},
		{"PFCOUNT bad h", notHLL},
		{"PFCOUNT missing h", wrong},
		{"PFMERGE h", wrong},
		{"PFMERGE d h", wrong},
		{"PFMERGE bad h", notHLL},
		{"PFMERGE h bad", wrong},
		{"EXISTS d", ":0\r\n"},
		{"TYPE h", "+hash\r\n"},
		{"GET l", "$3\r\nabc\r\n"},
	} {
		if got := e.do(strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
	if n := e.env.Stats.Dirty.Load(); n != 3 { // SET, SET, BITOP into l
		t.Errorf("dirty %d, want 3", n)
	}
}

// TestBitmapsNilVersusEmpty: an existing empty string is a string, not a
// missing key, for every command, although it holds no bytes.
func TestBitmapsNilVersusEmpty(t *testing.T) {
	e := newBMEnv()
	e.do("SET", "e", "")
	for _, tc := range []struct{ cmd, want string }{
		{"PFADD e a", "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{"PFCOUNT e", "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{"PFCOUNT e e", "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{"PFMERGE e", "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{"PFMERGE d e", "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{"BITPOS e 0", ":-1\r\n"},
		{"BITPOS missing 0", ":0\r\n"},
		{"BITOP OR d e", ":0\r\n"},
		{"EXISTS d", ":0\r\n"},
		{"BITFIELD e GET u8 0", "*1\r\n:0\r\n"},
		{"GET e", "$0\r\n\r\n"},
	} {
		if got := e.do(strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
