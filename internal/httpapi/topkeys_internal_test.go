package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

func topKeysOf(t *testing.T, s *Server) topKeysReply {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/topkeys", nil))
	if rec.Code != 200 {
		t.Fatalf("/api/topkeys: %d %s", rec.Code, rec.Body)
	}
	var r topKeysReply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAPITopKeys checks the sampled ranking by memory, by LFU counter
// under an LFU policy, the refusal to rank by access otherwise, and that
// keys leave the ranking when a pass no longer meets them.
func TestAPITopKeys(t *testing.T) {
	inst := servertest.Start(t)
	s := New(inst.Srv.Env, inst.Srv, Limits{})
	s.SetReady(true)
	s.top.every = -1 // every request samples
	c := inst.Raw(t)
	c.Do("SET", "small", "x")
	c.Do("SET", "big", strings.Repeat("x", 10_000))
	c.Do("SET", "medium", strings.Repeat("x", 1_000))
	for i := 0; i < 300; i++ { // more than one SCAN step
		c.Do("SET", "k:"+strings.Repeat("0", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	var r topKeysReply
	for pass := int64(0); ; {
		r = topKeysOf(t, s)
		if pass == 0 {
			pass = r.Pass
		} else if r.Pass > pass {
			break // a whole pass has been seen
		}
	}
	if len(r.ByMemory) != topKeep || r.ByMemory[0].Key != "big" || r.ByMemory[1].Key != "medium" || r.ByMemory[0].Value < 10_000 {
		t.Fatalf("by memory: %+v", r.ByMemory[:3])
	}
	if r.LFU || len(r.ByAccess) != 0 || !strings.Contains(r.AccessUnknown, "noeviction") || r.KeysInDB != 303 || r.LastPassKeys < 303 { // SCAN may return a key twice
		t.Fatalf("under noeviction: %+v", r)
	}

	c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	for i := 0; i < 200; i++ {
		c.Do("GET", "small")
	}
	c.Do("DEL", "big")
	for pass := int64(0); ; {
		r = topKeysOf(t, s)
		if pass == 0 {
			pass = r.Pass
		} else if r.Pass > pass {
			break
		}
	}
	if !r.LFU || len(r.ByAccess) == 0 || r.ByAccess[0].Key != "small" {
		t.Fatalf("by access under allkeys-lfu: %+v", r.ByAccess)
	}
	if r.ByMemory[0].Key != "medium" {
		t.Fatalf("a deleted key is still ranked: %+v", r.ByMemory[:2])
	}
}
