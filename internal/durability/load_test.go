package durability_test

import (
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	_ "github.com/abacusdb/abacus/internal/commands"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/durability"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	_ "github.com/abacusdb/abacus/internal/metrics"
	"github.com/abacusdb/abacus/internal/resp"
)

// Series loaded at startup, before any time-series command hooked the
// keyspace, are indexed: from an RDB file, and from an AOF whose RDB base
// holds some and whose incremental file creates others.
func TestMetricsStateIndexAfterStartupLoad(t *testing.T) {
	for _, aof := range []string{"no", "yes"} {
		t.Run("appendonly "+aof, func(t *testing.T) {
			cfg := config.New()
			for _, kv := range [][2]string{{"dir", t.TempDir()}, {"appendonly", aof}} {
				p, _ := config.Lookup(kv[0])
				if err := cfg.Set(p, kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			e1, s1, d1 := loadEnv(cfg)
			run(e1, s1, "TS.CREATE", "base", "LABELS", "l", "v")
			if aof == "yes" {
				if err := d1.StartAOF(); err != nil {
					t.Fatal(err)
				}
				run(e1, s1, "TS.CREATE", "incr", "LABELS", "l", "v")
				d1.Flush(true)
				d1.CloseAOF()
			} else {
				run(e1, s1, "TS.CREATE", "incr", "LABELS", "l", "v")
				if got := run(e1, s1, "SAVE"); got != "+OK\r\n" {
					t.Fatalf("SAVE %q", got)
				}
			}
			e2, s2, d2 := loadEnv(cfg)
			if err := d2.LoadAtStartup(); err != nil {
				t.Fatal(err)
			}
			if got := run(e2, s2, "TS.QUERYINDEX", "l=v"); got != "*2\r\n$4\r\nbase\r\n$4\r\nincr\r\n" {
				t.Fatalf("TS.QUERYINDEX after loading %q", got)
			}
		})
	}
}

// loadEnv is an engine over cfg with its durability layer, and a session.
func loadEnv(cfg *config.Config) (*engine.Env, *engine.Session, *durability.Durability) {
	e := engine.NewEnv(keyspace.New(16), cfg, clock.NewManual(1_700_000_000_000),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	d := durability.New(e, &sync.Mutex{})
	return e, &engine.Session{ID: 7, Proto: 2, Authed: true, User: "default"}, d
}

// run executes one command and returns its reply.
func run(e *engine.Env, s *engine.Session, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	var w resp.Writer
	w.Proto = s.Proto
	e.Execute(s, argv, &w)
	return string(w.Buf)
}
