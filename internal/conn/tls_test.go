package conn_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func newTestPKI(t *testing.T) *servertest.PKI { return servertest.NewPKI(t) }

func startTLS(t *testing.T, p *servertest.PKI, authClients string) (*servertest.Instance, string) {
	return servertest.StartTLS(t, p, authClients)
}

// TCP and TLS at once: go-redis over TLS and plaintext see the same data.
func TestTLSAndPlaintext(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	ctx := context.Background()
	tc := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}, Protocol: 2, DisableIdentity: true})
	defer tc.Close()
	if err := tc.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := inst.Client(t).Get(ctx, "k").Val(); got != "over tls" {
		t.Fatalf("plaintext GET = %q", got)
	}
	// Pipelined over TLS.
	pipe := tc.Pipeline()
	for i := 0; i < 100; i++ {
		pipe.Incr(ctx, "n")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tc.Get(ctx, "n").Val(); got != "100" {
		t.Fatalf("n = %q", got)
	}
}

// redis-cli --tls with the CA works against the TLS port.
func TestTLSRedisCli(t *testing.T) {
	cli := testenv.Need(t, "redis-cli")
	p := newTestPKI(t)
	_, tlsAddr := startTLS(t, p, "no")
	_, port, _ := net.SplitHostPort(tlsAddr)
	out, err := exec.Command(cli, "-p", port, "--tls", "--cacert", p.CAFile, "PING").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "PONG" {
		t.Fatalf("redis-cli --tls: %v %q", err, out)
	}
}

// tls-auth-clients yes: a client without a certificate is refused, one
// with a certificate the CA signed is served.
func TestTLSClientCertificates(t *testing.T) {
	p := newTestPKI(t)
	_, tlsAddr := startTLS(t, p, "yes")
	ctx := context.Background()
	no := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}, MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer no.Close()
	if err := no.Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	cert, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	yes := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.Pool, ServerName: "localhost", Certificates: []tls.Certificate{cert}}, Protocol: 2, DisableIdentity: true})
	defer yes.Close()
	if err := yes.Ping(ctx).Err(); err != nil {
		t.Fatalf("client with a certificate: %v", err)
	}
}

// A plaintext client on the TLS port and a TLS client on the plaintext
// port are closed, and neither is logged as a crash.
func TestTLSWrongProtocol(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	c, err := net.DialTimeout("tcp", tlsAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("PING\r\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(bufio.NewReader(c))
	c.Close()
	if strings.Contains(string(b), "PONG") {
		t.Errorf("plaintext PING answered on the TLS port: %q", b)
	}
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", inst.Addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
	if err == nil {
		tc.Close()
		t.Error("TLS handshake succeeded on the plaintext port")
	}
	// The server goes on serving both.
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after: %q", r)
	}
	if logs := inst.Logs.String(); strings.Contains(logs, "panic") {
		t.Errorf("log:\n%s", logs)
	}
}

// CONFIG SET tls-cert-file loads the new certificate for the connections
// made after it.
func TestTLSCertificateReload(t *testing.T) {
	p1, p2 := newTestPKI(t), newTestPKI(t)
	inst, tlsAddr := startTLS(t, p1, "no")
	dial := func(pool *x509.CertPool) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(p1.Pool); err != nil {
		t.Fatal(err)
	}
	c := inst.Raw(t)
	// A file that does not load is refused and changes nothing.
	if r := c.Do("CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"); r != "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.\r\n" {
		t.Fatalf("CONFIG SET of a missing file: %q", r)
	}
	if err := dial(p1.Pool); err != nil {
		t.Fatal(err)
	}
	if r := c.Do("CONFIG", "SET", "tls-key-file", p2.KeyFile, "tls-cert-file", p2.CertFile); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if err := dial(p2.Pool); err != nil {
		t.Fatalf("after reload, the new CA: %v", err)
	}
	if err := dial(p1.Pool); err == nil {
		t.Fatal("after reload, the old certificate is still served")
	}
}

// Clients that connect to the TLS port and never finish a handshake hold
// only their own goroutines: TLS and plaintext clients are served.
func TestTLSHandshakeFlood(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	for i := 0; i < 64; i++ {
		c, err := net.DialTimeout("tcp", tlsAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 {
			c.Write([]byte{0x16, 0x03, 0x01}) // a TLS record header, then nothing
		}
	}
	tc := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}, Protocol: 2, DisableIdentity: true})
	defer tc.Close()
	if err := tc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("TLS PING during the flood: %v", err)
	}
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("plaintext PING during the flood: %q", r)
	}
}
