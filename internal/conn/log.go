package conn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// LevelVerbose sits between debug and notice, as Redis's "verbose" level.
const LevelVerbose = slog.Level(-2)

// redisHandler writes log lines in Redis's format:
// "pid:M 21 Nov 2026 23:45:01.123 * message key=value ...".
type redisHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	cfg   *config.Config
	attrs []slog.Attr
}

// NewLogger returns a logger writing Redis-style lines to w, filtered by
// the loglevel parameter (read on every line, so CONFIG SET applies).
func NewLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	return slog.New(&redisHandler{mu: &sync.Mutex{}, w: w, cfg: cfg})
}

func (h *redisHandler) minLevel() slog.Level {
	switch h.cfg.Str(config.LogLevel) {
	case "debug":
		return slog.LevelDebug
	case "verbose":
		return LevelVerbose
	case "warning":
		return slog.LevelWarn
	case "nothing":
		return slog.Level(100)
	}
	return slog.LevelInfo
}

func (h *redisHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.minLevel() }

func (h *redisHandler) Handle(_ context.Context, r slog.Record) error {
	mark := byte('*')
	switch {
	case r.Level < LevelVerbose:
		mark = '.'
	case r.Level < slog.LevelInfo:
		mark = '-'
	case r.Level >= slog.LevelWarn:
		mark = '#'
	}
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	line := fmt.Sprintf("%d:M %s %c %s", os.Getpid(), t.Format("02 Jan 2006 15:04:05.000"), mark, r.Message)
	for _, a := range h.attrs {
		line += " " + a.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line+"\n")
	return err
}

func (h *redisHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

func (h *redisHandler) WithGroup(string) slog.Handler { return h }
