package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/abacusdb/abacus/internal/httpapi"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// web is an in-process server with its HTTP endpoint.
type web struct {
	inst *servertest.Instance
	srv  *httpapi.Server
	base string           // http://127.0.0.1:port
	conn *servertest.Conn // do's connection, opened on first use
}

func startWeb(t testing.TB, limits httpapi.Limits, opts ...servertest.Option) *web {
	t.Helper()
	inst := servertest.Start(t, opts...)
	srv := httpapi.New(inst.Srv.Env, inst.Srv, limits)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	srv.SetReady(true)
	return &web{inst: inst, srv: srv, base: "http://" + ln.Addr().String()}
}

// get fetches path with the header pairs given and returns the response
// with its body read.
func (w *web) get(t testing.TB, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", w.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func (w *web) do(t testing.TB, args ...string) string {
	t.Helper()
	if w.conn == nil {
		w.conn = w.inst.Raw(t)
	}
	r := w.conn.Do(args...)
	if strings.HasPrefix(r, "-") {
		t.Fatalf("%v: %s", args, r)
	}
	return r
}

// scrape parses /metrics with Prometheus's own decoder for the format the
// response declares.
func (w *web) scrape(t testing.TB, header ...string) (map[string]*dto.MetricFamily, *http.Response) {
	t.Helper()
	resp, body := w.get(t, "/metrics", header...)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s: %s", resp.Status, body)
	}
	format := expfmt.ResponseFormat(resp.Header)
	dec := expfmt.NewDecoder(strings.NewReader(body), format)
	fams := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse /metrics (%s): %v\n%s", format, err, body)
		}
		fams[mf.GetName()] = &mf
	}
	return fams, resp
}

// sample is the value of family name's metric with the given labels
// (name, value pairs; others may be present), and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func mustSample(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sample(fams, name, labels...)
	if !ok {
		t.Fatalf("no %s%v in /metrics", name, labels)
	}
	return v
}

func TestMetricsExporterNames(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.do(t, "SET", "a", "1")
	w.do(t, "SET", "b", "2", "EX", "100")
	c := w.inst.Raw(t)
	c.Do("SELECT", "3")
	c.Do("SET", "c", "3")
	w.do(t, "GET", "a")
	w.do(t, "GET", "missing")
	w.inst.Raw(t).Do("NOSUCHCMD")

	for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
		fams, resp := w.scrape(t, "Accept", accept)
		ct := resp.Header.Get("Content-Type")
		if accept == "" && !strings.HasPrefix(ct, "text/plain; version=0.0.4") ||
			accept != "" && !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
		if v := mustSample(t, fams, "redis_up"); v != 1 {
			t.Errorf("redis_up = %v", v)
		}
		if v := mustSample(t, fams, "redis_db_keys", "db", "db0"); v != 2 {
			t.Errorf("redis_db_keys{db0} = %v, want 2", v)
		}
		if v := mustSample(t, fams, "redis_db_keys_expiring", "db", "db0"); v != 1 {
			t.Errorf("redis_db_keys_expiring{db0} = %v, want 1", v)
		}
		if v := mustSample(t, fams, "redis_db_keys", "db", "db3"); v != 1 {
			t.Errorf("redis_db_keys{db3} = %v, want 1", v)
		}
		if v := mustSample(t, fams, "redis_commands_total", "cmd", "set"); v != 3 {
			t.Errorf("redis_commands_total{set} = %v, want 3", v)
		}
		mustSample(t, fams, "redis_commands_duration_seconds_total", "cmd", "set")
		if v := mustSample(t, fams, "redis_keyspace_hits_total"); v != 1 {
			t.Errorf("redis_keyspace_hits_total = %v, want 1", v)
		}
		if v := mustSample(t, fams, "redis_keyspace_misses_total"); v != 1 {
			t.Errorf("redis_keyspace_misses_total = %v, want 1", v)
		}
		if v := mustSample(t, fams, "redis_errors_total", "err", "ERR"); v != 1 {
			t.Errorf("redis_errors_total{ERR} = %v, want 1", v)
		}
		for _, name := range []string{"redis_commands_processed_total", "redis_connected_clients",
			"redis_memory_used_bytes", "redis_memory_max_bytes", "redis_expired_keys_total",
			"redis_evicted_keys_total", "redis_connections_received_total", "redis_uptime_in_seconds",
			"redis_slowlog_length", "redis_instance_info", "redis_exporter_last_scrape_duration_seconds"} {
			mustSample(t, fams, name)
		}
		if mf := fams["redis_commands_processed_total"]; mf.GetType() != dto.MetricType_COUNTER {
			t.Errorf("redis_commands_processed_total is a %v", mf.GetType())
		}
		if mf := fams["redis_connected_clients"]; mf.GetType() != dto.MetricType_GAUGE {
			t.Errorf("redis_connected_clients is a %v", mf.GetType())
		}
		if _, ok := fams["abacus_timeseries_value"]; ok {
			t.Error("series exported with http-export-series empty")
		}
	}
}

