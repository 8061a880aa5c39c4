package glob_test

import (
	"bufio"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/servertest"
)

// parseBulkArray decodes a RESP array of bulk strings.
func parseBulkArray(t *testing.T, raw string) []string {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	line, _ := r.ReadString('\n')
	if !strings.HasPrefix(line, "*") {
		t.Fatalf("not an array: %q", raw)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		h, _ := r.ReadString('\n')
		l, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		b := make([]byte, l+2)
		if _, err := ioReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b[:l]))
	}
	return out
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestAgainstRedisKeys matches random patterns against a random keyspace
// in redis-server with KEYS and requires the same answer from Match.
func TestAgainstRedisKeys(t *testing.T) {
	srv := servertest.Redis(t)
	c := servertest.Dial(t, srv.Addr)
	r := rand.New(rand.NewPCG(7, 11))
	keyBytes := []byte("abAB-]^\\*?[\x00\x7f\x80\xfe")
	patBytes := []byte("abA*?[]^-\\\x00\x7f\x80\xfe")
	keys := map[string]bool{"": true}
	c.Do("SET", "", "x")
	for len(keys) < 300 {
		b := make([]byte, 1+r.IntN(6))
		for i := range b {
			b[i] = keyBytes[r.IntN(len(keyBytes))]
		}
		k := string(b)
		if !keys[k] {
			keys[k] = true
			if got := c.Do("SET", k, "x"); got != "+OK\r\n" {
				t.Fatalf("SET: %q", got)
			}
		}
	}
	all := make([]string, 0, len(keys))
	for k := range keys {
		all = append(all, k)
	}
	for i := 0; i < 1500; i++ {
		b := make([]byte, 1+r.IntN(7))
		for j := range b {
			b[j] = patBytes[r.IntN(len(patBytes))]
		}
		p := string(b)
		if p == "*" {
			continue // KEYS short-cuts "*" without matching
		}
		want := parseBulkArray(t, c.Do("KEYS", p))
		var got []string
		for _, k := range all {
			if glob.Match(p, k, false) {
				got = append(got, k)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q: Match gives %q, redis-server %q", p, got, want)
		}
	}
}
