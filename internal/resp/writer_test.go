package resp

import (
	"math"
	"testing"
)

func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		write      func(w *Writer)
		resp2, rs3 string
	}{
		{"simple", func(w *Writer) { w.Simple("PONG") }, "+PONG\r\n", "+PONG\r\n"},
		{"ok", func(w *Writer) { w.OK() }, "+OK\r\n", "+OK\r\n"},
		{"error", func(w *Writer) { w.Error("ERR bad") }, "-ERR bad\r\n", "-ERR bad\r\n"},
		{"error newlines", func(w *Writer) { w.Error("ERR a\r\nb\nc") }, "-ERR a  b c\r\n", "-ERR a  b c\r\n"},
		{"int", func(w *Writer) { w.Int(-42) }, ":-42\r\n", ":-42\r\n"},
		{"int min", func(w *Writer) { w.Int(math.MinInt64) }, ":-9223372036854775808\r\n", ":-9223372036854775808\r\n"},
		{"bulk", func(w *Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"empty bulk", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"bulk string", func(w *Writer) { w.BulkString("hi") }, "$2\r\nhi\r\n", "$2\r\nhi\r\n"},
		{"bulk int", func(w *Writer) { w.BulkInt(123) }, "$3\r\n123\r\n", "$3\r\n123\r\n"},
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"array", func(w *Writer) { w.Array(2); w.Int(1); w.Int(2) }, "*2\r\n:1\r\n:2\r\n", "*2\r\n:1\r\n:2\r\n"},
		{"map", func(w *Writer) { w.Map(1); w.BulkString("k"); w.Int(1) }, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
		{"set", func(w *Writer) { w.Set(1); w.BulkString("m") }, "*1\r\n$1\r\nm\r\n", "~1\r\n$1\r\nm\r\n"},
		{"push", func(w *Writer) { w.Push(1); w.BulkString("m") }, "*1\r\n$1\r\nm\r\n", ">1\r\n$1\r\nm\r\n"},
		{"double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"bool", func(w *Writer) { w.Bool(true); w.Bool(false) }, ":1\r\n:0\r\n", "#t\r\n#f\r\n"},
		{"big number", func(w *Writer) { w.BigNumber("123456789012345678901234567890") }, "$30\r\n123456789012345678901234567890\r\n", "(123456789012345678901234567890\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("txt", "a\nb") }, "$3\r\na\nb\r\n", "=7\r\ntxt:a\nb\r\n"},
		{"string array", func(w *Writer) { w.StringArray([]string{"a", ""}) }, "*2\r\n$1\r\na\r\n$0\r\n\r\n", "*2\r\n$1\r\na\r\n$0\r\n\r\n"},
		{"raw", func(w *Writer) { w.Raw([]byte("+X\r\n")) }, "+X\r\n", "+X\r\n"},
	} {
		for _, proto := range []int{2, 3} {
			w := &Writer{Proto: proto}
			tc.write(w)
			want := tc.resp2
			if proto == 3 {
				want = tc.rs3
			}
			if string(w.Buf) != want {
				t.Errorf("%s RESP%d: got %q, want %q", tc.name, proto, w.Buf, want)
			}
			if w.Len() != len(want) {
				t.Errorf("%s: Len %d", tc.name, w.Len())
			}
			w.Reset()
			if w.Len() != 0 {
				t.Errorf("%s: Reset left %d bytes", tc.name, w.Len())
			}
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand([]byte("x"), []byte("SET"), []byte(""), []byte("a\r\n")))
	if want := "x*3\r\n$3\r\nSET\r\n$0\r\n\r\n$3\r\na\r\n\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
