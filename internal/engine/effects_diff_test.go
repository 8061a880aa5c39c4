package engine_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// The effect stream against Redis's replication stream: every case runs
// on an in-process Abacus whose propagation sink records what it is fed,
// and on a redis-server 7.0 read by a connection that did a full sync as
// a replica; the two streams must be the same commands, with SELECT where
// Redis puts it and absolute times compared within a tolerance.

// effRecorder is the propagation sink: it renders the entries as Redis
// writes them to a replica, a SELECT before any command whose database is
// not the last one selected (before MULTI for the first command of a
// wrapped group), starting with none selected as after a full sync.
type effRecorder struct {
	mu   sync.Mutex
	db   int
	cmds [][][]byte
}

func newEffRecorder() *effRecorder { return &effRecorder{db: -1} }

func (r *effRecorder) Feed(entries []engine.PropEntry, wrap bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sel := func(db int) {
		if db != r.db {
			r.cmds = append(r.cmds, [][]byte{[]byte("SELECT"), []byte(strconv.Itoa(db))})
			r.db = db
		}
	}
	if wrap && len(entries) > 0 {
		sel(entries[0].DB)
		r.cmds = append(r.cmds, [][]byte{[]byte("MULTI")})
	}
	for _, e := range entries {
		sel(e.DB)
		argv := make([][]byte, len(e.Argv))
		for i, a := range e.Argv {
			argv[i] = append([]byte(nil), a...)
		}
		r.cmds = append(r.cmds, argv)
	}
	if wrap {
		r.cmds = append(r.cmds, [][]byte{[]byte("EXEC")})
	}
}

func (r *effRecorder) take() [][][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cmds
	r.cmds = nil
	return c
}

// effSide is one server as the cases drive it.
type effSide struct {
	t    *testing.T
	name string
	addr string
	c    *servertest.Conn // the client the cases use
	end  *servertest.Conn // sends the sentinel write, always in db 0
	seq  int
	// pass lets ms milliseconds of the server's time go by.
	pass func(ms int)
	// nowMs is the server's clock, the base of the time normalisation.
	nowMs func() int64
	// upTo returns the stream's commands up to the sentinel write
	// (excluded), which has been acknowledged when it is called.
	upTo func(sentinel string) [][][]byte
}

const effSentinelKey = "__effects_end__"

// sync writes the sentinel and returns what the stream carried before it.
func (s *effSide) sync() [][][]byte {
	s.t.Helper()
	s.seq++
	v := strconv.Itoa(s.seq)
	if r := s.end.Do("SET", effSentinelKey, v); r != "+OK\r\n" {
		s.t.Fatalf("%s: sentinel SET: %q", s.name, r)
	}
	return s.upTo(v)
}

func effIsSentinel(argv [][]byte, v string) bool {
	return len(argv) == 3 && strings.EqualFold(string(argv[0]), "SET") &&
		string(argv[1]) == effSentinelKey && string(argv[2]) == v
}

// do sends a command on the case's client and returns the raw reply.
func (s *effSide) do(args ...string) string { return s.c.Do(args...) }

// block sends a blocking command on a new client (db 0) and returns once
// the server counts it blocked; read the reply from the returned Conn.
func (s *effSide) block(args ...string) *servertest.Conn {
	s.t.Helper()
	w := servertest.Dial(s.t, s.addr)
	w.Write(servertest.Encode(args...))
	want := "blocked_clients:1\r"
	for deadline := time.Now().Add(10 * time.Second); ; {
		if strings.Contains(s.c.Do("INFO", "clients"), want) {
			return w
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %v did not block", s.name, args)
		}
		time.Sleep(time.Millisecond)
	}
}

