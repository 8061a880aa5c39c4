package conn_test

import (
	"bufio"
	"crypto/tls"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// tlsPing connects with cfg, sends PING and reads the reply; it returns
// the connection state.
func tlsPing(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return tls.ConnectionState{}, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return tls.ConnectionState{}, err
	}
	if line != "+PONG\r\n" {
		return tls.ConnectionState{}, &net.AddrError{Err: "reply " + line, Addr: addr}
	}
	return c.ConnectionState(), nil
}

// tls-protocols and tls-ciphers restrict what is negotiated; Go clients
// and openssl s_client see the same.
func TestTLSCiphersAndProtocols(t *testing.T) {
	p := servertest.NewPKI(t)
	_, addr := servertest.StartTLS(t, p, "no", "tls-protocols", "TLSv1.2", "tls-ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384:!aNULL")
	base := func() *tls.Config { return &tls.Config{RootCAs: p.Pool, ServerName: "localhost"} }
	cfg := base()
	cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	if _, err := tlsPing(addr, cfg); err == nil {
		t.Fatal("a suite tls-ciphers leaves out was negotiated")
	}
	cfg.CipherSuites = append(cfg.CipherSuites, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)
	st, err := tlsPing(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != tls.VersionTLS12 || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Fatalf("negotiated %x %s", st.Version, tls.CipherSuiteName(st.CipherSuite))
	}
	cfg = base()
	cfg.MinVersion = tls.VersionTLS13
	if _, err := tlsPing(addr, cfg); err == nil {
		t.Fatal("TLS 1.3 negotiated with tls-protocols TLSv1.2")
	}
	openssl := testenv.Need(t, "openssl")
	sClient := func(args ...string) string {
		cmd := exec.Command(openssl, append([]string{"s_client", "-connect", addr, "-CAfile", p.CAFile}, args...)...)
		cmd.Stdin = strings.NewReader("PING\r\n")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := sClient("-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"); !strings.Contains(out, "ECDHE-ECDSA-AES256-GCM-SHA384") || !strings.Contains(out, "Verify return code: 0") {
		t.Errorf("openssl s_client with the configured cipher:\n%s", out)
	}
	if out := sClient("-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"); strings.Contains(out, "Cipher is ECDHE") {
		t.Errorf("openssl s_client negotiated a cipher left out:\n%s", out)
	}
	if out := sClient("-tls1_3"); strings.Contains(out, "TLSv1.3") && strings.Contains(out, "Cipher is") && !strings.Contains(out, "Cipher is (NONE)") {
		t.Errorf("openssl s_client negotiated TLS 1.3:\n%s", out)
	}
}

// tls-ciphersuites naming none of Go's TLS 1.3 suites leaves TLS 1.2.
func TestTLSCiphersuitesNone(t *testing.T) {
	p := servertest.NewPKI(t)
	_, addr := servertest.StartTLS(t, p, "no", "tls-ciphersuites", "TLS_AES_128_CCM_SHA256")
	st, err := tlsPing(addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
	if err != nil || st.Version != tls.VersionTLS12 {
		t.Fatalf("version %x, %v", st.Version, err)
	}
}

// Sessions resume with tls-session-caching yes, within the cache's size
// and timeout, and never with caching off or a timeout of 0.
func TestTLSSessionCaching(t *testing.T) {
	p := servertest.NewPKI(t)
	resumes := func(addr string) bool {
		cfg := &tls.Config{RootCAs: p.Pool, ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		if _, err := tlsPing(addr, cfg); err != nil {
			t.Fatal(err)
		}
		st, err := tlsPing(addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return st.DidResume
	}
	_, on := servertest.StartTLS(t, p, "no")
	if !resumes(on) {
		t.Error("no resumption with tls-session-caching yes")
	}
	_, off := servertest.StartTLS(t, p, "no", "tls-session-caching", "no")
	if resumes(off) {
		t.Error("resumed with tls-session-caching no")
	}
	_, zero := servertest.StartTLS(t, p, "no", "tls-session-cache-timeout", "0")
	if resumes(zero) {
		t.Error("resumed with tls-session-cache-timeout 0")
	}
	// Size 1: a second client's session pushes the first one's out.
	_, one := servertest.StartTLS(t, p, "no", "tls-session-cache-size", "1")
	first := &tls.Config{RootCAs: p.Pool, ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	if _, err := tlsPing(one, first); err != nil {
		t.Fatal(err)
	}
	if !resumes(one) {
		t.Error("no resumption with tls-session-cache-size 1")
	}
	if st, err := tlsPing(one, first); err != nil || st.DidResume {
		t.Errorf("an evicted session resumed (%v)", err)
	}
}

// tls-auth-clients optional: clients without a certificate are served,
// a certificate is verified when given.
func TestTLSAuthClientsOptional(t *testing.T) {
	p, other := servertest.NewPKI(t), servertest.NewPKI(t)
	_, addr := servertest.StartTLS(t, p, "optional")
	if _, err := tlsPing(addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}); err != nil {
		t.Fatalf("without a certificate: %v", err)
	}
	for _, c := range []struct {
		pki *servertest.PKI
		ok  bool
	}{{p, true}, {other, false}} {
		cert, err := tls.LoadX509KeyPair(c.pki.ClientCert, c.pki.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tlsPing(addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost", Certificates: []tls.Certificate{cert}})
		if (err == nil) != c.ok {
			t.Errorf("certificate signed by the CA %v: %v", c.ok, err)
		}
	}
}

// A tls-ciphers that selects nothing is refused at CONFIG SET, as
// OpenSSL's failure is, and the current configuration stays.
func TestTLSBadCiphers(t *testing.T) {
	p := servertest.NewPKI(t)
	inst, addr := servertest.StartTLS(t, p, "no")
	if r := inst.Raw(t).Do("CONFIG", "SET", "tls-ciphers", "NOSUCHCIPHER"); r != "-ERR CONFIG SET failed (possibly related to argument 'tls-ciphers') - Unable to update TLS configuration. Check server logs.\r\n" {
		t.Fatalf("CONFIG SET tls-ciphers: %q", r)
	}
	if _, err := tlsPing(addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}); err != nil {
		t.Fatal(err)
	}
}
