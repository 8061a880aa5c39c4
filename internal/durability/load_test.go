package durability_test

import (
	"sync"
	"testing"

	_ "github.com/abacusdb/abacus/internal/commands"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/durability"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	_ "github.com/abacusdb/abacus/internal/metrics"
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
			enginetest.Run(e1, s1, "TS.CREATE", "base", "LABELS", "l", "v")
			if aof == "yes" {
				if err := d1.StartAOF(); err != nil {
					t.Fatal(err)
				}
				enginetest.Run(e1, s1, "TS.CREATE", "incr", "LABELS", "l", "v")
				d1.Flush(true)
				d1.CloseAOF()
			} else {
				enginetest.Run(e1, s1, "TS.CREATE", "incr", "LABELS", "l", "v")
				if got := enginetest.Run(e1, s1, "SAVE"); got != "+OK\r\n" {
					t.Fatalf("SAVE %q", got)
				}
			}
			e2, s2, d2 := loadEnv(cfg)
			if err := d2.LoadAtStartup(); err != nil {
				t.Fatal(err)
			}
			if got := enginetest.Run(e2, s2, "TS.QUERYINDEX", "l=v"); got != "*2\r\n$4\r\nbase\r\n$4\r\nincr\r\n" {
				t.Fatalf("TS.QUERYINDEX after loading %q", got)
			}
		})
	}
}

// loadEnv is an engine over cfg with its durability layer, and a session.
func loadEnv(cfg *config.Config) (*engine.Env, *engine.Session, *durability.Durability) {
	e, s := enginetest.NewWith(cfg)
	return e, s, durability.New(e, &sync.Mutex{})
}
