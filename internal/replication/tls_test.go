package replication_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// tlsReplicaConf is what a replica needs for tls-replication: its
// certificate (presented to a primary with tls-auth-clients yes) and the
// CA that signed the primary's.
func tlsReplicaConf(p *servertest.PKI) []string {
	return []string{"tls-replication", "yes", "tls-cert-file", p.ClientCert, "tls-key-file", p.ClientKey, "tls-ca-cert-file", p.CAFile}
}

// tls-replication: an Abacus replica reaches a redis-server primary on
// its TLS port, which requires a client certificate; an Abacus primary
// on its TLS port serves an Abacus replica and a redis-server replica.
func TestReplicationOverTLS(t *testing.T) {
	p := servertest.NewPKI(t)
	rport := freePort(t)
	r := servertest.PrivateRedis(t, "--tls-port", rport, "--tls-cert-file", p.CertFile, "--tls-key-file", p.KeyFile,
		"--tls-ca-cert-file", p.CAFile, "--tls-auth-clients", "yes")
	rc := servertest.Dial(t, r.Addr)
	loadTypes(t, rc)
	replica := servertest.Start(t, servertest.WithConfig(tlsReplicaConf(p)...))
	ac := replica.Raw(t)
	if got := ac.Do("REPLICAOF", "127.0.0.1", rport); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	sameData(t, rc, ac)
	rc.Do("SET", "after-sync", "1")
	sameData(t, rc, ac)

	primary, tlsAddr := servertest.StartTLS(t, p, "yes")
	pc := primary.Raw(t)
	loadTypes(t, pc)
	_, tport, _ := strings.Cut(tlsAddr, ":")
	if got := ac.Do("REPLICAOF", "127.0.0.1", tport); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	sameData(t, pc, ac)
	rr := servertest.PrivateRedis(t, "--tls-replication", "yes", "--tls-cert-file", p.ClientCert, "--tls-key-file", p.ClientKey,
		"--tls-ca-cert-file", p.CAFile, "--replicaof", "127.0.0.1", tport)
	sameData(t, pc, servertest.Dial(t, rr.Addr))
	pc.Do("SET", "streamed", "over tls")
	sameData(t, pc, ac)
	sameData(t, pc, servertest.Dial(t, rr.Addr))
}
