// Package enginetest drives an engine directly, without a server or a
// connection, as EXEC and scripts do: tests of the engine, of the command
// families and of the metrics commands share it. The families a test runs
// must be linked into its binary.
package enginetest

import (
	"io"
	"log/slog"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// New makes an engine over 16 empty databases with the default
// configuration and a manual clock, and an authenticated RESP2 session.
func New() (*engine.Env, *engine.Session) { return NewWith(config.New()) }

// NewWith is New with the configuration cfg.
func NewWith(cfg *config.Config) (*engine.Env, *engine.Session) {
	env := engine.NewEnv(keyspace.New(16), cfg, clock.NewManual(1_700_000_000_000),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return env, &engine.Session{ID: 7, Proto: 2, Authed: true, User: "default"}
}

// Run executes one command for s and returns its raw reply.
func Run(e *engine.Env, s *engine.Session, args ...string) string {
	var w resp.Writer
	w.Proto = s.Proto
	e.Execute(s, Argv(args), &w)
	return string(w.Buf)
}

// Argv is args as a command line.
func Argv(args []string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}
