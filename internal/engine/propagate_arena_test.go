package engine

import (
	"bytes"
	"strings"
	"testing"
)

// keep is a sink that keeps a deep copy of what it is fed.
type keep struct{ got [][][]byte }

func (k *keep) Feed(entries []PropEntry, wrap bool) {
	for _, en := range entries {
		var argv [][]byte
		for _, a := range en.Argv {
			argv = append(argv, bytes.Clone(a))
		}
		k.got = append(k.got, argv)
	}
}

// The pending entries' arguments are copies that outlive their source
// until the sink has them, however many entries a command queues and
// however large (a block that runs out is replaced, the bytes already
// queued stay where they are), and the next command reuses the arena.
func TestPropArena(t *testing.T) {
	k := &keep{}
	e := &Env{}
	e.SetPropSink(k)
	var want [][][]byte
	for round := range 3 {
		k.got, want = nil, nil
		for i := range 40 {
			src := [][]byte{[]byte("SET"), []byte("key" + strings.Repeat("k", i*i*round)), bytes.Repeat([]byte{byte('a' + i%26)}, 7*i)}
			want = append(want, [][]byte{bytes.Clone(src[0]), bytes.Clone(src[1]), bytes.Clone(src[2])})
			e.queueProp(0, src)
			for _, a := range src {
				for j := range a {
					a[j] = '!' // the source may change once queued
				}
			}
		}
		e.propFlush()
		if len(k.got) != len(want) {
			t.Fatalf("round %d: %d entries fed, want %d", round, len(k.got), len(want))
		}
		for i := range want {
			for j := range want[i] {
				if !bytes.Equal(k.got[i][j], want[i][j]) {
					t.Fatalf("round %d entry %d arg %d: %q, want %q", round, i, j, k.got[i][j], want[i][j])
				}
			}
		}
		if len(e.prop.pending) != 0 || len(e.prop.arena) != 0 || len(e.prop.argv) != 0 {
			t.Fatalf("round %d: %d entries, %d arena bytes, %d slices left after the flush", round, len(e.prop.pending), len(e.prop.arena), len(e.prop.argv))
		}
	}
	// A large command's arena is not kept.
	e.queueProp(0, [][]byte{[]byte("SET"), []byte("k"), make([]byte, propArenaKeep+1)})
	e.propFlush()
	if cap(e.prop.arena) > propArenaKeep {
		t.Fatalf("arena of %d bytes kept", cap(e.prop.arena))
	}
}

// A propagated SET, once the arena exists, allocates nothing for its copy.
func TestPropArenaNoAlloc(t *testing.T) {
	e := &Env{}
	e.SetPropTap(discardSink{})
	argv := [][]byte{[]byte("SET"), []byte("key:123456"), bytes.Repeat([]byte("v"), 32)}
	e.queueProp(0, argv)
	e.propFlush()
	if n := testing.AllocsPerRun(100, func() {
		e.queueProp(0, argv)
		e.propFlush()
	}); n != 0 {
		t.Fatalf("%v allocations per propagated SET", n)
	}
}

type discardSink struct{}

func (discardSink) Feed([]PropEntry, bool) {}
