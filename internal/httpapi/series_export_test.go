package httpapi_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/httpapi"
)

// The exported series are written from a cache of their encoded labels:
// a scrape after TS.ALTER, a new series or a deleted one shows the
// change, in both formats, and Prometheus's parser reads labels that
// need escaping and values of every shape.
func TestMetricsSeriesCacheFollowsChanges(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.do(t, "CONFIG", "SET", "http-export-series", "exported=yes")
	w.do(t, "TS.ADD", "a", "1000", "2.5", "LABELS", "exported", "yes", "room", "kitchen")
	w.do(t, "TS.ADD", "b", "1000", "1e21", "LABELS", "exported", "yes", "note", "say \"hi\"\\\nbye")
	w.do(t, "TS.ADD", "c", "1000", "-7", "LABELS", "exported", "yes", "bin", "\xff\xfe")
	formats := []string{"", "application/openmetrics-text; version=1.0.0"}
	for _, accept := range formats {
		fams, _ := w.scrape(t, "Accept", accept)
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "a", "room", "kitchen"); v != 2.5 {
			t.Errorf("%q: a = %v", accept, v)
		}
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "b", "note", "say \"hi\"\\\nbye"); v != 1e21 {
			t.Errorf("%q: b = %v", accept, v)
		}
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "c", "bin", "\uFFFD"); v != -7 {
			t.Errorf("%q: c = %v", accept, v)
		}
	}
	w.do(t, "TS.ALTER", "a", "LABELS", "exported", "yes", "room", "hall")
	w.do(t, "DEL", "b")
	w.do(t, "TS.ADD", "d", "2000", "4", "LABELS", "exported", "yes")
	w.do(t, "TS.ADD", "c", "2000", "8")
	for _, accept := range formats {
		fams, _ := w.scrape(t, "Accept", accept)
		if _, ok := sample(fams, "abacus_timeseries_value", "key", "a", "room", "kitchen"); ok {
			t.Errorf("%q: a still has its old label", accept)
		}
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "a", "room", "hall"); v != 2.5 {
			t.Errorf("%q: a = %v after TS.ALTER", accept, v)
		}
		if _, ok := sample(fams, "abacus_timeseries_value", "key", "b"); ok {
			t.Errorf("%q: b exported after DEL", accept)
		}
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "c"); v != 8 {
			t.Errorf("%q: c = %v", accept, v)
		}
		if v := mustSample(t, fams, "abacus_timeseries_value", "key", "d"); v != 4 {
			t.Errorf("%q: d = %v", accept, v)
		}
		if n := len(fams["abacus_timeseries_value"].Metric); n != 3 {
			t.Errorf("%q: %d series exported, want 3", accept, n)
		}
	}
	// A filter the server refuses is reported, and nothing is exported.
	w.do(t, "CONFIG", "SET", "http-export-series", "nonsense")
	fams, _ := w.scrape(t)
	mustSample(t, fams, "abacus_timeseries_export_error")
	if _, ok := fams["abacus_timeseries_value"]; ok {
		t.Error("series exported under a refused filter")
	}
}
