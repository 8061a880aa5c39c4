package httpapi

import (
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
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
}

// New makes the HTTP endpoint for the engine env, whose commands run under
// lock (the server lock). It reports not ready, and /metrics says
// redis_up 0, until SetReady(true): main calls it once the data is loaded.
func New(env *engine.Env, lock sync.Locker, limits Limits) *Server {
	s := &Server{b: newBackend(env, lock), cfg: env.Cfg, limits: limits.withDefaults(), mux: http.NewServeMux()}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{b: s.b, cfg: env.Cfg})
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		EnableOpenMetrics:   true,
		MaxRequestsInFlight: 4,
	})
	static, _ := fs.Sub(staticFS, "static")
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", s.auth(metrics))
	s.mux.Handle("GET /api/status", s.auth(http.HandlerFunc(s.apiStatus)))
	s.mux.Handle("GET /api/series", s.auth(http.HandlerFunc(s.apiSeries)))
	s.mux.Handle("GET /api/slowlog", s.auth(http.HandlerFunc(s.apiSlowlog)))
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

// auth lets a request through when http-requirepass is empty, or when the
// request carries it as a basic-auth password (any user) or a bearer token.
func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pass := s.cfg.Str(config.HTTPRequirePass)
		if pass == "" || authorized(r, pass) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="abacus", charset="UTF-8"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
	})
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