func startEffAbacus(t *testing.T) *effSide {
	inst := servertest.Start(t, servertest.WithManualClock(time.Now().UnixMilli()))
	rec := newEffRecorder()
	inst.Srv.Lock()
	// The replication stream (the tap) is what redis-server's replica
	// reads; the AOF gets the same entries but PUBLISH's.
	inst.Srv.Env.SetPropTap(rec)
	inst.Srv.Env.SetActiveExpire(false)
	inst.Srv.Unlock()
	s := &effSide{t: t, name: "abacus", addr: inst.Addr, c: inst.Raw(t), end: inst.Raw(t)}
	s.pass = func(ms int) { inst.Clock.Advance(time.Duration(ms) * time.Millisecond) }
	s.nowMs = inst.Clock.NowMs
	s.upTo = func(v string) [][][]byte {
		cmds := rec.take()
		if n := len(cmds); n == 0 || !effIsSentinel(cmds[n-1], v) {
			t.Fatalf("abacus: the sink's last command is not the sentinel: %s", effRender(cmds))
		}
		return cmds[:len(cmds)-1]
	}
	return s
}

func startEffRedis(t *testing.T) *effSide {
	// A private server: a replica of the shared one would see the other
	// tests' writes. Diskless sync without its delay keeps the full sync
	// instant.
	r := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes")
	s := &effSide{t: t, name: "redis", addr: r.Addr, c: servertest.Dial(t, r.Addr), end: servertest.Dial(t, r.Addr)}
	if rep := s.c.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); rep != "+OK\r\n" {
		t.Fatalf("DEBUG SET-ACTIVE-EXPIRE: %q", rep)
	}
	stream := servertest.AttachReplica(t, r.Addr)
	// Redis reads expiry deadlines from the wall clock: a few
	// milliseconds more than asked make sure the deadline has passed.
	s.pass = func(ms int) { time.Sleep(time.Duration(ms+5) * time.Millisecond) }
	s.nowMs = func() int64 { return time.Now().UnixMilli() }
	s.upTo = func(v string) [][][]byte {
		var cmds [][][]byte
		for {
			argv := stream.Next(10 * time.Second)
			if effIsSentinel(argv, v) {
				return cmds
			}
			cmds = append(cmds, argv)
		}
	}
	return s
}

// effCase is one entry of the matrix, run on both servers. Each starts on
// an empty dataset, in db 0.
type effCase struct {
	name string
	run  func(s *effSide)
	// randomMembers: the members SREM names were chosen at random (SPOP
	// with a count below the set's size), or the keys DEL names come in
	// the server's own order (expired keys a SCAN meets); they are
	// compared by number.
	randomMembers bool
}

// effRender renders commands one per element, arguments quoted where
// they are not plain printable text, joined by " | ".
func effRender(cmds [][][]byte) string {
	lines := make([]string, len(cmds))
	for i, argv := range cmds {
		parts := make([]string, len(argv))
		for j, a := range argv {
			parts[j] = effQuote(string(a))
		}
		lines[i] = strings.Join(parts, " ")
	}
	return strings.Join(lines, " | ")
}

func effQuote(a string) string {
	if a == "" {
		return `""`
	}
	for _, r := range a {
		if r <= ' ' || r > '~' || r == '"' || r == '|' {
			return strconv.Quote(a)
		}
	}
	return a
}

// Absolute times near the case's start (the servers' clocks differ) are
// replaced by their distance from it, in whole seconds rounded down:
// "<now+100s>". Redis's clock runs on while a case runs, so the cases'
// relative TTLs in milliseconds end just after a whole second (PX 1100)
// to keep a slow run in the same second.
const (
	effTimeBefore = 10 * 1000
	effTimeAfter  = 2 * 24 * 3600 * 1000
)

func effNormalize(cmds [][][]byte, baseMs int64, randomMembers bool) [][][]byte {
	out := make([][][]byte, len(cmds))
	for i, argv := range cmds {
		n := make([][]byte, len(argv))
		for j, a := range argv {
			n[j] = a
			v, err := strconv.ParseInt(string(a), 10, 64)
			if err != nil || j == 0 || v < baseMs-effTimeBefore || v > baseMs+effTimeAfter {
				continue
			}
			d := v - baseMs
			if d >= 0 {
				n[j] = []byte("<now+" + strconv.FormatInt(d/1000, 10) + "s>")
			} else {
				n[j] = []byte("<now-" + strconv.FormatInt((-d+999)/1000, 10) + "s>")
			}
		}
		if randomMembers && len(n) > 2 && strings.EqualFold(string(n[0]), "SREM") {
			for j := 2; j < len(n); j++ {
				n[j] = []byte("<member>")
			}
		}
		if randomMembers && len(n) == 2 && strings.EqualFold(string(n[0]), "DEL") {
			n[1] = []byte("<key>")
		}
		out[i] = n
	}
	return out
}

