package httpapi

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The dashboard's top keys are sampled, never counted: each refresh (at
// most one per topRefresh, whatever the number of viewers) continues a
// SCAN of database 0 by one step of topScanCount keys and reads, for
// each key the step returned, MEMORY USAGE (its default sampling of
// large collections) and, under an LFU maxmemory-policy, OBJECT FREQ: the
// key's LFU counter, the logarithmic access count with decay that
// eviction ranks keys by. Under any other policy the server keeps no
// access counts and the panel says so. The ranking merges the steps of
// the current pass over the keyspace; a key not met again in a full pass
// (deleted, or renamed) leaves it when the pass ends. On a large keyspace
// a pass takes many refreshes, so the panel shows the largest keys seen
// so far and how far the pass has got.
const (
	topRefresh   = 5 * time.Second
	topScanCount = 200
	topKeep      = 20
)

type topKey struct {
	Key   string `json:"key"`
	Value int64  `json:"value"`
	pass  int64  // the pass that last saw the key
}

type topKeysReply struct {
	DB             int      `json:"db"`
	Policy         string   `json:"policy"`
	LFU            bool     `json:"lfu"`
	Pass           int64    `json:"pass"`
	ScannedInPass  int64    `json:"scannedInPass"`
	KeysInDB       int64    `json:"keysInDb"`
	LastPassKeys   int64    `json:"lastPassKeys"`
	SampledAtMs    int64    `json:"sampledAtMs"`
	ByMemory       []topKey `json:"byMemory"`
	ByAccess       []topKey `json:"byAccess"`
	AccessUnknown  string   `json:"accessUnknown,omitempty"`
	RefreshSeconds int      `json:"refreshSeconds"`
}

// topKeys is the sampler's state, shared by every viewer.
type topKeys struct {
	mu        sync.Mutex
	every     time.Duration // topRefresh; tests set a negative one
	last      time.Time
	cursor    string
	pass      int64
	scanned   int64 // keys met in this pass
	lastPass  int64 // keys met in the previous full pass
	mem, freq map[string]*topKey
	reply     topKeysReply
}

func (s *Server) apiTopKeys(w http.ResponseWriter, r *http.Request) {
	t := &s.top
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.every == 0 {
		t.every = topRefresh
	}
	if time.Since(t.last) >= t.every || t.mem == nil {
		if err := t.refresh(s, r); err != nil {
			writeError(w, err)
			return
		}
		t.last = time.Now()
	}
	writeJSON(w, http.StatusOK, t.reply)
}

func (t *topKeys) refresh(s *Server, r *http.Request) error {
	if t.mem == nil {
		t.mem, t.freq, t.cursor, t.pass = map[string]*topKey{}, map[string]*topKey{}, "0", 1
	}
	var now int64
	replies, err := s.b.run(r.Context(), &now, []string{"SCAN", t.cursor, "COUNT", strconv.Itoa(topScanCount)}, []string{"INFO", "memory"}, []string{"DBSIZE"})
	if err != nil {
		return err
	}
	if err := replies[0].err(); err != nil {
		return err
	}
	policy := ""
	for _, f := range parseInfo(replies[1].str) {
		if f.key == "maxmemory_policy" {
			policy = f.val
		}
	}
	lfu := strings.HasSuffix(policy, "-lfu")
	var keys []string
	next := "0"
	if sc := replies[0]; len(sc.elems) == 2 {
		next = sc.elems[0].str
		for _, k := range sc.elems[1].elems {
			keys = append(keys, k.str)
		}
	}
	if len(keys) > 2*topScanCount { // SCAN's COUNT is a hint
		keys = keys[:2*topScanCount]
	}
	if len(keys) > 0 {
		cmds := make([][]string, 0, 2*len(keys))
		for _, k := range keys {
			cmds = append(cmds, []string{"MEMORY", "USAGE", k})
			if lfu {
				cmds = append(cmds, []string{"OBJECT", "FREQ", k})
			}
		}
		vals, err := s.b.run(r.Context(), nil, cmds...)
		if err != nil {
			return err
		}
		i := 0
		for _, k := range keys {
			mem := vals[i]
			i++
			if mem.kind != ':' { // gone since the SCAN: nil
				delete(t.mem, k)
				delete(t.freq, k)
				if lfu {
					i++
				}
				continue
			}
			t.mem[k] = &topKey{Key: k, Value: mem.num, pass: t.pass}
			if lfu {
				if f := vals[i]; f.kind == ':' {
					t.freq[k] = &topKey{Key: k, Value: f.num, pass: t.pass}
				}
				i++
			}
		}
		trimTop(t.mem)
		trimTop(t.freq)
	}
	if !lfu {
		t.freq = map[string]*topKey{}
	}
	t.scanned += int64(len(keys))
	t.cursor = next
	if next == "0" {
		// The pass is over: what it did not meet is gone.
		for _, m := range []map[string]*topKey{t.mem, t.freq} {
			for k, e := range m {
				if e.pass != t.pass {
					delete(m, k)
				}
			}
		}
		t.lastPass, t.scanned = t.scanned, 0
		t.pass++
	}
	t.reply = topKeysReply{DB: 0, Policy: policy, LFU: lfu, Pass: t.pass, ScannedInPass: t.scanned, KeysInDB: replies[2].num,
		LastPassKeys: t.lastPass, SampledAtMs: now, ByMemory: sortedTop(t.mem), ByAccess: sortedTop(t.freq),
		RefreshSeconds: int(topRefresh / time.Second)}
	if !lfu {
		t.reply.AccessUnknown = "maxmemory-policy is " + policy + ": the server counts accesses only under an LFU policy (allkeys-lfu, volatile-lfu)"
	}
	return nil
}

// sortedTop is m's entries, largest first (ties by key).
func sortedTop(m map[string]*topKey) []topKey {
	out := make([]topKey, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// trimTop keeps m's topKeep largest entries.
func trimTop(m map[string]*topKey) {
	if len(m) <= topKeep {
		return
	}
	for _, e := range sortedTop(m)[topKeep:] {
		delete(m, e.Key)
	}
}
