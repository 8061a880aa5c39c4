package conn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// TLS clients: tls-port listens beside port, with Go's crypto/tls. A TLS
// client is served from a goroutine of its own (client.serve), as unix
// socket clients are: the event loop reads plaintext straight from the
// socket, and leaving it alone keeps the plaintext path as fast as it
// was. The handshake runs on that goroutine at the client's first read,
// so a slow or stuck handshake holds only its own goroutine.
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
	if _, err := loadTLS(c); err != nil {
		s.Log.Warn(err.Error())
		return errors.New("Unable to update TLS configuration. Check server logs.")
	}
	return nil
}

// loadTLS builds the TLS configuration from the tls-* parameters.
func loadTLS(c *config.Config) (*tls.Config, error) {
	certFile, keyFile := c.Str(config.TLSCertFile), c.Str(config.TLSKeyFile)
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls-cert-file and tls-key-file must be set")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	if pass := c.Str(config.TLSKeyFilePass); pass != "" {
		if keyPEM, err = decryptKey(keyPEM, pass); err != nil {
			return nil, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if err := setProtocols(tc, c.Str(config.TLSProtocols)); err != nil {
		return nil, err
	}
	tc.SessionTicketsDisabled = !c.Bool(config.TLSSessionCaching)
	pool, err := loadCAs(c.Str(config.TLSCACertFile), c.Str(config.TLSCACertDir))
	if err != nil {
		return nil, err
	}
	tc.ClientCAs = pool
	switch c.Str(config.TLSAuthClients) {
	case "yes":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		tc.ClientAuth = tls.NoClientCert
	}
	if (tc.ClientAuth != tls.NoClientCert || c.Bool(config.TLSReplication) || c.Bool(config.TLSCluster)) && pool == nil {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	return tc, nil
}

// decryptKey decrypts a PEM key encrypted with a passphrase (the
// "Proc-Type: 4,ENCRYPTED" form OpenSSL writes with -aes256/-des3).
func decryptKey(keyPEM []byte, pass string) ([]byte, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("no PEM data")
	}
	//lint:ignore SA1019 the legacy form is what tls-key-file-pass reads
	if !x509.IsEncryptedPEMBlock(block) { //nolint:staticcheck
		return keyPEM, nil
	}
	der, err := x509.DecryptPEMBlock(block, []byte(pass)) //nolint:staticcheck
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
}

// setProtocols applies tls-protocols ("TLSv1.2 TLSv1.3"; empty is both).
func setProtocols(tc *tls.Config, spec string) error {
	if strings.TrimSpace(spec) == "" {
		return nil
	}
	var lo, hi uint16
	for _, p := range strings.Fields(spec) {
		var v uint16
		switch strings.ToLower(p) {
		case "tlsv1":
			v = tls.VersionTLS10
		case "tlsv1.1":
			v = tls.VersionTLS11
		case "tlsv1.2":
			v = tls.VersionTLS12
		case "tlsv1.3":
			v = tls.VersionTLS13
		default:
			return fmt.Errorf("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		if lo == 0 || v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	tc.MinVersion, tc.MaxVersion = lo, hi
	return nil
}

func loadCAs(file, dir string) (*x509.CertPool, error) {
	if file == "" && dir == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	add := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !pool.AppendCertsFromPEM(b) {
			return fmt.Errorf("no certificate in %s", path)
		}
		return nil
	}
	if file != "" {
		if err := add(file); err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %v", err)
		}
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %v", err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				add(filepath.Join(dir, e.Name())) // files that are not certificates are skipped, as OpenSSL's hashed dir lookup does
			}
		}
	}
	return pool, nil
}

// ListenTLS binds tls-port on the bind addresses, when it is set (Listen
// includes it; tests that serve their own plaintext listener call it).
func (s *Server) ListenTLS() ([]net.Listener, error) {
	port := int(s.Cfg.Int(config.TLSPort))
	if port == 0 {
		return nil, nil
	}
	tc, err := loadTLS(s.Cfg)
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
	tc, err := loadTLS(s.Cfg)
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
	return tls.Server(c, l.s.tls.cfg.Load()), nil
}
