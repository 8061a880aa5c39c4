package list

import (
	"fmt"
	"testing"

	"github.com/abacusdb/abacus/internal/resp"
)

var benchVal = []byte("value:0001")

func filled(n int) *List {
	l := New(DefaultFill)
	for i := range n {
		l.PushBack(fmt.Appendf(nil, "value:%04d", i%10000))
	}
	return l
}

func BenchmarkPushBack(b *testing.B) {
	l := New(DefaultFill)
	b.ReportAllocs()
	for b.Loop() {
		l.PushBack(benchVal)
	}
	b.ReportMetric(float64(l.MemoryUsage())/float64(l.Len()), "heapB/elem")
}

func BenchmarkPushFront(b *testing.B) {
	l := New(DefaultFill)
	b.ReportAllocs()
	for b.Loop() {
		l.PushFront(benchVal)
	}
	b.ReportMetric(float64(l.MemoryUsage())/float64(l.Len()), "heapB/elem")
}

// BenchmarkPushBackPopFront is a queue in steady state (RPUSH + LPOP).
func BenchmarkPushBackPopFront(b *testing.B) {
	l := filled(10000)
	b.ReportAllocs()
	for b.Loop() {
		l.PushBack(benchVal)
		l.PopFront(1)
	}
}

// BenchmarkPushFrontPopFront is a stack (LPUSH + LPOP) on a list built by
// LPUSH.
func BenchmarkPushFrontPopFront(b *testing.B) {
	l := New(DefaultFill)
	for i := range 10000 {
		l.PushFront(fmt.Appendf(nil, "value:%04d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		l.PushFront(benchVal)
		l.PopFront(1)
	}
}

func BenchmarkPopBack(b *testing.B) {
	l := filled(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if l.Len() == 0 {
			b.StopTimer()
			l = filled(1 << 20)
			b.StartTimer()
		}
		l.PopBack(1)
	}
}

// BenchmarkRange100Head is LRANGE key 0 99 on a list of a million.
func BenchmarkRange100Head(b *testing.B) {
	l := filled(1 << 20)
	var buf [][]byte
	b.ReportAllocs()
	for b.Loop() {
		buf = l.AppendRange(buf[:0], 0, 99)
	}
	if len(buf) != 100 {
		b.Fatal(len(buf))
	}
}

// BenchmarkIndexMiddle is LINDEX at the worst position: O(nodes).
func BenchmarkIndexMiddle(b *testing.B) {
	l := filled(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		l.Index(1 << 19)
	}
}

// BenchmarkSmallListMemory reports the heap cost of a 5-element list.
func BenchmarkSmallListMemory(b *testing.B) {
	var l *List
	b.ReportAllocs()
	for b.Loop() {
		l = New(DefaultFill)
		l.PushBack([]byte("a"), []byte("bb"), []byte("ccc"), []byte("1234"), []byte("e"))
	}
	b.ReportMetric(float64(l.MemoryUsage()), "heapB/list")
}

// BenchmarkPushBackMillion is one RPUSH of 1,000,000 small integers, the
// largest command bench/hostile trickles in.
func BenchmarkPushBackMillion(b *testing.B) {
	vals := make([][]byte, 1000000)
	for i := range vals {
		vals[i] = fmt.Appendf(nil, "%d", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		New(DefaultFill).PushBack(vals...)
	}
}

// BenchmarkLRANGEReply is what a 1 MB LRANGE reply (10,000 elements of
// 100 bytes) costs the command: encoded into a reused buffer, into a
// fresh one (a client whose queue keeps every reply), or taken as a
// snapshot and sized for a resp.Segment, encoded later by the writer.
func BenchmarkLRANGEReply(b *testing.B) {
	l := New(DefaultFill)
	for i := range 10000 {
		l.PushBack(fmt.Appendf(nil, "%-100d", i))
	}
	b.Run("encode-reused", func(b *testing.B) {
		var w resp.Writer
		for b.Loop() {
			w.Reset()
			w.Array(l.RangeLen(0, -1))
			l.EachInRange(0, -1, w.Bulk)
		}
	})
	b.Run("encode-fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := resp.Writer{Buf: make([]byte, 0, 1<<20)}
			w.Array(l.RangeLen(0, -1))
			l.EachInRange(0, -1, w.Bulk)
		}
	})
	b.Run("deferred", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp.NewArraySegment(l.SnapshotRange(0, -1))
		}
	})
}
