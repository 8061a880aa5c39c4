package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/httpapi"
	"github.com/abacusdb/abacus/internal/servertest"
)

type seriesJSON struct {
	Window      string
	FromMs      int64
	ToMs        int64
	BucketMs    int64
	Aggregation string
	Matched     int
	Keys        []string
	Charted     int
	X           []float64
	Series      []struct {
		Key    string
		Labels map[string]string
		Values []*float64
	}
}

func (w *web) series(t *testing.T, filter, window string) seriesJSON {
	t.Helper()
	resp, body := w.get(t, "/api/series?filter="+url.QueryEscape(filter)+"&window="+window)
	if resp.StatusCode != 200 {
		t.Fatalf("api/series %q %s: %s %s", filter, window, resp.Status, body)
	}
	var r seriesJSON
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAPISeries(t *testing.T) {
	const now = 1_700_000_000_000
	w := startWeb(t, httpapi.Limits{}, servertest.WithManualClock(now))
	// Two samples in each of two buckets of 10 s, and one too old for 1 h.
	w.do(t, "TS.ADD", "cpu:a", strconv.Itoa(now-3700_000), "1", "LABELS", "kind", "cpu", "host", "a")
	for _, s := range []struct{ ago, v int }{{25_000, 10}, {21_000, 20}, {5_000, 30}, {1_000, 50}} {
		w.do(t, "TS.ADD", "cpu:a", strconv.Itoa(now-s.ago), strconv.Itoa(s.v))
	}
	w.do(t, "TS.ADD", "cpu:b", strconv.Itoa(now-1_000), "7", "LABELS", "kind", "cpu", "host", "b")
	w.do(t, "TS.ADD", "mem:a", strconv.Itoa(now-1_000), "7", "LABELS", "kind", "mem")

	r := w.series(t, "kind=cpu", "1h")
	if r.Window != "1h" || r.BucketMs != 10_000 || r.Aggregation != "avg" || r.ToMs != now || r.Matched != 2 || r.Charted != 2 {
		t.Fatalf("1h: %+v", r)
	}
	if len(r.X) != 360 || r.X[len(r.X)-1] != float64(now)/1000 || int64(r.X[0]*1000) != r.FromMs {
		t.Fatalf("1h: %d buckets from %v to %v", len(r.X), r.X[0], r.X[len(r.X)-1])
	}
	a := r.Series[0]
	if a.Key != "cpu:a" || a.Labels["host"] != "a" || len(a.Values) != len(r.X) {
		t.Fatalf("first series %+v", a)
	}
	var got []string
	for i, v := range a.Values {
		if v != nil {
			got = append(got, fmt.Sprintf("%d:%g", int64(r.X[i]*1000)-now, *v))
		}
	}
	// Buckets start at multiples of 10 s: [now-30 s, now-20 s) holds 10 and
	// 20, [now-10 s, now) 30 and 50.
	if fmt.Sprint(got) != "[-30000:15 -10000:40]" {
		t.Errorf("cpu:a buckets %v", got)
	}

	if r := w.series(t, "kind=cpu", "7d"); r.BucketMs != 1800_000 || len(r.X) != 336 {
		t.Errorf("7d: bucket %d, %d buckets", r.BucketMs, len(r.X))
	}
	if r := w.series(t, "kind=nothing", "5m"); r.Matched != 0 || len(r.Series) != 0 || len(r.X) != 300 {
		t.Errorf("no match: %+v", r)
	}

	// More matches than the explorer draws: all are counted, the first
	// 200 listed, the first 50 drawn.
	for i := range 205 {
		w.do(t, "TS.ADD", fmt.Sprintf("many:%03d", i), strconv.Itoa(now-1000), strconv.Itoa(i), "LABELS", "g", "many")
	}
	r = w.series(t, "g=many", "5m")
	if r.Matched != 205 || len(r.Keys) != 200 || r.Charted != 50 || r.Series[49].Key != "many:049" {
		t.Fatalf("many: matched %d, listed %d, charted %d", r.Matched, len(r.Keys), r.Charted)
	}
	if v := r.Series[7].Values[len(r.X)-2]; v == nil || *v != 7 {
		t.Errorf("many:007's last bucket = %v", v)
	}
}

func TestAPIStatusAndSlowlog(t *testing.T) {
	w := startWeb(t, httpapi.Limits{}, servertest.WithConfig("slowlog-log-slower-than", "0", "maxmemory", "100mb"))
	c := w.inst.Raw(t)
	for i := range 7 {
		c.Do("SET", fmt.Sprint("k", i), "v")
	}
	c.Do("GET", "k1")
	c.Do("GET", "nope")
	resp, body := w.get(t, "/api/status")
	var st map[string]any
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%v %s", err, body)
	}
	for k, want := range map[string]float64{"keys": 7, "clients": 1, "hits": 1, "misses": 1, "maxMemory": 100 << 20} {
		if st[k] != want {
			t.Errorf("status %s = %v, want %v", k, st[k], want)
		}
	}
	if st["usedMemory"].(float64) <= 0 || st["serverTimeMs"].(float64) < float64(time.Now().Add(-time.Hour).UnixMilli()) {
		t.Errorf("status %v", st)
	}

	_, body = w.get(t, "/api/slowlog")
	var sl struct {
		Length  int
		Entries []struct {
			ID         int
			DurationUs int
			Args       []string
			Client     string
		}
	}
	if err := json.Unmarshal([]byte(body), &sl); err != nil {
		t.Fatal(err)
	}
	if sl.Length < 9 || len(sl.Entries) < 9 {
		t.Fatalf("slowlog %s", body)
	}
	found := false
	for _, e := range sl.Entries {
		if fmt.Sprint(e.Args) == "[GET nope]" && e.Client != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("GET nope not in the slow log: %s", body)
	}
}
