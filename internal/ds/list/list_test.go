package list

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func bs(vals ...string) [][]byte {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out
}

func strs(vals [][]byte) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

func fromStrings(fill int, vals ...string) *List {
	l := New(fill)
	for _, v := range vals {
		l.PushBack([]byte(v)) // one at a time, like Redis's create_* helpers
	}
	return l
}

func contents(l *List) []string {
	var out []string
	for _, v := range l.All() {
		out = append(out, string(v))
	}
	return out
}

func TestRangeClamping(t *testing.T) {
	l := fromStrings(DefaultFill, "a", "b", "c", "d", "e")
	tests := []struct {
		start, stop int
		want        []string
	}{
		{0, -1, []string{"a", "b", "c", "d", "e"}},
		{0, 0, []string{"a"}},
		{-1, -1, []string{"e"}},
		{-2, -1, []string{"d", "e"}},
		{1, 3, []string{"b", "c", "d"}},
		{-100, 100, []string{"a", "b", "c", "d", "e"}},
		{-100, 1, []string{"a", "b"}},
		{-100, -100, nil},
		{-100, -6, nil},
		{-100, -5, []string{"a"}},
		{3, 1, nil},
		{5, 10, nil},
		{4, 10, []string{"e"}},
		{2, -4, nil},
		{2, -3, []string{"c"}},
		{0, -6, nil},
		{-1, 0, nil},
		{1 << 62, -1 << 62, nil},
		{-1 << 62, 1 << 62, []string{"a", "b", "c", "d", "e"}},
	}
	for _, tc := range tests {
		got := l.Range(tc.start, tc.stop)
		if !slices.Equal(strs(got), tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Range(%d, %d) = %q, want %q", tc.start, tc.stop, strs(got), tc.want)
		}
		var each []string
		l.EachInRange(tc.start, tc.stop, func(v []byte) { each = append(each, string(v)) })
		if !slices.Equal(each, tc.want) || l.RangeLen(tc.start, tc.stop) != len(tc.want) {
			t.Errorf("EachInRange(%d, %d) = %q (RangeLen %d), want %q", tc.start, tc.stop, each, l.RangeLen(tc.start, tc.stop), tc.want)
		}
	}
	if got := New(DefaultFill).Range(0, -1); got != nil {
		t.Errorf("Range on empty list = %q, want nil", strs(got))
	}
}

func TestTrimClamping(t *testing.T) {
	tests := []struct {
		start, stop int
		want        []string
	}{
		{0, -1, []string{"a", "b", "c", "d", "e"}},
		{1, -1, []string{"b", "c", "d", "e"}},
		{0, 0, []string{"a"}},
		{-2, -1, []string{"d", "e"}},
		{-100, 1, []string{"a", "b"}},
		{1, 100, []string{"b", "c", "d", "e"}},
		{3, 1, nil},
		{5, 10, nil},
		{-1, 0, nil},
		{0, -6, nil},
		{-100, -100, nil},
	}
	for _, fill := range []int{DefaultFill, 2} {
		for _, tc := range tests {
			l := fromStrings(fill, "a", "b", "c", "d", "e")
			l.Trim(tc.start, tc.stop)
			if got := contents(l); !slices.Equal(got, tc.want) {
				t.Errorf("fill %d: Trim(%d, %d) left %q, want %q", fill, tc.start, tc.stop, got, tc.want)
			}
			if l.Len() != len(tc.want) {
				t.Errorf("fill %d: Trim(%d, %d): Len %d, want %d", fill, tc.start, tc.stop, l.Len(), len(tc.want))
			}
			checkInvariants(t, l)
		}
	}
}

