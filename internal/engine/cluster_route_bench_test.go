package engine_test

import (
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// The cost of cluster routing per command: Execute of GET, SET, SET and
// DEL of a new key in turn (the slot index's upkeep) and a three-key MGET
// (one hash tag) over 1000 keys, with cluster mode off and
// on (this node owning every slot, so every command is served: what is
// measured is the check, not a redirection).

// allSlots is a ClusterView of a node that owns every slot.
type allSlots struct{}

func (allSlots) Route(int) engine.SlotRoute { return engine.SlotRoute{Served: true, Self: true} }
func (allSlots) OK() bool                   { return true }

func benchRoute(b *testing.B, cluster bool, cmd func(i int) [][]byte) {
	env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if cluster {
		env.SetCluster(allSlots{})
	}
	s := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
	w := resp.Writer{Proto: 2}
	for i := range 1000 {
		env.Execute(s, [][]byte{[]byte("SET"), []byte("{k" + strconv.Itoa(i) + "}"), []byte("v")}, &w)
	}
	cmds := make([][][]byte, 1000)
	for i := range cmds {
		cmds[i] = cmd(i)
	}
	w.Reset()
	b.ReportAllocs()
	defer reportCPU(b)() // acl_bench_test.go
	for i := 0; i < b.N; i++ {
		env.Execute(s, cmds[i%1000], &w)
		w.Reset()
	}
}

func routeBenchCmds() map[string]func(i int) [][]byte {
	return map[string]func(i int) [][]byte{
		"GET": func(i int) [][]byte { return [][]byte{[]byte("GET"), []byte("{k" + strconv.Itoa(i) + "}")} },
		"SET": func(i int) [][]byte {
			return [][]byte{[]byte("SET"), []byte("{k" + strconv.Itoa(i) + "}"), []byte("v")}
		},
		// A key created and deleted in turn: the slot index's upkeep.
		"SETDEL": func(i int) [][]byte {
			if i%2 == 0 {
				return [][]byte{[]byte("SET"), []byte("{n" + strconv.Itoa(i/2) + "}"), []byte("v")}
			}
			return [][]byte{[]byte("DEL"), []byte("{n" + strconv.Itoa(i/2) + "}")}
		},
		"MGET3": func(i int) [][]byte {
			k := "{k" + strconv.Itoa(i) + "}"
			return [][]byte{[]byte("MGET"), []byte(k), []byte(k + "a"), []byte(k + "b")}
		},
	}
}

func BenchmarkClusterRoute(b *testing.B) {
	for _, name := range []string{"GET", "SET", "SETDEL", "MGET3"} {
		cmd := routeBenchCmds()[name]
		b.Run(name+"/off", func(b *testing.B) { benchRoute(b, false, cmd) })
		b.Run(name+"/on", func(b *testing.B) { benchRoute(b, true, cmd) })
	}
}
