package tlsconf

import (
	"slices"
	"testing"
)

func TestParseCiphers(t *testing.T) {
	id := func(name string) uint16 {
		for _, s := range suites12 {
			if s.name == name {
				return s.id
			}
		}
		t.Fatalf("no suite %s", name)
		return 0
	}
	for _, c := range []struct {
		spec string
		want []string // OpenSSL names; nil: fails
		has  []string // when want is empty: names that must be selected
		not  []string // and names that must not
	}{
		{spec: "ECDHE-RSA-AES256-GCM-SHA384", want: []string{"ECDHE-RSA-AES256-GCM-SHA384"}},
		{spec: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256", want: []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256"}},
		{spec: "bogus:ECDHE-ECDSA-CHACHA20-POLY1305", want: []string{"ECDHE-ECDSA-CHACHA20-POLY1305"}},
		{spec: "ECDHE+AESGCM", has: []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384"}, not: []string{"AES128-GCM-SHA256", "ECDHE-RSA-AES128-SHA"}},
		{spec: "HIGH:!aRSA", has: []string{"ECDHE-ECDSA-AES128-GCM-SHA256"}, not: []string{"ECDHE-RSA-AES128-GCM-SHA256", "DES-CBC3-SHA"}},
		{spec: "DEFAULT:!3DES:-kRSA:@STRENGTH", has: []string{"ECDHE-RSA-AES128-SHA"}, not: []string{"AES128-SHA", "ECDHE-RSA-DES-CBC3-SHA"}},
		{spec: "!AESGCM:ECDHE-RSA-AES128-GCM-SHA256"},
		{spec: "bogus"},
	} {
		ids, ok := parseCiphers(c.spec)
		if c.want == nil && c.has == nil {
			if ok {
				t.Errorf("%q: selected %v, want a failure", c.spec, ids)
			}
			continue
		}
		if !ok {
			t.Errorf("%q: failed", c.spec)
			continue
		}
		if c.want != nil {
			var want []uint16
			for _, n := range c.want {
				want = append(want, id(n))
			}
			slices.Sort(want)
			slices.Sort(ids)
			if !slices.Equal(ids, want) {
				t.Errorf("%q: %v, want %v", c.spec, ids, want)
			}
		}
		for _, n := range c.has {
			if !slices.Contains(ids, id(n)) {
				t.Errorf("%q lacks %s", c.spec, n)
			}
		}
		for _, n := range c.not {
			if slices.Contains(ids, id(n)) {
				t.Errorf("%q has %s", c.spec, n)
			}
		}
	}
}

func TestSuites13(t *testing.T) {
	for _, c := range []struct {
		spec      string
		all, none bool
	}{
		{"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256", true, false},
		{"TLS_AES_256_GCM_SHA384", false, false},
		{"TLS_AES_128_CCM_SHA256", false, true},
		{"nonsense", false, true},
	} {
		if all, none := suites13(c.spec); all != c.all || none != c.none {
			t.Errorf("%q: all %v none %v", c.spec, all, none)
		}
	}
}

// Sessions resume while among the last size issued and younger than the
// timeout, as in OpenSSL's server cache.
func TestSessionCache(t *testing.T) {
	now := int64(1000)
	s := newSessionCache(2, 300)
	s.now = func() int64 { return now }
	a, at := s.issue()
	if !s.valid(a, at) {
		t.Fatal("fresh session not valid")
	}
	if s.valid(a, at+1) {
		t.Fatal("a ticket with another issue time is valid")
	}
	b, bt := s.issue()
	c, ct := s.issue() // size 2: a is evicted
	if s.valid(a, at) || !s.valid(b, bt) || !s.valid(c, ct) {
		t.Fatal("eviction by size")
	}
	now += 299
	if !s.valid(c, ct) {
		t.Fatal("expired early")
	}
	now++
	if s.valid(c, ct) {
		t.Fatal("not expired after the timeout")
	}
	d, dt := s.issue() // the expired ones go
	if len(s.live) != 1 || !s.valid(d, dt) {
		t.Fatalf("live after expiry: %v", s.live)
	}
	// Size 0 is unlimited; timeout 0 resumes nothing.
	u := newSessionCache(0, 10)
	for i := 0; i < 100; i++ {
		u.issue()
	}
	if len(u.live) != 100 {
		t.Fatalf("unlimited cache holds %d", len(u.live))
	}
	z := newSessionCache(10, 0)
	if id, at := z.issue(); z.valid(id, at) {
		t.Fatal("timeout 0 resumed")
	}
}
