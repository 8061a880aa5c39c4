package replication

import (
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
	return tlsconf.Dial(p.e.Cfg, addr, timeout, p.e.Cfg.Bool(config.TLSReplication))
}