// runEffCase runs c on s and returns its normalised stream.
func runEffCase(s *effSide, c effCase) string {
	s.t.Helper()
	s.do("SELECT", "0")
	s.do("FLUSHALL")
	s.sync()
	base := s.nowMs()
	c.run(s)
	s.do("SELECT", "0")
	return effRender(effNormalize(s.sync(), base, c.randomMembers))
}

// TestEffectsMatchRedisReplicationStream runs the matrix of effCases; a
// failure prints both streams, normalised, one command per "|".
func TestEffectsMatchRedisReplicationStream(t *testing.T) {
	r := startEffRedis(t)
	a := startEffAbacus(t)
	// RESTORE's payload, as redis-server 7.0 writes it.
	r.do("SET", "d", "hello")
	dump := r.do("DUMP", "d")
	dump = dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
	r.sync()
	a.sync()
	for _, c := range effCases(dump) {
		got, want := runEffCase(a, c), runEffCase(r, c)
		if got != want {
			t.Errorf("%s\n abacus: %s\n  redis: %s", c.name, got, want)
		} else if testing.Verbose() {
			t.Logf("%s: %s", c.name, got)
		}
	}
}

// lines runs commands written one per line, split on spaces.
func (s *effSide) lines(text string) {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			s.do(strings.Fields(l)...)
		}
	}
}

// effLines returns a case that runs commands one per line.
func effLines(name, text string) effCase {
	return effCase{name: name, run: func(s *effSide) { s.lines(text) }}
}

// effExpired returns a case that leaves key k expired but not yet deleted
// (set with a 1 ms TTL, then time passes with nothing touching it, active
// expiry being off), then runs then.
func effExpired(name string, then func(s *effSide)) effCase {
	return effCase{name: name, run: func(s *effSide) {
		s.do("SET", "k", "v", "PX", "1")
		s.do("SET", "other", "x")
		s.pass(10)
		then(s)
	}}
}

// effServedLater returns a case where a client blocks on cmd and a push from
// the case's client serves it.
func effServedLater(name string, cmd []string, push ...string) effCase {
	return effCase{name: name, run: func(s *effSide) {
		w := s.block(cmd...)
		s.do(push...)
		if r := w.Read(); strings.HasPrefix(r, "*-1") || strings.HasPrefix(r, "-") {
			s.t.Errorf("%s: %s: blocked client got %q", s.name, name, r)
		}
	}}
}

