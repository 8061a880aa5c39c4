package engine

import "testing"

// TestInstantaneousMetrics drives the sampler with given times: Redis's
// instantaneous_* fields are the mean of the last 16 per-second rates,
// sampled at least 100 ms apart.
func TestInstantaneousMetrics(t *testing.T) {
	var s InfoState
	s.sample(1000, 500, 0, 0) // first call: a baseline, no sample
	if ops, _, _ := s.Rates(); ops != 0 {
		t.Fatalf("ops after baseline %d", ops)
	}
	s.sample(1050, 900, 0, 0) // too soon: ignored
	for i := int64(1); i <= 16; i++ {
		// 100 commands and 2048 bytes in per 100 ms: 1000 ops/s, 20480 B/s.
		s.sample(1000+i*100, 500+i*100, i*2048, i*1024)
	}
	ops, in, out := s.Rates()
	if ops != 1000 || in != 20480 || out != 10240 {
		t.Fatalf("rates %d %d %d", ops, in, out)
	}
	// Eight idle samples halve the mean.
	for i := int64(17); i <= 24; i++ {
		s.sample(1000+i*100, 2100, 16*2048, 16*1024)
	}
	if ops, _, _ := s.Rates(); ops != 500 {
		t.Fatalf("ops after idle samples %d", ops)
	}
	s.NotePeak(100)
	s.NotePeak(50)
	if s.Peak.Load() != 100 {
		t.Fatalf("peak %d", s.Peak.Load())
	}
	s.Reset()
	if ops, _, _ := s.Rates(); ops != 0 || s.Peak.Load() != 0 {
		t.Fatal("reset kept samples")
	}
	id := s.ReplID()
	if len(id) != 40 || s.ReplID() != id {
		t.Fatalf("replid %q", id)
	}
	s.NewReplID()
	if s.ReplID() == id {
		t.Fatal("replid unchanged")
	}
}
