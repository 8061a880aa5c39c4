package replication

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/tlsconf"
)

// dial opens the link to the primary: over TLS when tls-replication is
// on (the primary's address is then its tls-port), with the certificate
// and CAs of internal/tlsconf's client side, read at each connection so
// that a CONFIG SET of the files applies to the next one, as Redis's
// client context does.
func (p *Primary) dial(addr string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil || !p.e.Cfg.Bool(config.TLSReplication) {
		return conn, err
	}
	tc, err := tlsconf.Client(p.e.Cfg)
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