func effCases(dump string) []effCase {
	return []effCase{
		// SET and its TTL forms.
		effLines("SET plain", "SET k v"),
		// PUBLISH goes to replicas (not the AOF), alone and in MULTI.
		effLines("PUBLISH", "PUBLISH ch hello\nSPUBLISH sh hi"),
		effLines("PUBLISH in MULTI", "MULTI\nSET k v\nPUBLISH ch hello\nEXEC"),
		{name: "PUBLISH from a script", run: func(s *effSide) {
			s.do("EVAL", "redis.call('publish', 'ch', 'x'); return redis.call('set', KEYS[1], 'v')", "1", "k")
		}},
		effLines("SET EX", "SET k v EX 100"),
		effLines("SET PX", "SET k v PX 1100"),
		effLines("SET EXAT", "SET k v EXAT 4102444800"),
		effLines("SET PXAT", "SET k v PXAT 4102444800123"),
		effLines("SET KEEPTTL", "SET k v EX 100\nSET k w KEEPTTL"),
		effLines("SET NX EX (set)", "SET k v NX EX 100"),
		effLines("SET NX EX (not set)", "SET k v\nSET k w NX EX 100"),
		effLines("SET XX PX (set)", "SET k v\nSET k w XX PX 1100"),
		effLines("SET XX PX (not set)", "SET k w XX PX 1100"),
		effLines("SET GET EX", "SET k v\nSET k w GET EX 100"),
		effLines("SET NX PXAT", "SET k v NX PXAT 4102444800123"),
		effLines("SET GET PXAT", "SET k v\nSET k w GET PXAT 4102444800123"),
		effLines("SET EXAT past", "SET k v\nSET k w EXAT 1000"),
		effLines("SETEX", "SETEX k 100 v"),
		effLines("PSETEX", "PSETEX k 1100 v"),
		// GETEX.
		effLines("GETEX EX", "SET k v\nGETEX k EX 100"),
		effLines("GETEX PX", "SET k v\nGETEX k PX 1100"),
		effLines("GETEX EXAT", "SET k v\nGETEX k EXAT 4102444800"),
		effLines("GETEX PXAT", "SET k v\nGETEX k PXAT 4102444800123"),
		effLines("GETEX EXAT past", "SET k v\nGETEX k EXAT 1000"),
		effLines("GETEX PERSIST", "SET k v EX 100\nGETEX k PERSIST"),
		effLines("GETEX PERSIST without TTL", "SET k v\nGETEX k PERSIST"),
		effLines("GETEX plain", "SET k v\nGETEX k"),
		effLines("GETEX missing key", "GETEX k EX 100\nGETEX k PERSIST"),
		// GETDEL.
		effLines("GETDEL", "SET k v\nGETDEL k"),
		effLines("GETDEL missing key", "GETDEL k"),
		// SPOP.
		effLines("SPOP", "SADD s a\nSPOP s"),
		{name: "SPOP count below size", randomMembers: true, run: func(s *effSide) {
			s.lines("SADD s a b c\nSPOP s 2")
		}},
		effLines("SPOP count of size", "SADD s a b c\nSPOP s 3"),
		effLines("SPOP count above size", "SADD s a b c\nSPOP s 5"),
		effLines("SPOP missing key", "SPOP s\nSPOP s 2"),
		// xMPOP served at once.
		effLines("LMPOP", "RPUSH l a b c\nLMPOP 1 l LEFT COUNT 2"),
		effLines("LMPOP RIGHT", "RPUSH l a b c\nLMPOP 2 none l RIGHT"),
		effLines("ZMPOP", "ZADD z 1 a 2 b 3 c\nZMPOP 1 z MIN COUNT 2"),
		effLines("ZMPOP MAX", "ZADD z 1 a 2 b 3 c\nZMPOP 1 z MAX"),
		effLines("BLMPOP at once", "RPUSH l a b c\nBLMPOP 0 1 l RIGHT COUNT 2"),
		effLines("BZMPOP at once", "ZADD z 1 a 2 b 3 c\nBZMPOP 0 1 z MAX COUNT 2"),
		effLines("BLPOP at once", "RPUSH l a b\nBLPOP l 0"),
		effLines("BRPOPLPUSH at once", "RPUSH l a b\nBRPOPLPUSH l m 0"),
		effLines("BLMOVE at once", "RPUSH l a b\nBLMOVE l m LEFT RIGHT 0"),
		effLines("BZPOPMIN at once", "ZADD z 1 a 2 b\nBZPOPMIN z 0"),
		// Blocking pops served by another client's push.
		effServedLater("BLMPOP served later", []string{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "2"}, "RPUSH", "l", "a", "b", "c"),
		effServedLater("BZMPOP served later", []string{"BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"}, "ZADD", "z", "1", "a", "2", "b"),
		effServedLater("BLPOP served later", []string{"BLPOP", "l", "0"}, "RPUSH", "l", "a", "b"),
		effServedLater("BRPOP served later", []string{"BRPOP", "l", "0"}, "LPUSH", "l", "a", "b"),
		effServedLater("BLMOVE served later", []string{"BLMOVE", "l", "m", "RIGHT", "LEFT", "0"}, "RPUSH", "l", "a", "b"),
		effServedLater("BRPOPLPUSH served later", []string{"BRPOPLPUSH", "l", "m", "0"}, "RPUSH", "l", "a"),
		effServedLater("BZPOPMIN served later", []string{"BZPOPMIN", "z", "0"}, "ZADD", "z", "1", "a", "2", "b"),
		effServedLater("BZPOPMAX served later", []string{"BZPOPMAX", "z", "0"}, "ZADD", "z", "1", "a", "2", "b"),
		// GEO: GEOADD propagates as the ZADD it ran, the STORE forms as
		// received, a STORE with nothing found as the DEL of its target.
		effLines("GEOADD", "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania\nGEOADD g CH XX 13.36 38.11 Palermo 1 1 x\nGEOADD g NX 13.36 38.11 Palermo"),
		effLines("GEORADIUS STORE", "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania\nGEORADIUS g 15 37 200 km STORE d COUNT 1\nGEORADIUSBYMEMBER g Palermo 500 km STOREDIST d2"),
		effLines("GEOSEARCHSTORE", "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania\nGEOSEARCHSTORE d g FROMLONLAT 15 37 BYBOX 400 400 km STOREDIST\nGEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m\nGEOSEARCHSTORE d missing FROMLONLAT 15 37 BYRADIUS 1 m"),
		// EXPIRE and friends.
		effLines("EXPIRE", "SET k v\nEXPIRE k 100"),
		effLines("PEXPIRE", "SET k v\nPEXPIRE k 1100"),
		effLines("EXPIREAT", "SET k v\nEXPIREAT k 4102444800"),
		effLines("PEXPIREAT", "SET k v\nPEXPIREAT k 4102444800123"),
		effLines("EXPIRE NX GT", "SET k v EX 100\nEXPIRE k 50 NX\nEXPIRE k 200 GT"),
		effLines("EXPIREAT past", "SET k v\nEXPIREAT k 1000"),
		effLines("PEXPIRE negative", "SET k v\nPEXPIRE k -1"),
		effLines("EXPIRE missing key", "EXPIRE k 100"),
		effLines("PERSIST", "SET k v EX 100\nPERSIST k"),
		effExpired("EXPIRE on an expired key", func(s *effSide) { s.do("EXPIRE", "k", "100") }),
		effExpired("GET of an expired key", func(s *effSide) { s.do("GET", "k") }),
		effExpired("SET over an expired key", func(s *effSide) { s.do("SET", "k", "new") }),
		effExpired("lazy expiry inside MULTI", func(s *effSide) {
			s.lines("MULTI\nGET k\nSET x 1\nEXEC")
		}),
		effExpired("lazy expiry inside read-only MULTI", func(s *effSide) {
			s.lines("MULTI\nGET k\nGET other\nEXEC")
		}),
		effExpired("lazy expiry inside a script", func(s *effSide) {
			s.do("EVAL", "return redis.call('GET', KEYS[1])", "1", "k")
		}),
		// SCAN and RANDOMKEY run directly: the keys they find expired are
		// deleted one DEL at a time, not in MULTI/EXEC; inside EXEC, they
		// are.
		{name: "lazy expiry by SCAN", randomMembers: true, run: func(s *effSide) {
			s.lines("SET k1 v PX 1\nSET k2 v PX 1")
			s.pass(10)
			s.do("SCAN", "0")
		}},
		{name: "lazy expiry by SCAN in MULTI", randomMembers: true, run: func(s *effSide) {
			s.lines("SET k1 v PX 1\nSET k2 v PX 1")
			s.pass(10)
			s.lines("MULTI\nSCAN 0\nEXEC")
		}},
		effExpired("lazy expiry inside a writing script", func(s *effSide) {
			s.do("EVAL", "redis.call('GET', KEYS[1]); return redis.call('SET', KEYS[2], 'y')", "2", "k", "x")
		}),
		// Scripts.
		{name: "EVAL writes", run: func(s *effSide) {
			s.do("EVAL", "redis.call('set', KEYS[1], 'a'); redis.call('incr', KEYS[2]); redis.call('rpush', KEYS[3], 'x', 'y'); return 1", "3", "s1", "s2", "s3")
		}},
		{name: "EVAL one write", run: func(s *effSide) {
			s.do("EVAL", "redis.call('get', KEYS[1]); return redis.call('set', KEYS[1], 'a')", "1", "s1")
		}},
		{name: "EVAL reads only", run: func(s *effSide) {
			s.do("SET", "s1", "a")
			s.do("EVAL", "redis.call('get', KEYS[1]); return redis.call('exists', KEYS[1])", "1", "s1")
		}},
		{name: "EVAL with TTL and SPOP", run: func(s *effSide) {
			s.do("EVAL", "redis.call('set', KEYS[1], 'a', 'EX', 100); redis.call('sadd', KEYS[2], 'm'); return redis.call('spop', KEYS[2])", "2", "s1", "s2")
		}},
		{name: "EVAL INCRBYFLOAT", run: func(s *effSide) {
			s.do("EVAL", "return redis.call('incrbyfloat', KEYS[1], '1.5')", "1", "f")
		}},
		{name: "EVAL SELECT", run: func(s *effSide) {
			s.do("EVAL", "redis.call('set', 'a', '1'); redis.call('select', '3'); redis.call('set', 'b', '2'); return 1", "0")
		}},
		effExpired("DEL of an expired key", func(s *effSide) { s.do("DEL", "k") }),
		effExpired("write to an expired key inside MULTI", func(s *effSide) {
			s.lines("MULTI\nEXPIRE k 100\nSET k new\nEXEC")
		}),
		{name: "EVAL SPOP with count", randomMembers: true, run: func(s *effSide) {
			s.do("SADD", "s", "a", "b", "c")
			s.do("EVAL", "return redis.call('spop', KEYS[1], 2)", "1", "s")
		}},
		{name: "EVAL GETEX and GETDEL", run: func(s *effSide) {
			s.do("EVAL", "redis.call('set', KEYS[1], 'a'); redis.call('getex', KEYS[1], 'EX', 100); return redis.call('getdel', KEYS[1])", "1", "g")
		}},
		{name: "FCALL writes", run: func(s *effSide) {
			lib := "#!lua name=efflib\nredis.register_function('effw', function(keys) redis.call('set', keys[1], 'a'); return redis.call('incr', keys[2]) end)"
			s.do("FUNCTION", "LOAD", "REPLACE", lib)
			s.do("FCALL", "effw", "2", "f1", "f2")
		}},
		// Floats.
		effLines("INCRBYFLOAT", "INCRBYFLOAT f 1.5\nINCRBYFLOAT f 0.1"),
		effLines("INCRBYFLOAT keeps TTL", "SET f 1 EX 100\nINCRBYFLOAT f 2"),
		effLines("HINCRBYFLOAT", "HINCRBYFLOAT h x 2.5\nHINCRBYFLOAT h x 0.25"),
		// Databases.
		effLines("FLUSHALL", "SET a 1\nSELECT 2\nSET b 1\nFLUSHALL"),
		effLines("FLUSHDB", "SET a 1\nFLUSHDB"),
		effLines("FLUSHALL with nothing to remove", "FLUSHALL ASYNC\nSELECT 5\nFLUSHALL"),
		effLines("FLUSHDB with nothing to remove", "SELECT 4\nFLUSHDB\nSET a 1\nSELECT 5\nFLUSHDB SYNC"),
		effLines("FLUSHDB in another db", "SELECT 3\nSET a 1\nFLUSHDB\nSELECT 0\nSET b 1"),
		effLines("SWAPDB", "SET a 1\nSWAPDB 0 1\nSELECT 1\nSET b 2"),
		effLines("SELECT and writes", "SET a 1\nSELECT 2\nSET b 2\nSELECT 5\nDEL b\nSET c 3\nSELECT 2\nDEL b"),
		// Transactions.
		effLines("MULTI with writes", "MULTI\nSET a 1\nINCR a\nGET a\nEXPIRE a 100\nEXEC"),
		effLines("MULTI with one write", "MULTI\nSET a 1\nGET a\nEXEC"),
		effLines("MULTI with reads only", "SET a 1\nMULTI\nGET a\nEXISTS a\nEXEC"),
		effLines("MULTI with SELECT", "MULTI\nSET a 1\nSELECT 4\nSET b 1\nEXEC"),
		effLines("MULTI in another db", "SELECT 6\nMULTI\nSET a 1\nSET b 1\nEXEC"),
		effLines("MULTI with SETEX and SPOP", "SADD s m\nMULTI\nSETEX a 100 v\nSPOP s\nEXEC"),
		effLines("MULTI with INCRBYFLOAT and GETDEL", "SET g v\nMULTI\nINCRBYFLOAT f 1.5\nGETDEL g\nEXEC"),
		effLines("MULTI discarded", "MULTI\nSET a 1\nDISCARD"),
		// RESTORE.
		{name: "RESTORE without TTL", run: func(s *effSide) { s.do("RESTORE", "r", "0", dump) }},
		{name: "RESTORE with TTL", run: func(s *effSide) { s.do("RESTORE", "r", "100000", dump) }},
		{name: "RESTORE REPLACE with TTL", run: func(s *effSide) {
			s.do("SET", "r", "old")
			s.do("RESTORE", "r", "100000", dump, "REPLACE")
		}},
		{name: "RESTORE ABSTTL", run: func(s *effSide) {
			s.do("RESTORE", "r", "4102444800123", dump, "ABSTTL")
		}},
		{name: "RESTORE ABSTTL past", run: func(s *effSide) {
			s.do("RESTORE", "r", "1000", dump, "ABSTTL")
		}},
	}
}

