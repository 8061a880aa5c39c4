package conn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/tlsconf"
)

// TLS clients: tls-port listens beside port, with Go's crypto/tls. The
// handshake runs on a goroutine of the client's own (client.serveTLS), so
// a slow or stuck handshake holds only that goroutine. After it the
// event loop serves the client as it serves a plaintext one, reading
// and deciphering without waiting and writing replies through the TLS
// layer (tlssock.go): a goroutine per TLS client paid a park and a
// wake-up per request at pipeline 1, as plaintext clients did before the
// loop (docs/benchmarks.md). Without a loop (io-event-loop no, no epoll)
// the goroutine serves the client. Either way writes to the client never
// wait for its socket, so one that does not read is served on and closed
// at its output limit as a plaintext client is.
//
// The certificate, key and CA files are read when the listener starts
// and again when CONFIG SET changes one of the tls-* parameters; the
// connections accepted after take the new configuration.

// tlsState is the server's current TLS configuration.
type tlsState struct {
	cfg atomic.Pointer[tls.Config]
}

// tlsParams are the parameters whose change rebuilds the configuration
// (Redis's applyTlsCfg ones).
var tlsParams = []config.ID{
	config.TLSCertFile, config.TLSKeyFile, config.TLSKeyFilePass, config.TLSCACertFile,
	config.TLSCACertDir, config.TLSAuthClients, config.TLSProtocols, config.TLSSessionCaching,
	config.TLSClientCertFile, config.TLSClientKeyFile, config.TLSClientKeyFilePass,
	config.TLSDHParamsFile, config.TLSCiphers, config.TLSCiphersuites, config.TLSPreferServerCiphers,
	config.TLSSessionCacheSize, config.TLSSessionCacheTimeout, config.TLSReplication, config.TLSCluster,
}

func isTLSParam(id config.ID) bool {
	for _, p := range tlsParams {
		if p == id {
			return true
		}
	}
	return false
}

// verifyTLS is Redis's applyTlsCfg: when TLS is in use (tls-port,
// tls-replication or tls-cluster), a CONFIG SET of a tls-* parameter
// must leave a configuration that loads, or it is undone.
func (s *Server) verifyTLS(id config.ID) error {
	c := s.Cfg
	if !isTLSParam(id) || (c.Int(config.TLSPort) == 0 && !c.Bool(config.TLSReplication) && !c.Bool(config.TLSCluster)) {
		return nil
	}
	if _, _, err := tlsconf.Server(c); err != nil {
		s.Log.Warn(err.Error())
		return errors.New("Unable to update TLS configuration. Check server logs.")
	}
	return nil
}

// loadTLS builds the TLS configuration from the tls-* parameters
// (internal/tlsconf), logging what Go does not apply as asked.
func (s *Server) loadTLS() (*tls.Config, error) {
	tc, warnings, err := tlsconf.Server(s.Cfg)
	for _, w := range warnings {
		s.Log.Warn(w)
	}
	return tc, err
}

// ListenTLS binds tls-port on the bind addresses, when it is set (Listen
// includes it; tests that serve their own plaintext listener call it).
func (s *Server) ListenTLS() ([]net.Listener, error) {
	port := int(s.Cfg.Int(config.TLSPort))
	if port == 0 {
		return nil, nil
	}
	tc, err := s.loadTLS()
	if err != nil {
		return nil, fmt.Errorf("Failed to configure TLS. Check logs for more info. (%v)", err)
	}
	s.tls.cfg.Store(tc)
	var lns []net.Listener
	for _, addr := range strings.Fields(s.Cfg.Str(config.Bind)) {
		optional := strings.HasPrefix(addr, "-")
		addr = strings.TrimPrefix(addr, "-")
		if addr == "*" {
			addr = "0.0.0.0"
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			if optional {
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("could not create server TLS listening socket %s:%d: %w", addr, port, err)
		}
		lns = append(lns, &tlsListener{Listener: ln, s: s})
	}
	return lns, nil
}

// reloadTLS reads the TLS files again after a tls-* parameter changed; a
// configuration that does not load leaves the current one in force.
func (s *Server) reloadTLS(id config.ID) {
	if s.tls.cfg.Load() == nil || !isTLSParam(id) {
		return
	}
	tc, err := s.loadTLS()
	if err != nil {
		s.Log.Warn("Failed to update TLS configuration: " + err.Error())
		return
	}
	s.tls.cfg.Store(tc)
}

// tlsListener wraps accepted TCP connections in TLS with the current
// configuration.
type tlsListener struct {
	net.Listener
	s *Server
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if ka := l.s.Cfg.Int(config.TCPKeepalive); ka > 0 {
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		}
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if ts, err := newTLSSock(tc); err == nil {
			c = ts
		}
	}
	return tls.Server(c, l.s.tls.cfg.Load()), nil
}
