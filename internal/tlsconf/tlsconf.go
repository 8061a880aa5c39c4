// Package tlsconf builds Go TLS configurations from Redis's tls-*
// parameters: the server side for tls-port, and the client side for the
// links the server opens itself (a replica to its primary with
// tls-replication, cluster buses with tls-cluster).
//
// What Go's crypto/tls cannot do as OpenSSL does, and what is done
// instead:
//   - tls-ciphers selects the TLS 1.2 suites, by OpenSSL names, aliases
//     (ECDHE, aRSA, AESGCM ... joined with '+') and exclusions ('!', '-');
//     Go orders the suites it negotiates itself, so tls-prefer-server-ciphers
//     is accepted and changes nothing (Go always picks by its own order,
//     which is server preference).
//   - tls-ciphersuites names TLS 1.3 suites; Go negotiates all three of
//     its TLS 1.3 suites or none, so a list naming none of them turns
//     TLS 1.3 off (as OpenSSL, left without a suite, does) and a list
//     naming some is logged as applied as all.
//   - tls-session-caching, tls-session-cache-size and
//     tls-session-cache-timeout: Go resumes sessions with tickets only;
//     the tickets carry an id kept in a bounded table (the cache size,
//     0 unlimited) and their creation time (the timeout), so a session
//     resumes only as long as OpenSSL's server cache would keep it.
//   - tls-protocols: a contiguous range of versions (Go has a minimum and
//     a maximum, not OpenSSL's per-version switches).
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// Server builds the tls-port configuration. Warnings are what Redis
// would not refuse but Go does not apply (logged by the caller).
func Server(c *config.Config) (tc *tls.Config, warnings []string, err error) {
	tc, warnings, err = base(c, c.Str(config.TLSCertFile), c.Str(config.TLSKeyFile), c.Str(config.TLSKeyFilePass))
	if err != nil {
		return nil, nil, err
	}
	switch c.Str(config.TLSAuthClients) {
	case "yes":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		tc.ClientAuth = tls.NoClientCert
	}
	if (tc.ClientAuth != tls.NoClientCert || c.Bool(config.TLSReplication) || c.Bool(config.TLSCluster)) && tc.ClientCAs == nil {
		return nil, nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	if c.Bool(config.TLSSessionCaching) {
		newSessionCache(int(c.Int(config.TLSSessionCacheSize)), c.Int(config.TLSSessionCacheTimeout)).install(tc)
	} else {
		tc.SessionTicketsDisabled = true
	}
	return tc, warnings, nil
}

// Client builds the configuration of the connections the server opens:
// tls-client-cert-file and tls-client-key-file when both are set, else
// the server's own certificate, presented as the client's; the peer is
// verified against tls-ca-cert-file / tls-ca-cert-dir, its chain only (as
// OpenSSL's SSL_VERIFY_PEER without a host name: primaries are reached
// by address).
func Client(c *config.Config) (*tls.Config, error) {
	cert, key, pass := c.Str(config.TLSCertFile), c.Str(config.TLSKeyFile), c.Str(config.TLSKeyFilePass)
	if cc, ck := c.Str(config.TLSClientCertFile), c.Str(config.TLSClientKeyFile); cc != "" && ck != "" {
		cert, key, pass = cc, ck, c.Str(config.TLSClientKeyFilePass)
	}
	tc, _, err := base(c, cert, key, pass)
	if err != nil {
		return nil, err
	}
	pool := tc.ClientCAs
	tc.ClientCAs = nil
	tc.InsecureSkipVerify = true // the chain is verified below, without a host name
	tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		return verifyChain(raw, pool)
	}
	return tc, nil
}

// Dial connects to addr for a link the server opens itself, over TLS
// (Client's configuration, read at each call so that a CONFIG SET of the
// files applies to the next link) when secure is set; the handshake is
// bounded by the same timeout as the connect.
func Dial(c *config.Config, addr string, timeout time.Duration, secure bool) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil || !secure {
		return conn, err
	}
	tc, err := Client(c)
	if err != nil {
		conn.Close()
		return nil, err
	}
	t := tls.Client(conn, tc)
	t.SetDeadline(time.Now().Add(timeout))
	if err := t.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	t.SetDeadline(time.Time{})
	return t, nil
}

func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("tls: the peer sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

// base is createSSLContext's part common to both sides: the certificate
// and key, protocols, ciphers and the CAs (in ClientCAs).
func base(c *config.Config, certFile, keyFile, keyPass string) (*tls.Config, []string, error) {
	if certFile == "" || keyFile == "" {
		return nil, nil, errors.New("tls-cert-file and tls-key-file must be set")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	if keyPass != "" {
		if keyPEM, err = decryptKey(keyPEM, keyPass); err != nil {
			return nil, nil, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if err := setProtocols(tc, c.Str(config.TLSProtocols)); err != nil {
		return nil, nil, err
	}
	pool, err := loadCAs(c.Str(config.TLSCACertFile), c.Str(config.TLSCACertDir))
	if err != nil {
		return nil, nil, err
	}
	tc.ClientCAs, tc.RootCAs = pool, pool
	if spec := c.Str(config.TLSCiphers); spec != "" {
		ids, ok := parseCiphers(spec)
		if !ok {
			return nil, nil, fmt.Errorf("Failed to configure ciphers: %s", spec)
		}
		tc.CipherSuites = ids
	}
	var warnings []string
	if spec := c.Str(config.TLSCiphersuites); spec != "" {
		switch all, none := suites13(spec); {
		case none:
			// No TLS 1.3 suite left: OpenSSL then negotiates TLS 1.2 at most.
			if tc.MinVersion > tls.VersionTLS12 {
				return nil, nil, fmt.Errorf("Failed to configure ciphersuites: %s", spec)
			}
			tc.MaxVersion = tls.VersionTLS12
		case !all:
			warnings = append(warnings, "tls-ciphersuites "+spec+" is applied as all of Go's TLS 1.3 suites: Go does not negotiate a subset")
		}
	}
	return tc, warnings, nil
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