// The effects of Abacus's own commands, which redis-server 7.0 lacks,
// against hand-written expectations: what a replica replays must give
// the same data whenever it replays it, so the server's clock appears in
// the stream as absolute times (T is the clock at the case's start).
func TestEffectsAbacusOnly(t *testing.T) {
	a := startEffAbacus(t)
	a.sync()
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	cases := []struct {
		name string
		run  func(s *effSide)
		want func(T int64) string
	}{
		{"TS.ADD with * and a compaction rule", func(s *effSide) {
			s.lines("TS.CREATE src\nTS.CREATE dst\nTS.CREATERULE src dst AGGREGATION sum 1000\nTS.ADD src * 1")
			s.pass(1500)
			s.do("TS.ADD", "src", "*", "2") // closes the first bucket: dst gets a sample
		}, func(T int64) string {
			// The compaction is replayed by the rule: dst's sample is not
			// in the stream.
			return "TS.CREATE src | TS.CREATE dst | TS.CREATERULE src dst AGGREGATION sum 1000 | " +
				"TS.ADD src " + ms(T) + " 1 | TS.ADD src " + ms(T+1500) + " 2"
		}},
		{"TS.ADD with an explicit timestamp", func(s *effSide) {
			s.do("TS.ADD", "ts", "1000", "1")
		}, func(T int64) string { return "TS.ADD ts 1000 1" }},
		{"TS.MADD with *", func(s *effSide) {
			s.lines("TS.CREATE a\nTS.CREATE b\nTS.MADD a * 1 b 2000 2")
		}, func(T int64) string {
			return "TS.CREATE a | TS.CREATE b | TS.MADD a " + ms(T) + " 1 b 2000 2"
		}},
		{"TS.INCRBY and TS.DECRBY", func(s *effSide) {
			s.do("TS.INCRBY", "c", "5")
			s.pass(10)
			s.do("TS.DECRBY", "c", "2", "TIMESTAMP", "*")
			s.do("TS.INCRBY", "c", "1", "TIMESTAMP", ms(s.nowMs()))
		}, func(T int64) string {
			return "TS.INCRBY c 5 TIMESTAMP " + ms(T) + " | TS.DECRBY c 2 TIMESTAMP " + ms(T+10) +
				" | TS.INCRBY c 1 TIMESTAMP " + ms(T+10)
		}},
		{"CL.THROTTLE", func(s *effSide) {
			// One request per 60 s with a burst of 1: two pass, the third
			// is limited (no effect), one more passes a period later.
			for i := 0; i < 3; i++ {
				s.do("CL.THROTTLE", "lim", "1", "1", "60")
			}
			s.pass(60000)
			s.do("CL.THROTTLE", "lim", "1", "1", "60")
		}, func(T int64) string {
			// The limiter is a string holding its theoretical arrival time
			// in nanoseconds with a TTL: its effect is that state.
			const period = int64(60e9)
			set := func(tatNs, atMs int64) string { return "SET lim " + ms(tatNs) + " PXAT " + ms(atMs) }
			return set(T*1e6+period, T+60000) + " | " + set(T*1e6+2*period, T+120000) + " | " +
				set(T*1e6+3*period, T+180000)
		}},
	}
	for _, c := range cases {
		a.do("SELECT", "0")
		a.do("FLUSHALL")
		a.sync()
		T := a.nowMs()
		c.run(a)
		got, want := effRender(a.sync()), c.want(T)
		if got != want {
			t.Errorf("%s\n got: %s\nwant: %s", c.name, got, want)
		}
	}
}
