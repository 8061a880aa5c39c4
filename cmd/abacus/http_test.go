package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestHTTPPort: http-port starts the HTTP endpoint beside the data port,
// on http-bind, ready once the data is loaded.
func TestHTTPPort(t *testing.T) {
	port := freePort(t)
	p := start(t, "--http-port", strconv.Itoa(port), "--http-bind", "127.0.0.1")
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for path, want := range map[string]string{"/readyz": "ready\n", "/healthz": "ok\n"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, p.logs())
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("%s: %s %q", path, resp.Status, body)
		}
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\nredis_up 1\n") {
		t.Errorf("/metrics has no redis_up 1:\n%s", body)
	}
	if !strings.Contains(p.logs(), "HTTP endpoint") {
		t.Errorf("the HTTP endpoint's address is not logged:\n%s", p.logs())
	}
}
