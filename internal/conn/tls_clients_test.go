package conn_test

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// redisPyTLS is run by python3 with redis-py: SET, GET and a pipeline
// over TLS with the CA and a client certificate, as an application
// would write it.
const redisPyTLS = `
import sys
try:
    import redis
except ImportError:
    print("SKIP no redis module"); sys.exit(0)
host, port, ca, cert, key = sys.argv[1:6]
r = redis.Redis(host=host, port=int(port), ssl=True, ssl_ca_certs=ca, ssl_certfile=cert, ssl_keyfile=key, ssl_cert_reqs="required")
r.set("py:k", "over tls")
assert r.get("py:k") == b"over tls", r.get("py:k")
p = r.pipeline()
for i in range(100):
    p.incr("py:n")
p.execute()
assert r.get("py:n") == b"100"
print("OK", redis.__version__)
`

// redis-py with ssl=True and redis-cli --tls, both with a client
// certificate (tls-auth-clients yes) and the CA; redis-cli without a
// certificate is refused.
func TestTLSRedisPyAndCli(t *testing.T) {
	p := servertest.NewPKI(t)
	_, addr := servertest.StartTLS(t, p, "yes")
	host, port, _ := net.SplitHostPort(addr)
	// The system's python3 has redis-py; one earlier on PATH may not.
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		py = testenv.Need(t, "python3")
	}
	out, err := exec.Command(py, "-c", redisPyTLS, host, port, p.CAFile, p.ClientCert, p.ClientKey).CombinedOutput()
	switch s := strings.TrimSpace(string(out)); {
	case strings.HasPrefix(s, "SKIP"):
		testenv.Skip(t, "redis-py: "+s)
	case err != nil || !strings.HasPrefix(s, "OK"):
		t.Fatalf("redis-py over TLS: %v\n%s", err, out)
	}
	cli := testenv.Need(t, "redis-cli")
	out, err = exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", p.CAFile, "--cert", p.ClientCert, "--key", p.ClientKey, "GET", "py:n").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "100" {
		t.Fatalf("redis-cli --tls --cert: %v %q", err, out)
	}
	out, _ = exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", p.CAFile, "PING").CombinedOutput()
	if strings.Contains(string(out), "PONG") {
		t.Fatalf("redis-cli without a certificate was served: %q", out)
	}
}
