package command

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

func TestBytesToHuman(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.00K", 1067064: "1.02M",
		672130984: "640.99M", 3 << 30: "3.00G", 5 << 40: "5.00T", 7 << 50: "7.00P"} {
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMallocSize(t *testing.T) {
	for n, want := range map[int]int{1: 8, 8: 8, 9: 16, 20: 32, 49: 64, 104: 112, 129: 160, 204: 224,
		306: 320, 1006: 1024, 5006: 5120, 70010: 81920} {
		if got := mallocSize(n); got != want {
			t.Errorf("mallocSize(%d) = %d, want %d", n, got, want)
		}
	}
}
