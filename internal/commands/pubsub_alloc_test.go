package commands

import (
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// PUBLISH's path to a subscriber allocates nothing: the channel is looked
// up and framed from the command's own arguments, into a reused buffer,
// and handed to the subscriber's Push (which copies it).

// publishEnv is an engine with a RESP2 and a RESP3 subscriber of "ch",
// whose pushes land in out, and a publisher.
func publishEnv(subs ...int) (*engine.Env, *engine.Session, *[]byte) {
	e, pub := skBenchEnv()
	out := new([]byte)
	for i, proto := range subs {
		sub := &engine.Session{ID: int64(100 + i), Proto: proto, Authed: true}
		sub.Push = func(b []byte) { *out = append(*out, b...) }
		e.Subscribe(sub, engine.SubChannel, "ch")
	}
	return e, pub, out
}

func TestPublishAllocatesNothing(t *testing.T) {
	for _, subs := range [][]int{{2}, {3}, {2, 3}} {
		e, pub, out := publishEnv(subs...)
		argv := [][]byte{[]byte("publish"), []byte("ch"), []byte("metric:cpu=97.5%")}
		var w resp.Writer
		e.Execute(pub, argv, &w)
		want := map[int]string{
			2: "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$16\r\nmetric:cpu=97.5%\r\n",
			3: ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$16\r\nmetric:cpu=97.5%\r\n",
		}
		var frames string
		for _, p := range subs {
			frames += want[p]
		}
		if string(*out) != frames {
			t.Fatalf("subscribers %v got %q, want %q", subs, *out, frames)
		}
		if got := string(w.Buf); got != ":"+string(rune('0'+len(subs)))+"\r\n" {
			t.Fatalf("subscribers %v: PUBLISH replied %q", subs, got)
		}
		n := testing.AllocsPerRun(200, func() {
			w.Reset()
			*out = (*out)[:0]
			e.Execute(pub, argv, &w)
		})
		if n != 0 {
			t.Errorf("PUBLISH to subscribers %v: %v allocations per call", subs, n)
		}
	}
}

// BenchmarkPublishOneSubscriber: PUBLISH through Execute to one RESP2
// subscriber whose Push copies the frame.
func BenchmarkPublishOneSubscriber(b *testing.B) {
	e, pub, out := publishEnv(2)
	argv := [][]byte{[]byte("publish"), []byte("bench:ch"), []byte("metric:cpu=97.5%")}
	var w resp.Writer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset()
		*out = (*out)[:0]
		e.Execute(pub, argv, &w)
	}
}
