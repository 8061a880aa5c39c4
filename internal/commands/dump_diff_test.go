package commands_test

import (
	"encoding/binary"
	"hash/crc64"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// payloadOf wraps a type byte and value in DUMP's footer.
func payloadOf(body string, ver uint16) string {
	b := binary.LittleEndian.AppendUint16([]byte(body), ver)
	return string(binary.LittleEndian.AppendUint64(b, ^crc64.Update(^uint64(0), jonesTable, b)))
}

func TestRestoreErrorsDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	good := payloadOf("\x00\x03abc", 10)
	d.Do("set", "src", "hello")
	p := d.Do("dump", "src")
	if !strings.Contains(p, "hello") {
		t.Fatalf("DUMP reply %q", p)
	}
	d.Do("dump", "missing")
	for _, args := range [][]string{
		{"restore", "k", "0"},
		{"restore", "k", "0", "x"},
		{"restore", "k", "0", ""},
		{"restore", "k", "0", "0123456789"},
		{"restore", "k", "0", good[:len(good)-1] + "\x00"},
		{"restore", "k", "-1", good},
		{"restore", "k", "abc", good},
		{"restore", "k", "0", good, "idletime", "-1"},
		{"restore", "k", "0", good, "idletime", "x"},
		{"restore", "k", "0", good, "freq", "256"},
		{"restore", "k", "0", good, "freq", "-1"},
		{"restore", "k", "0", good, "freq", "1.5"},
		{"restore", "k", "0", good, "idletime", "5", "freq", "5"},
		{"restore", "k", "0", good, "freq", "5", "idletime", "5"},
		{"restore", "k", "0", good, "idletime"},
		{"restore", "k", "0", good, "bogus"},
		{"restore", "k", "0", good, "replace", "absttl", "replace"},
		{"get", "k"},
		{"restore", "k", "0", good},
		{"restore", "k", "0", good, "idletime", "-1"},
		{"restore", "k", "-1", good},
		{"restore", "k", "0", "junk"},
		{"restore", "k", "0", good, "replace", "idletime", "100"},
		{"object", "idletime", "k"},
		{"restore", "k", "1", good, "replace", "absttl"},
		{"exists", "k"},
		{"restore", "k", "0", good, "freq", "10"},
		{"restore", "k", "0", payloadOf("\x00\x05ab", 10)},
		{"restore", "k", "0", payloadOf("\x00", 10)},
		{"restore", "k", "0", payloadOf("", 10)},
		{"restore", "k", "0", payloadOf("\x63\x00", 10)},
		{"restore", "k", "0", payloadOf("\x0f\x00", 10)},
		{"restore", "k", "0", payloadOf("\x07\x00", 10)},
		{"restore", "k", "0", payloadOf("\x12\x00", 10)},
		{"restore", "k", "0", payloadOf("\x12\x01\x02\x03abc", 10)},
		{"restore", "k", "0", payloadOf("\x02\x02\x01a\x01a", 10)},
		{"restore", "k", "0", payloadOf("\x05\x01\x01a", 10)},
		{"restore", "k", "0", payloadOf("\x00\xc3\x05\x10abc", 10)},
		{"restore", "k", "0", payloadOf("\x00\xc0\x05", 10)},
		{"exists", "k"},
		{"restore", "t", "0", payloadOf("\x00\x03abcXYZ", 10)},
		{"get", "t"},
		{"restore", "e", "0", payloadOf("\x04\x00", 10)},
		{"restore", "e", "0", payloadOf("\x10\x07\x07\x00\x00\x00\x00\x00\xff", 10)},
		{"restore", "e", "0", payloadOf("\x0b\x08\x02\x00\x00\x00\x00\x00\x00\x00", 10)},
		{"exists", "e"},
		{"restore", "k", "0", payloadOf("\x00\xc0\x05", 9)},
		{"restore", "k", "0", payloadOf("\x00\xc0\x05", 0)},
		{"get", "k"},
		{"restore", "k", "0", payloadOf("\x01\x02\x01a\x01b", 10), "replace"},
		{"lrange", "k", "0", "-1"},
		{"restore", "k", "0", payloadOf("\x03\x01\x01a\x031.5", 10), "replace"},
		{"zrange", "k", "0", "-1", "withscores"},
		{"restore", "k", "0", payloadOf("\x03\x02\x01a\xfe\x01b\xff", 10), "replace"},
		{"zrange", "k", "0", "-1", "withscores"},
		{"restore", "k", "0", payloadOf("\x03\x01\x01a\xfd", 10), "replace"},
		{"restore", "k", "0", payloadOf("\x04\x01\x01f\x01v", 10), "replace"},
		{"hgetall", "k"},
	} {
		d.Do(args...)
	}
}

// Payload versions past Redis 7.0's 10: Abacus reads 11 and 12 (Redis 7.2
// and 7.4), refuses 13; duplicate hash fields are refused where Redis 7.0
// keeps a small hash's duplicates unless sanitize-dump-payload is on.
func TestRestoreNewerVersions(t *testing.T) {
	c := servertest.Start(t).Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "a", "0", payloadOf("\x00\x03abc", 11)}, "+OK"},
		{[]string{"restore", "b", "0", payloadOf("\x00\x03abc", 12)}, "+OK"},
		{[]string{"restore", "c", "0", payloadOf("\x00\x03abc", 13)}, "-ERR DUMP payload version or checksum are wrong"},
		{[]string{"restore", "d", "0", payloadOf("\x04\x02\x01f\x01v\x01f\x01w", 10)}, "-ERR Bad data format"},
		{[]string{"mget", "a", "b", "c", "d"}, "*4\r\n$3\r\nabc\r\n$3\r\nabc\r\n$-1\r\n$-1"},
	} {
		if got := c.Do(tc.args...); got != tc.want+"\r\n" {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
}
