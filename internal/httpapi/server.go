package httpapi

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

//go:embed static
var staticFS embed.FS

// Limits bound what HTTP clients can hold; zero fields take the defaults.
type Limits struct {
	// ReadHeaderTimeout closes a connection whose request headers have not
	// all arrived in time (slowloris). Default 5 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request; WriteTimeout writing its
	// response; IdleTimeout a kept-alive connection between requests.
	// Defaults 10 s, 30 s, 60 s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers (431 beyond).
	// Default 16 KiB.
	MaxHeaderBytes int
	// MaxConns is how many connections may be open at once; one more is
	// closed as soon as it is accepted. Default 64.
	MaxConns int
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&l.ReadHeaderTimeout, 5*time.Second)
	def(&l.ReadTimeout, 10*time.Second)
	def(&l.WriteTimeout, 30*time.Second)
	def(&l.IdleTimeout, 60*time.Second)
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = 16 << 10
	}
	if l.MaxConns == 0 {
		l.MaxConns = 64
	}
	return l
}

// Server is the HTTP endpoint of one Abacus server.
type Server struct {
	b      *backend
	cfg    *config.Config
	limits Limits
	http   *http.Server
	mux    *http.ServeMux
	// scrapes counts /metrics requests (redis_exporter_scrapes_total);
	// scraping admits at most cap(scraping) at once, the rest get 503.
	scrapes  atomic.Int64
	scraping chan struct{}
	series   seriesCache    // the exported series's encoded labels (series_export.go)
	segments seriesSegments // the series family's last gzipped segments (gzip_segments.go)
	top      topKeys        // the dashboard's top keys sampler (topkeys.go)
}

// New makes the HTTP endpoint for the engine env, whose commands run under
// lock (the server lock). It reports not ready, and /metrics says
// redis_up 0, until SetReady(true): main calls it once the data is loaded.
func New(env *engine.Env, lock sync.Locker, limits Limits) *Server {
	s := &Server{b: newBackend(env, lock), cfg: env.Cfg, limits: limits.withDefaults(), mux: http.NewServeMux(),
		scraping: make(chan struct{}, 4)}
	static, _ := fs.Sub(staticFS, "static")
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", s.authUnless(http.HandlerFunc(s.metrics), config.HTTPMetricsPublic))
	s.mux.Handle("GET /api/status", s.auth(http.HandlerFunc(s.apiStatus)))
	s.mux.Handle("GET /api/series", s.auth(http.HandlerFunc(s.apiSeries)))
	s.mux.Handle("GET /api/slowlog", s.auth(http.HandlerFunc(s.apiSlowlog)))
	s.mux.Handle("GET /api/topkeys", s.auth(http.HandlerFunc(s.apiTopKeys)))
	s.mux.Handle("GET /", s.auth(http.FileServerFS(static)))
	l := s.limits
	s.http = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
	return s
}

// SetReady says whether the server's data is loaded: /readyz answers 200
// and the other endpoints read the engine only while it is.
func (s *Server) SetReady(ready bool) { s.b.ready.Store(ready) }

// Serve answers HTTP on ln until Close; it returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(&limitListener{Listener: ln, max: int64(s.limits.MaxConns)})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the endpoint and closes its connections.
func (s *Server) Close() error { return s.http.Close() }

// Handler is the endpoint's routes, for tests that serve them themselves.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !s.b.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("loading\n"))
		return
	}
	w.Write([]byte("ready\n"))
}

// metrics answers /metrics: a registry per request, so that the
// collector runs its commands as the request's user.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	select {
	case s.scraping <- struct{}{}:
		defer func() { <-s.scraping }()
	default:
		http.Error(w, "too many scrapes at once", http.StatusServiceUnavailable)
		return
	}
	reg := prometheus.NewRegistry()
	col := &collector{b: s.b, cfg: s.cfg, scrapes: &s.scrapes, ctx: r.Context(), cache: &s.series}
	reg.MustRegister(col)
	s.writeMetrics(w, r, reg, col)
}

// auth lets a request through when its credentials pass, in this order:
//
//   - http-requirepass set: the request carries it, as a basic-auth
//     password (any user name) or a bearer token; its commands run as
//     the default user.
//   - otherwise, when the data port requires AUTH (requirepass, or a
//     default user without nopass or off): basic-auth credentials that
//     AUTH would accept (an empty user name is "default"); the request's
//     commands run as that user, under its ACL rules, and a failure is
//     counted and logged in ACL LOG as AUTH's are.
//   - otherwise no credentials are needed.
func (s *Server) auth(h http.Handler) http.Handler { return s.authUnless(h, -1) }

// authUnless is auth, skipped while the boolean parameter open is yes
// (-1: never skipped).
func (s *Server) authUnless(h http.Handler, open config.ID) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open >= 0 && s.cfg.Bool(open) {
			h.ServeHTTP(w, r)
			return
		}
		if pass := s.cfg.Str(config.HTTPRequirePass); pass != "" {
			if authorized(r, pass) {
				h.ServeHTTP(w, r)
			} else {
				challenge(w)
			}
			return
		}
		if !s.b.env.ACL.AuthRequired() {
			h.ServeHTTP(w, r)
			return
		}
		user, pass, ok := r.BasicAuth()
		if !ok {
			challenge(w)
			return
		}
		if user == "" {
			user = "default"
		}
		name, err := s.b.authenticate(r.Context(), user, pass)
		if err != nil {
			writeError(w, err)
			return
		}
		if name == "" {
			challenge(w)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, name)))
	})
}

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="abacus", charset="UTF-8"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
}

func authorized(r *http.Request, pass string) bool {
	got := ""
	if _, p, ok := r.BasicAuth(); ok {
		got = p
	} else if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = tok
	} else {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(pass)) == 1
}

// limitListener closes connections beyond max at once, so that a flood of
// connections costs an accept and a close each, never a goroutine that
// waits for headers.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

// Close gives the slot back before the peer can see the close, so a
// client that reconnects on EOF finds it free.
func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
