package httpapi_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/httpapi"
)

// TestAuthACL checks HTTP basic authentication against the server's ACL
// users when the data port requires AUTH and http-requirepass is empty:
// the credentials AUTH accepts, the commands run under the user's rules,
// failures in ACL LOG, and http-metrics-public opening /metrics alone.
func TestAuthACL(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.do(t, "ACL", "SETUSER", "prom", "on", ">pw", "+info", "+slowlog", "+ts.mget")
	w.do(t, "ACL", "SETUSER", "pinger", "on", ">pw2", "+ping")
	// No AUTH required yet: every endpoint is open.
	if resp, _ := w.get(t, "/api/status"); resp.StatusCode != 200 {
		t.Fatalf("/api/status with no password anywhere: %s", resp.Status)
	}
	w.do(t, "CONFIG", "SET", "requirepass", "adminpw")

	for _, path := range []string{"/metrics", "/", "/api/status", "/api/slowlog"} {
		if resp, _ := w.get(t, path); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s without credentials: %s", path, resp.Status)
		}
		for _, cred := range [][2]string{{"prom", "wrong"}, {"nobody", "pw"}, {"", "pw"}} {
			if resp, _ := w.get(t, path, "Authorization", "Basic "+basic(cred[0], cred[1])); resp.StatusCode != 401 {
				t.Errorf("%s as %q/%q: %s", path, cred[0], cred[1], resp.Status)
			}
		}
		for _, cred := range [][2]string{{"prom", "pw"}, {"default", "adminpw"}, {"", "adminpw"}} {
			if resp, body := w.get(t, path, "Authorization", "Basic "+basic(cred[0], cred[1])); resp.StatusCode != 200 {
				t.Errorf("%s as %q: %s %s", path, cred[0], resp.Status, body)
			}
		}
	}
	if resp, _ := w.get(t, "/healthz"); resp.StatusCode != 200 {
		t.Errorf("/healthz: %s", resp.Status)
	}
	// The failures are AUTH failures, logged as such.
	if log := w.do(t, "ACL", "LOG"); !strings.Contains(log, "$4\r\nauth\r\n") || !strings.Contains(log, "$4\r\nhttp\r\n") || !strings.Contains(log, "$6\r\nnobody\r\n") {
		t.Errorf("ACL LOG: %q", log)
	}

	// A user without INFO: its requests run under its rules.
	pinger := "Basic " + basic("pinger", "pw2")
	if resp, body := w.get(t, "/api/status", "Authorization", pinger); resp.StatusCode != 500 || !strings.Contains(body, "NOPERM") {
		t.Errorf("/api/status as a user without INFO: %s %s", resp.Status, body)
	}
	fams, _ := w.scrape(t, "Authorization", pinger)
	if v := mustSample(t, fams, "redis_up"); v != 0 {
		t.Errorf("redis_up = %v for a user without INFO", v)
	}
	fams, _ = w.scrape(t, "Authorization", "Basic "+basic("prom", "pw"))
	if v := mustSample(t, fams, "redis_up"); v != 1 {
		t.Errorf("redis_up = %v as prom", v)
	}

	// http-metrics-public opens /metrics, and nothing else.
	w.do(t, "CONFIG", "SET", "http-metrics-public", "yes")
	if resp, _ := w.get(t, "/metrics"); resp.StatusCode != 200 {
		t.Errorf("/metrics public: %s", resp.Status)
	}
	if resp, _ := w.get(t, "/api/status"); resp.StatusCode != 401 {
		t.Errorf("/api/status with /metrics public: %s", resp.Status)
	}

	// http-requirepass, when set, is the one password.
	w.do(t, "CONFIG", "SET", "http-metrics-public", "no")
	w.do(t, "CONFIG", "SET", "http-requirepass", "webpw")
	if resp, _ := w.get(t, "/api/status", "Authorization", "Basic "+basic("prom", "pw")); resp.StatusCode != 401 {
		t.Errorf("ACL credentials with http-requirepass set: %s", resp.Status)
	}
	if resp, _ := w.get(t, "/api/status", "Authorization", "Basic "+basic("x", "webpw")); resp.StatusCode != 200 {
		t.Errorf("http-requirepass: %s", resp.Status)
	}
}
