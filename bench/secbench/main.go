// Command secbench measures what access control and TLS cost, Abacus and
// redis-server side by side (A B A B ... rounds, medians):
//
//   - ACL: GET and SET (redis-benchmark -t get,set) as the default user
//     and as a user with 10 key patterns, the matching one last, so every
//     command checks all ten; the cost is the ratio of the two per server.
//   - TLS: the same load over each server's TLS port (certificates made
//     here with crypto/x509), pipeline 1 and 16.
//
// CPU per request comes from each process's CPU time (/proc).
//
//	go run ./bench/secbench
//	go run ./bench/secbench -rounds 5 -n 200000 -pipelines 1,16
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	ntls := flag.Int("ntls", 50000, "requests per TLS run")
	clients := flag.Int("c", 50, "parallel clients")
	pipes := flag.String("pipelines", "1,16", "pipeline depths of the TLS runs (\"\" for none)")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "secbench-")
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer os.RemoveAll(dir)
	ca, cert, keyFile := makeCerts(dir)
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()

	tlsPorts := map[string]int{"abacus": freePort(), "redis": freePort()}
	tlsArgs := func(name string) []string {
		return []string{"--tls-port", strconv.Itoa(tlsPorts[name]), "--tls-cert-file", cert, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", ca, "--tls-auth-clients", "no"}
	}
	servers := []*harness.Server{harness.Start("abacus", bin, tlsArgs("abacus")...), harness.Start("redis", "redis-server", tlsArgs("redis")...)}
	defer harness.StopAll(servers)
	patterns := []string{"ACL", "SETUSER", "bench", "on", ">pw", "+@all"}
	for i := 0; i < 9; i++ {
		patterns = append(patterns, fmt.Sprintf("~nomatch%d:*", i))
	}
	patterns = append(patterns, "~key:*")
	for _, s := range servers {
		c := s.Dial()
		if r := c.Do(patterns...); !strings.HasPrefix(r, "+OK") {
			harness.Fatal("%s: ACL SETUSER: %q", s.Name, r)
		}
		c.Close()
	}

	type key struct{ server, mode, test string }
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	load0 := loadAvg()
	modes := []string{"default", "acl"}
	for _, p := range pipelinesOrNone(*pipes) {
		modes = append(modes, fmt.Sprintf("tls P%d", p))
	}
	for r := 0; r < *rounds; r++ {
		for _, mode := range modes {
			for i := range servers {
				s := servers[(i+r)%len(servers)]
				for _, test := range []string{"get", "set"} {
					reqs := *n
					if strings.HasPrefix(mode, "tls") {
						reqs = *ntls
					}
					args := []string{"-h", "127.0.0.1", "-c", strconv.Itoa(*clients), "-n", strconv.Itoa(reqs), "-r", "100000", "--csv", "-t", test}
					switch {
					case mode == "default":
						args = append(args, "-p", strconv.Itoa(s.Port), "-P", "16")
					case mode == "acl":
						args = append(args, "-p", strconv.Itoa(s.Port), "-P", "16", "--user", "bench", "-a", "pw")
					default:
						p := strings.TrimPrefix(mode, "tls P")
						args = append(args, "-p", strconv.Itoa(tlsPorts[s.Name]), "-P", p, "--tls", "--cacert", ca)
					}
					before := s.CPUTicks()
					v := bench(args)
					after := s.CPUTicks()
					k := key{s.Name, mode, test}
					rps[k] = append(rps[k], v)
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(reqs))
					fmt.Fprintf(os.Stderr, "round %d %-8s %-6s %-3s %10.0f req/s\n", r+1, mode, s.Name, test, v)
				}
			}
		}
	}
	harness.Header(fmt.Sprintf("redis-benchmark -t get,set, %d clients, %d requests per run (TLS %d), -r 100000; ACL rows at pipeline 16 (user with 10 key patterns, the matching one last); %d rounds, medians; load average %s at the start, %s at the end.",
		*clients, *n, *ntls, *rounds, load0, loadAvg()))
	fmt.Println("| mode | test | server | req/s | vs redis | CPU µs/req | CPU vs redis |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, mode := range modes {
		for _, test := range []string{"get", "set"} {
			rr, rc := harness.Median(rps[key{"redis", mode, test}]), harness.Median(cpu[key{"redis", mode, test}])
			for _, s := range servers {
				a, c := harness.Median(rps[key{s.Name, mode, test}]), harness.Median(cpu[key{s.Name, mode, test}])
				fmt.Printf("| %s | %s | %s | %.0f | %.2fx | %.3f | %.2fx |\n", mode, test, s.Name, a, a/rr, c, c/rc)
			}
		}
	}
	fmt.Println()
	fmt.Println("| server | test | ACL/default req/s | ACL/default CPU µs/req |")
	fmt.Println("|---|---|---|---|")
	for _, s := range servers {
		for _, test := range []string{"get", "set"} {
			d, a := key{s.Name, "default", test}, key{s.Name, "acl", test}
			fmt.Printf("| %s | %s | %.3f | %.3f |\n", s.Name, test, harness.Median(rps[a])/harness.Median(rps[d]), harness.Median(cpu[a])/harness.Median(cpu[d]))
		}
	}
}

func pipelinesOrNone(s string) []int {
	if s == "" {
		return nil
	}
	return harness.Pipelines(s)
}

func bench(args []string) float64 {
	out, err := exec.Command("redis-benchmark", args...).Output()
	if err != nil {
		harness.Fatal("redis-benchmark %v: %v", args, err)
	}
	v, found := 0.0, false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\",\"")
		if len(f) < 2 || strings.Contains(f[0], "\"test") {
			continue
		}
		if x, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64); err == nil {
			v, found = x, true
		}
	}
	if !found {
		harness.Fatal("no result in %q", out)
	}
	return v
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// makeCerts writes a CA and a server certificate for 127.0.0.1.
func makeCerts(dir string) (caFile, certFile, keyFile string) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "secbench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		harness.Fatal("%v", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	t := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, t, ca, &k.PublicKey, caKey)
	if err != nil {
		harness.Fatal("%v", err)
	}
	kder, _ := x509.MarshalECPrivateKey(k)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600)
		return p
	}
	return write("ca.crt", "CERTIFICATE", caDER), write("server.crt", "CERTIFICATE", der), write("server.key", "EC PRIVATE KEY", kder)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
