package cluster

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/tlsconf"
)

// The cluster bus over TLS (tls-cluster yes), as redis-server 7.0 runs
// it: the bus listener requires and verifies a client certificate
// whatever tls-auth-clients says, outgoing bus links present
// tls-client-cert-file (else tls-cert-file) and verify the peer's chain.
// The node's port is then its tls-port and pport its plaintext port; the
// bus port defaults to tls-port+10000. Plaintext clients are shown (and
// redirected to) the pport, TLS clients the port.

// handshakeTimeout bounds a bus TLS handshake, so a peer that stalls it
// holds only its own goroutine, and not for long.
const handshakeTimeout = 5 * time.Second

func (c *Cluster) tlsOn() bool { return c.e.Cfg.Bool(config.TLSCluster) }

// clientPort is the port this node announces to clients and peers.
func (c *Cluster) clientPort() int {
	if c.tlsOn() {
		return int(c.e.Cfg.Int(config.TLSPort))
	}
	return int(c.e.Cfg.Int(config.Port))
}

// plainPort is the pport announced: the plaintext port with a TLS bus.
func (c *Cluster) plainPort() int {
	if c.tlsOn() {
		return int(c.e.Cfg.Int(config.Port))
	}
	return 0
}

// usePPort reports whether replies to s name plaintext ports.
func (c *Cluster) usePPort(s *engine.Session) bool { return c.tlsOn() && (s == nil || !s.TLS) }

// busServerTLS is the bus listener's configuration (nil: plaintext).
func (c *Cluster) busServerTLS() (*tls.Config, error) {
	if !c.tlsOn() {
		return nil, nil
	}
	tc, warnings, err := tlsconf.Server(c.e.Cfg)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		c.e.Log.Warn(w)
	}
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	return tc, nil
}

// handshake finishes a bus connection's TLS handshake (either side)
// within handshakeTimeout, or until the cluster closes; a failure closes
// the connection.
func (c *Cluster) handshake(conn *tls.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-stop:
		}
	}()
	if err := conn.HandshakeContext(ctx); err != nil {
		conn.Close()
		return err
	}
	return nil
}

// dialBus connects to a peer's bus port, over TLS when tls-cluster is on.
func (c *Cluster) dialBus(addr string, timeout time.Duration) (net.Conn, error) {
	var tc *tls.Config
	if c.tlsOn() {
		var err error
		if tc, err = tlsconf.Client(c.e.Cfg); err != nil {
			return nil, err
		}
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil || tc == nil {
		return conn, err
	}
	t := tls.Client(conn, tc)
	if err := c.handshake(t); err != nil {
		return nil, err
	}
	return t, nil
}
