package servertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// PKI is a test CA and the certificates it signed, written as PEM files
// in a temporary directory: made in the test, no key is committed.
type PKI struct {
	Dir                   string
	CAFile                string
	CertFile, KeyFile     string // the server's (CN localhost, SAN 127.0.0.1)
	ClientCert, ClientKey string
	Pool                  *x509.CertPool
}

// NewPKI makes a CA (ECDSA P-256) with a server and a client certificate.
func NewPKI(t testing.TB) *PKI {
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
	p := &PKI{Dir: dir, Pool: x509.NewCertPool()}
	p.Pool.AddCert(ca)
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.CAFile = write("ca.crt", "CERTIFICATE", caDER)
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
	p.CertFile, p.KeyFile = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

// StartTLS starts an instance that also listens on a TLS port (bind
// 127.0.0.1) with p's certificate, tls-auth-clients as given and any
// further configuration; it returns the TLS address.
func StartTLS(t testing.TB, p *PKI, authClients string, kv ...string) (*Instance, string) {
	t.Helper()
	// The free port may be taken by another test process before the
	// listener binds it: try another one then.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		conf := append([]string{"bind", "127.0.0.1", "tls-port", strconv.Itoa(port),
			"tls-cert-file", p.CertFile, "tls-key-file", p.KeyFile, "tls-ca-cert-file", p.CAFile,
			"tls-auth-clients", authClients}, kv...)
		inst := Start(t, WithConfig(conf...))
		lns, err := inst.Srv.ListenTLS()
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) && attempt < 4 {
				continue
			}
			t.Fatal(err)
		}
		go inst.Srv.Serve(lns...)
		return inst, "127.0.0.1:" + strconv.Itoa(port)
	}
}
