package engine

import (
	"testing"
)

type ownAll struct{}

func (ownAll) Route(int) SlotRoute { return SlotRoute{Served: true, Self: true} }
func (ownAll) OK() bool            { return true }

// BenchmarkClusterStep is the routing check alone for GET and a
// three-key MGET, as Execute runs it in cluster mode.
func BenchmarkClusterStep(b *testing.B) {
	e := &Env{cluster: ownAll{}}
	s := &Session{}
	get := Lookup([]byte("get"))
	mget := Lookup([]byte("mget"))
	if get == nil || mget == nil {
		b.Skip("command families not linked")
	}
	for _, bc := range []struct {
		name string
		cmd  *Command
		args [][]byte
	}{
		{"GET", get, [][]byte{[]byte("GET"), []byte("user:1000:profile")}},
		{"MGET3", mget, [][]byte{[]byte("MGET"), []byte("{user:1000}a"), []byte("{user:1000}b"), []byte("{user:1000}c")}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if e.clusterStep(s, bc.cmd, bc.args) != "" {
					b.Fatal("refused")
				}
			}
		})
	}
}
