package conn_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// testPKI is a CA and the certificates it signed, written as PEM files.
type testPKI struct {
	dir                   string
	caFile                string
	certFile, keyFile     string // the server's (CN localhost, SAN 127.0.0.1)
	clientCert, clientKey string
	pool                  *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "abacus test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &testPKI{dir: dir, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.caFile = write("ca.crt", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kder)
	}
	p.certFile, p.keyFile = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startTLS(t *testing.T, p *testPKI, authClients string) (*servertest.Instance, string) {
	port := freeTCPPort(t)
	inst := servertest.Start(t, servertest.WithConfig("bind", "127.0.0.1", "tls-port", strconv.Itoa(port),
		"tls-cert-file", p.certFile, "tls-key-file", p.keyFile, "tls-ca-cert-file", p.caFile,
		"tls-auth-clients", authClients))
	lns, err := inst.Srv.ListenTLS()
	if err != nil {
		t.Fatal(err)
	}
	go inst.Srv.Serve(lns...)
	return inst, "127.0.0.1:" + strconv.Itoa(port)
}

// TCP and TLS at once: go-redis over TLS and plaintext see the same data.
func TestTLSAndPlaintext(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	ctx := context.Background()
	tc := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.pool, ServerName: "localhost"}, Protocol: 2, DisableIdentity: true})
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
	out, err := exec.Command(cli, "-p", port, "--tls", "--cacert", p.caFile, "PING").CombinedOutput()
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
	no := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.pool, ServerName: "localhost"}, MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer no.Close()
	if err := no.Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	cert, err := tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	yes := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.pool, ServerName: "localhost", Certificates: []tls.Certificate{cert}}, Protocol: 2, DisableIdentity: true})
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
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", inst.Addr, &tls.Config{RootCAs: p.pool, ServerName: "localhost"})
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
	if err := dial(p1.pool); err != nil {
		t.Fatal(err)
	}
	c := inst.Raw(t)
	// A file that does not load is refused and changes nothing.
	if r := c.Do("CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"); r != "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.\r\n" {
		t.Fatalf("CONFIG SET of a missing file: %q", r)
	}
	if err := dial(p1.pool); err != nil {
		t.Fatal(err)
	}
	if r := c.Do("CONFIG", "SET", "tls-key-file", p2.keyFile, "tls-cert-file", p2.certFile); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if err := dial(p2.pool); err != nil {
		t.Fatalf("after reload, the new CA: %v", err)
	}
	if err := dial(p1.pool); err == nil {
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
	tc := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: p.pool, ServerName: "localhost"}, Protocol: 2, DisableIdentity: true})
	defer tc.Close()
	if err := tc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("TLS PING during the flood: %v", err)
	}
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("plaintext PING during the flood: %q", r)
	}
}