func TestIndexAndSet(t *testing.T) {
	for _, fill := range []int{DefaultFill, 1, 2} {
		l := fromStrings(fill, "a", "b", "c")
		for _, tc := range []struct {
			i    int
			want string
			ok   bool
		}{
			{0, "a", true}, {2, "c", true}, {-1, "c", true}, {-3, "a", true},
			{3, "", false}, {-4, "", false}, {1 << 62, "", false}, {-1 << 62, "", false},
		} {
			v, ok := l.Index(tc.i)
			if ok != tc.ok || string(v) != tc.want {
				t.Errorf("fill %d: Index(%d) = %q, %v; want %q, %v", fill, tc.i, v, ok, tc.want, tc.ok)
			}
		}
		if !l.Set(-1, []byte("z")) || !l.Set(0, []byte("y")) {
			t.Fatalf("fill %d: Set in range failed", fill)
		}
		if l.Set(3, []byte("x")) || l.Set(-4, []byte("x")) {
			t.Fatalf("fill %d: Set out of range succeeded", fill)
		}
		if got := contents(l); !slices.Equal(got, []string{"y", "b", "z"}) {
			t.Errorf("fill %d: after Set: %q", fill, got)
		}
		checkInvariants(t, l)
	}
}

func TestPushOrder(t *testing.T) {
	l := New(DefaultFill)
	l.PushFront(bs("a", "b", "c", "d")...)
	l.PushBack(bs("0", "1", "2", "3")...)
	want := []string{"d", "c", "b", "a", "0", "1", "2", "3"}
	if got := contents(l); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPop(t *testing.T) {
	// From Redis's "RPOP/LPOP with the optional count argument".
	large := strings.Repeat("x", 9000)
	for _, fill := range []int{DefaultFill, -1, 2} {
		l := New(fill)
		l.PushFront(bs("aa", large, "cc", "dd", "ee", "ff", "gg")...)
		if l.Len() != 7 {
			t.Fatalf("Len = %d", l.Len())
		}
		check := func(got [][]byte, want ...string) {
			t.Helper()
			if !slices.Equal(strs(got), want) {
				t.Errorf("fill %d: got %q, want %q", fill, strs(got), want)
			}
		}
		check(l.PopFront(1), "gg")
		check(l.PopFront(2), "ff", "ee")
		check(l.PopBack(2), "aa", large)
		check(l.PopBack(1), "cc")
		check(l.PopBack(123), "dd")
		if l.Len() != 0 || l.PopFront(1) != nil || l.PopBack(1) != nil {
			t.Errorf("fill %d: list not empty after popping everything", fill)
		}
		l.PushBack([]byte("zero"))
		if l.PopFront(0) != nil || l.PopBack(-1) != nil || l.Len() != 1 {
			t.Errorf("fill %d: pop with count <= 0 changed the list", fill)
		}
		checkInvariants(t, l)
	}
}

func TestInsert(t *testing.T) {
	for _, fill := range []int{DefaultFill, 1, 2, 3} {
		l := fromStrings(fill, "a", "b", "c", "b")
		if !l.Insert([]byte("b"), []byte("x"), false) { // before first b
			t.Fatal("pivot b not found")
		}
		if !l.Insert([]byte("b"), []byte("y"), true) { // after first b
			t.Fatal("pivot b not found")
		}
		if !l.Insert([]byte("a"), []byte("h"), false) || !l.Insert([]byte("b"), []byte("t"), true) {
			t.Fatal("pivot not found")
		}
		if l.Insert([]byte("nope"), []byte("z"), true) {
			t.Fatal("missing pivot reported found")
		}
		want := []string{"h", "a", "x", "b", "t", "y", "c", "b"}
		if got := contents(l); !slices.Equal(got, want) {
			t.Errorf("fill %d: got %q, want %q", fill, got, want)
		}
		if l.Len() != len(want) {
			t.Errorf("fill %d: Len %d", fill, l.Len())
		}
		checkInvariants(t, l)
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		count int
		v     string
		n     int
		want  []string
	}{
		{0, "a", 4, []string{"b", "c", "b"}},
		{2, "a", 2, []string{"b", "c", "a", "b", "a"}},
		{-2, "a", 2, []string{"a", "b", "a", "c", "b"}},
		{-1, "b", 1, []string{"a", "b", "a", "c", "a", "a"}},
		{1, "b", 1, []string{"a", "a", "c", "a", "b", "a"}},
		{100, "a", 4, []string{"b", "c", "b"}},
		{-100, "a", 4, []string{"b", "c", "b"}},
		{0, "zz", 0, []string{"a", "b", "a", "c", "a", "b", "a"}},
		{-1 << 63, "b", 2, []string{"a", "a", "c", "a", "a"}},
	}
	for _, fill := range []int{DefaultFill, 1, 2, 3} {
		for _, tc := range tests {
			l := fromStrings(fill, "a", "b", "a", "c", "a", "b", "a")
			if n := l.Remove(tc.count, []byte(tc.v)); n != tc.n {
				t.Errorf("fill %d: Remove(%d, %q) = %d, want %d", fill, tc.count, tc.v, n, tc.n)
			}
			if got := contents(l); !slices.Equal(got, tc.want) {
				t.Errorf("fill %d: Remove(%d, %q) left %q, want %q", fill, tc.count, tc.v, got, tc.want)
			}
			checkInvariants(t, l)
		}
	}
}

func TestPos(t *testing.T) {
	// The cases of Redis's LPOS tests, for a small and a large element.
	for _, large := range []string{"hello", strings.Repeat("x", 9000)} {
		for _, fill := range []int{DefaultFill, -1, 2} {
			l := New(fill)
			l.PushBack(bs("a", "b", "c", large, "2", "3", "c", "c")...)
			tests := []struct {
				v                   string
				rank, count, maxlen int
				want                []int
			}{
				{"a", 1, 1, 0, []int{0}},
				{"c", 1, 1, 0, []int{2}},
				{"c", 2, 1, 0, []int{6}},
				{"c", 4, 1, 0, nil},
				{"c", -1, 1, 0, []int{7}},
				{"c", -2, 1, 0, []int{6}},
				{"c", 0, 1, 0, []int{2}}, // rank 0 acts as 1
				{"c", 1, 0, 0, []int{2, 6, 7}},
				{"c", 1, 2, 0, []int{2, 6}},
				{"c", 1, 100, 0, []int{2, 6, 7}},
				{"c", 2, 0, 0, []int{6, 7}},
				{"c", -1, 2, 0, []int{7, 6}},
				{"x", -1, 2, 0, nil},
				{"a", 1, 0, 1, []int{0}},
				{"c", 1, 0, 1, nil},
				{"c", 1, 0, 3, []int{2}},
				{"c", -1, 0, 3, []int{7, 6}},
				{"c", 2, 0, 7, []int{6}},
				{"c", -1 << 63, 0, 0, nil},
				{large, 1, 1, 0, []int{3}},
			}
			for _, tc := range tests {
				got := l.Pos([]byte(tc.v), tc.rank, tc.count, tc.maxlen)
				if !slices.Equal(got, tc.want) {
					t.Errorf("fill %d: Pos(%.8q, rank %d, count %d, maxlen %d) = %v, want %v",
						fill, tc.v, tc.rank, tc.count, tc.maxlen, got, tc.want)
				}
			}
		}
	}
	l := fromStrings(DefaultFill, "a")
	if got := l.Pos([]byte("b"), 5, 10, 0); got != nil {
		t.Errorf("Pos with rank beyond matches = %v", got)
	}
}

func TestEncodingGrow(t *testing.T) {
	// Redis's "List listpack -> quicklist encoding conversion", for both
	// a count limit and a size limit.
	for _, tc := range []struct {
		fill  int
		large string
	}{{3, "hello"}, {-1, strings.Repeat("x", 8192)}} {
		l := fromStrings(tc.fill, "a", "b", "c")
		wantEnc(t, l, "listpack")
		l.PushBack([]byte(tc.large))
		wantEnc(t, l, "quicklist")

		l = fromStrings(tc.fill, "a", "b", "c")
		l.Insert([]byte("b"), []byte(tc.large), true)
		wantEnc(t, l, "quicklist")

		l = fromStrings(tc.fill, "a", "b", "c")
		l.Set(0, []byte(tc.large))
		wantEnc(t, l, "quicklist")

		// LMOVE: pop from a quicklist source, push to a listpack.
		src := fromStrings(tc.fill, "a", "b", "c", tc.large)
		wantEnc(t, src, "quicklist")
		dst := fromStrings(tc.fill, "d", "e", "f")
		dst.PushBack(src.PopBack(1)...)
		wantEnc(t, dst, "quicklist")
		checkInvariants(t, src)
		checkInvariants(t, dst)
	}

	// LINSERT and LSET convert before looking at the pivot or index.
	l := fromStrings(3, "a", "b", "c")
	if l.Insert([]byte("missing"), []byte("x"), true) {
		t.Fatal("missing pivot found")
	}
	wantEnc(t, l, "quicklist")
	l = fromStrings(3, "a", "b", "c")
	if l.Set(10, []byte("x")) {
		t.Fatal("Set out of range succeeded")
	}
	wantEnc(t, l, "quicklist")
}

func TestEncodingShrink(t *testing.T) {
	// Redis's "List quicklist -> listpack encoding conversion".
	l := fromStrings(3, "a", "b", "c", "d")
	wantEnc(t, l, "quicklist")
	l.PopBack(3)
	wantEnc(t, l, "listpack")

	l = fromStrings(3, "a", "a", "a", "d")
	l.Remove(3, []byte("a"))
	wantEnc(t, l, "listpack")

	l = fromStrings(3, "a", "b", "c", "d")
	l.Trim(1, 1)
	wantEnc(t, l, "listpack")

	large := strings.Repeat("x", 8192)
	l = fromStrings(-1, "a", "b", "c", large)
	wantEnc(t, l, "quicklist")
	l.PopBack(1)
	wantEnc(t, l, "listpack")

	l = fromStrings(-1, "a", large)
	l.Remove(1, []byte(large))
	wantEnc(t, l, "listpack")

	l = fromStrings(-1, "a", "b", large)
	l.Trim(0, 1)
	wantEnc(t, l, "listpack")

	l = fromStrings(-1, large, "a", "b")
	l.PopBack(2)
	wantEnc(t, l, "quicklist")
	l.Set(-1, []byte("c"))
	wantEnc(t, l, "listpack")

	// Hysteresis: a single node goes back only below half the limit.
	l = New(128)
	for i := range 129 {
		l.PushBack([]byte(fmt.Sprint("v", i)))
	}
	wantEnc(t, l, "quicklist")
	l.PopBack(1) // one node of 128 entries: over half the limit
	wantEnc(t, l, "quicklist")
	l.PopBack(63)
	wantEnc(t, l, "quicklist")
	l.PopBack(1) // 64 entries
	wantEnc(t, l, "listpack")
}

func TestEncodingLimits(t *testing.T) {
	// Redis's "List invalid list-max-listpack-size config".
	l := New(0) // acts as 1
	l.PushBack([]byte("a"))
	wantEnc(t, l, "listpack")
	l.PushBack([]byte("b"))
	wantEnc(t, l, "quicklist")

	l = New(-6) // acts as -5: 64 KiB
	l.PushBack([]byte(strings.Repeat("x", 60000)))
	wantEnc(t, l, "listpack")
	l.PushBack([]byte(strings.Repeat("x", 5536)))
	wantEnc(t, l, "quicklist")

	// A count limit still caps bytes at 8 KiB.
	l = New(1000)
	l.PushBack([]byte(strings.Repeat("x", 8000)))
	wantEnc(t, l, "listpack")
	l.PushBack([]byte(strings.Repeat("x", 500)))
	wantEnc(t, l, "quicklist")

	// The default: 8 KiB of listpack bytes, counting new values raw.
	l = New(DefaultFill)
	for l.Packed() {
		l.PushBack([]byte("0123456789"))
	}
	// 7 header bytes + 12 bytes per entry; the push that converts is the
	// one with 7 + 682*12 + 10 > 8192, the 683rd.
	if l.Len() != 683 {
		t.Errorf("converted at %d entries, want 683", l.Len())
	}
	// Empty lists reset to listpack.
	l.Trim(1, 0)
	wantEnc(t, l, "listpack")
	if l.Len() != 0 {
		t.Errorf("Len after emptying Trim = %d", l.Len())
	}
}

func TestLpEntrySize(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
	}{
		{"0", 2}, {"127", 2}, {"128", 3}, {"-1", 3}, {"-4096", 3}, {"4095", 3},
		{"4096", 4}, {"-32768", 4}, {"32768", 5}, {"8388607", 5}, {"8388608", 6},
		{"2147483647", 6}, {"2147483648", 10}, {"9223372036854775807", 10},
		{"-9223372036854775808", 10},
		{"9223372036854775808", 21}, // too big for int64: a string
		{"007", 5}, {"-0", 4}, {"+1", 4}, {"", 2}, {"1a", 4}, {"-", 3},
		{strings.Repeat("x", 63), 65}, {strings.Repeat("x", 64), 67},
		{strings.Repeat("x", 125), 128}, {strings.Repeat("x", 126), 130},
		{strings.Repeat("x", 4095), 4099}, {strings.Repeat("x", 4096), 4103},
	} {
		if got := lpEntrySize([]byte(tc.v)); got != tc.want {
			t.Errorf("lpEntrySize(%.10q) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func TestViewsStayValid(t *testing.T) {
	l := New(2)
	l.PushBack(bs("a", "b", "c", "d", "e")...)
	v0, _ := l.Index(0)
	r := l.Range(0, -1)
	popped := l.PopBack(2)
	for i := range 50 {
		l.PushFront([]byte(strings.Repeat("z", i)))
		l.Set(-1, []byte(strings.Repeat("q", i)))
		l.PopBack(1)
		l.PushBack([]byte("w"))
	}
	l.Remove(0, []byte("a"))
	l.Trim(0, 0)
	if string(v0) != "a" || !slices.Equal(strs(r), []string{"a", "b", "c", "d", "e"}) ||
		!slices.Equal(strs(popped), []string{"e", "d"}) {
		t.Errorf("views changed: %q %q %q", v0, strs(r), strs(popped))
	}
	// A caller appending to a view must not write into the list.
	l = fromStrings(DefaultFill, "ab", "cd")
	v, _ := l.Index(0)
	_ = append(v, 'X')
	if got := contents(l); !slices.Equal(got, []string{"ab", "cd"}) {
		t.Errorf("append to view changed list: %q", got)
	}
}

func TestPushedBytesAreCopied(t *testing.T) {
	l := New(DefaultFill)
	buf := []byte("abc")
	l.PushBack(buf)
	l.PushFront(buf)
	l.Set(0, buf)
	l.Insert(buf, buf, true)
	buf[0] = 'X'
	if got := contents(l); !slices.Equal(got, []string{"abc", "abc", "abc"}) {
		t.Errorf("list shares caller's bytes: %q", got)
	}
}

func TestIterators(t *testing.T) {
	for _, fill := range []int{DefaultFill, 2} {
		l := fromStrings(fill, "a", "b", "c", "d", "e")
		var fw, bw []string
		var fi, bi []int
		for i, v := range l.All() {
			fi, fw = append(fi, i), append(fw, string(v))
		}
		for i, v := range l.Backward() {
			bi, bw = append(bi, i), append(bw, string(v))
		}
		if !slices.Equal(fw, []string{"a", "b", "c", "d", "e"}) || !slices.Equal(fi, []int{0, 1, 2, 3, 4}) {
			t.Errorf("All: %v %q", fi, fw)
		}
		if !slices.Equal(bw, []string{"e", "d", "c", "b", "a"}) || !slices.Equal(bi, []int{4, 3, 2, 1, 0}) {
			t.Errorf("Backward: %v %q", bi, bw)
		}
		n := 0
		for range l.All() {
			if n++; n == 2 {
				break
			}
		}
		for range l.Backward() {
			if n++; n == 4 {
				break
			}
		}
		if n != 4 {
			t.Errorf("early break: n = %d", n)
		}
	}
}

func TestMemoryUsage(t *testing.T) {
	small := fromStrings(DefaultFill, "a")
	big := New(DefaultFill)
	for i := range 100000 {
		big.PushBack([]byte(fmt.Sprint("element-", i)))
	}
	ms, mb := small.MemoryUsage(), big.MemoryUsage()
	if ms <= 0 || mb < 100000*(8+12) || mb > 100000*64 {
		t.Errorf("MemoryUsage: small %d, big %d", ms, mb)
	}
}

// checkShrunk verifies that an operation that removed elements left no
// quicklist that Redis would have turned back into a listpack.
func checkShrunk(t *testing.T, l *List) {
	t.Helper()
	if l.ql != nil && l.ql.len() == 1 {
		nd := l.ql.at(0)
		b, c := nodeLimit(l.fill)
		if nd.lpBytes() <= b/2 && nd.count() <= c/2 {
			t.Fatalf("single small node left in quicklist form (%d bytes, %d entries)", nd.lpBytes(), nd.count())
		}
	}
}

func wantEnc(t *testing.T, l *List, enc string) {
	t.Helper()
	got := "quicklist"
	if l.Packed() {
		got = "listpack"
	}
	if got != enc {
		t.Errorf("form %s, want %s", got, enc)
	}
	checkInvariants(t, l)
}

// checkInvariants verifies the bookkeeping that the public API cannot see.
func checkInvariants(t *testing.T, l *List) {
	t.Helper()
	total := 0
	for ni := 0; ni < l.nodeCount(); ni++ {
		nd := l.node(ni)
		if l.ql != nil && nd.count() == 0 {
			t.Fatalf("empty node %d in quicklist", ni)
		}
		payload, live := 0, 0
		for _, e := range nd.ents.items() {
			if int(e.off)+int(e.n) > len(nd.buf) {
				t.Fatalf("entry %+v outside buffer of %d", e, len(nd.buf))
			}
			payload += lpEntrySize(nd.view(e))
			live += int(e.n)
		}
		if payload != nd.payload {
			t.Fatalf("node %d: payload %d, recomputed %d", ni, nd.payload, payload)
		}
		if live+nd.garbage != len(nd.buf) {
			t.Fatalf("node %d: live %d + garbage %d != buffer %d", ni, live, nd.garbage, len(nd.buf))
		}
		total += nd.count()
	}
	if total != l.n {
		t.Fatalf("nodes hold %d elements, Len says %d", total, l.n)
	}
	if l.n == 0 && (l.ql != nil || l.lp.buf != nil) {
		t.Fatalf("empty list keeps storage")
	}
	if l.ql == nil && l.n > 0 {
		// A listpack never holds more than the limit allows, give or take
		// the encoding overhead Redis leaves out of its estimate.
		b, c := nodeLimit(l.fill)
		if l.fill >= 0 && l.n > c || l.fill < 0 && l.lp.lpBytes() > b+l.n*10 {
			t.Fatalf("listpack over the limit: %d entries, %d bytes", l.n, l.lp.lpBytes())
		}
	}
}

// Clone copies the elements and the node limit; the copy shares nothing.
func TestClone(t *testing.T) {
	l := New(2)
	l.PushBack([]byte("a"), []byte("b"), []byte("c"))
	c := l.Clone()
	l.PushBack([]byte("d"))
	l.Set(0, []byte("x"))
	var got []string
	for _, e := range c.All() {
		got = append(got, string(e))
	}
	if strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("clone holds %q", got)
	}
	if c.Packed() {
		t.Errorf("clone of a list with 2-entry nodes holds 3 entries in one node")
	}
	checkInvariants(t, c)
}