func TestMetricsSeriesExportAndCap(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	for i := range 5 {
		w.do(t, "TS.ADD", fmt.Sprintf("temp:%d", i), "1000", fmt.Sprint(20+i), "LABELS", "exported", "yes", "room", fmt.Sprint("r", i), "key", "clash", "bad-name", "x")
	}
	w.do(t, "TS.ADD", "hidden", "1000", "7", "LABELS", "exported", "no")
	w.do(t, "TS.CREATE", "empty", "LABELS", "exported", "yes")
	w.do(t, "CONFIG", "SET", "http-export-series", "exported=yes")

	fams, _ := w.scrape(t)
	if v := mustSample(t, fams, "abacus_timeseries_value", "key", "temp:3", "room", "r3", "label_key", "clash", "bad_name", "x", "exported", "yes"); v != 23 {
		t.Errorf("temp:3 = %v", v)
	}
	if n := len(fams["abacus_timeseries_value"].Metric); n != 5 {
		t.Errorf("%d series exported, want 5 (hidden does not match, empty has no sample)", n)
	}
	if v := mustSample(t, fams, "abacus_timeseries_export_matched"); v != 6 {
		t.Errorf("matched = %v, want 6", v)
	}
	if v := mustSample(t, fams, "abacus_timeseries_export_truncated"); v != 0 {
		t.Errorf("truncated = %v", v)
	}

	w.do(t, "CONFIG", "SET", "http-export-series-max", "2")
	fams, _ = w.scrape(t)
	if n := len(fams["abacus_timeseries_value"].Metric); n != 2 {
		t.Errorf("%d series exported under a cap of 2", n)
	}
	// The first two in key order with a sample: temp:0, temp:1.
	if _, ok := sample(fams, "abacus_timeseries_value", "key", "temp:0"); !ok {
		t.Error("temp:0 not exported under the cap")
	}
	if v := mustSample(t, fams, "abacus_timeseries_export_truncated"); v != 1 {
		t.Errorf("truncated = %v under the cap", v)
	}

	w.do(t, "CONFIG", "SET", "http-export-series", "exported!=yes")
	fams, _ = w.scrape(t)
	if _, ok := sample(fams, "abacus_timeseries_export_error"); !ok {
		t.Error("a filter without a positive matcher gave no abacus_timeseries_export_error")
	}
	if v := mustSample(t, fams, "redis_up"); v != 1 {
		t.Errorf("redis_up = %v with a bad series filter", v)
	}
}

func TestAuth(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.do(t, "CONFIG", "SET", "http-requirepass", "s3cret")
	for _, path := range []string{"/metrics", "/", "/api/status", "/api/slowlog", "/api/series?filter=a=b"} {
		resp, _ := w.get(t, path)
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s without a password: %s, WWW-Authenticate %q", path, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
		if resp, _ := w.get(t, path, "Authorization", "Basic "+basic("prometheus", "wrong")); resp.StatusCode != 401 {
			t.Errorf("%s with a wrong password: %s", path, resp.Status)
		}
		if resp, _ := w.get(t, path, "Authorization", "Basic "+basic("anyone", "s3cret")); resp.StatusCode != 200 {
			t.Errorf("%s with basic auth: %s", path, resp.Status)
		}
		if resp, _ := w.get(t, path, "Authorization", "Bearer s3cret"); resp.StatusCode != 200 {
			t.Errorf("%s with a bearer token: %s", path, resp.Status)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, _ := w.get(t, path); resp.StatusCode != 200 {
			t.Errorf("%s needs no password, got %s", path, resp.Status)
		}
	}
	w.do(t, "CONFIG", "SET", "http-requirepass", "")
	if resp, _ := w.get(t, "/metrics"); resp.StatusCode != 200 {
		t.Errorf("/metrics after the password was removed: %s", resp.Status)
	}
}

func basic(user, pass string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, pass)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

func TestReadiness(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.srv.SetReady(false) // as while main loads the data
	resp, body := w.get(t, "/readyz")
	if resp.StatusCode != 503 || body != "loading\n" {
		t.Errorf("/readyz while loading: %s %q", resp.Status, body)
	}
	if resp, _ := w.get(t, "/healthz"); resp.StatusCode != 200 {
		t.Errorf("/healthz while loading: %s", resp.Status)
	}
	if resp, _ := w.get(t, "/api/status"); resp.StatusCode != 503 {
		t.Errorf("/api/status while loading: %s", resp.Status)
	}
	fams, _ := w.scrape(t)
	if v := mustSample(t, fams, "redis_up"); v != 0 {
		t.Errorf("redis_up = %v while loading", v)
	}
	w.srv.SetReady(true)
	resp, body = w.get(t, "/readyz")
	if resp.StatusCode != 200 || body != "ready\n" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("/readyz when loaded: %s %q %q", resp.Status, body, resp.Header.Get("Content-Type"))
	}
}

func TestDashboardFiles(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	for path, ct := range map[string]string{
		"/":                               "text/html",
		"/app.js":                         "text/javascript",
		"/app.css":                        "text/css",
		"/vendor/uplot/uPlot.iife.min.js": "text/javascript",
		"/vendor/uplot/uPlot.min.css":     "text/css",
		"/api/status":                     "application/json",
		"/api/slowlog":                    "application/json",
		"/api/series?filter=type%3Dtemp&window=1h": "application/json",
	} {
		resp, body := w.get(t, path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || body == "" {
			t.Errorf("%s: %s, Content-Type %q, %d bytes", path, resp.Status, resp.Header.Get("Content-Type"), len(body))
		}
	}
	if resp, _ := w.get(t, "/nothing-here"); resp.StatusCode != 404 {
		t.Errorf("/nothing-here: %s", resp.Status)
	}
	if resp, body := w.get(t, "/api/series?filter="); resp.StatusCode != 400 || !strings.Contains(body, "error") {
		t.Errorf("empty filter: %s %s", resp.Status, body)
	}
	if resp, body := w.get(t, "/api/series?filter=a!%3Db"); resp.StatusCode != 400 || !strings.Contains(body, "error") {
		t.Errorf("filter without a positive matcher: %s %s", resp.Status, body)
	}
}

// context keeps the import for helpers the browser test shares.
var _ = context.Background
