package httpapi

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// latencyInfo is INFO text as Redis 7 prints latencystats beside
// commandstats.
const latencyInfo = "# Commandstats\r\n" +
	"cmdstat_set:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_get:calls=4,usec=8,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n" +
	"\r\n# Latencystats\r\n" +
	"latency_percentiles_usec_set:p50=4.007,p99=12.031,p99.9=40.191\r\n" +
	"latency_percentiles_usec_get:p50=1.003,p99=3.007,p99.9=3.007\r\n"

// TestLatencyPercentiles checks that INFO latencystats, when the server
// prints it, reaches the dashboard's status and /metrics as
// redis_exporter's summary redis_latency_percentiles_usec{cmd}.
func TestLatencyPercentiles(t *testing.T) {
	st := statusFromInfo(parseInfo(latencyInfo))
	if l := st.Latency["set"].Percentiles; l["p50"] != 4.007 || l["p99"] != 12.031 || l["p99.9"] != 40.191 {
		t.Errorf("status latency %+v", st.Latency)
	}
	ch := make(chan prometheus.Metric, 100)
	emitter{ch: ch}.info(parseInfo(latencyInfo))
	close(ch)
	found := 0
	for m := range ch {
		if !strings.Contains(m.Desc().String(), `"redis_latency_percentiles_usec"`) {
			continue
		}
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		s := pb.GetSummary()
		cmd := pb.GetLabel()[0].GetValue()
		q := map[float64]float64{}
		for _, x := range s.GetQuantile() {
			// Quantiles are fractions: p99.9 is 0.999.
			q[math.Round(x.GetQuantile()*1e4)/1e2] = x.GetValue()
		}
		switch cmd {
		case "set":
			if s.GetSampleCount() != 10 || s.GetSampleSum() != 50 || q[50] != 4.007 || q[99.9] != 40.191 {
				t.Errorf("set summary %v", s)
			}
		case "get":
			if s.GetSampleCount() != 4 || q[99] != 3.007 {
				t.Errorf("get summary %v", s)
			}
		}
		found++
	}
	if found != 2 {
		t.Errorf("%d latency summaries, want 2", found)
	}
}
