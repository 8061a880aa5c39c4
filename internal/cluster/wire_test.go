package cluster

import (
	"bytes"
	"testing"
)

func TestPingRoundTrip(t *testing.T) {
	h := &header{typ: msgPing, port: 7000, cport: 17000, flags: flagMaster | flagMyself,
		currentEpoch: 5, configEpoch: 3, offset: 1234, sender: "0123456789abcdef0123456789abcdef01234567",
		myIP: "10.0.0.1", state: 0}
	h.slots.set(0)
	h.slots.set(16383)
	gs := []gossip{{name: "89abcdef0123456789abcdef0123456789abcdef", pingSent: 1, pongRecv: 2,
		ip: "127.0.0.1", port: 7001, cport: 17001, flags: flagSlave}}
	b := encodePing(h, gs, "host-a")
	if len(b) != hdrLen+gossipLen+16 {
		t.Fatalf("length %d", len(b))
	}
	m, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.sender != h.sender || m.port != 7000 || m.cport != 17000 || m.currentEpoch != 5 || m.configEpoch != 3 ||
		m.offset != 1234 || m.myIP != "10.0.0.1" || !m.slots.has(0) || !m.slots.has(16383) || m.slots.has(1) ||
		m.hostname != "host-a" || len(m.gossip) != 1 || m.gossip[0] != gs[0] || m.slaveOf != "" {
		t.Fatalf("decoded %+v", m)
	}
}

func TestOtherMessagesRoundTrip(t *testing.T) {
	h := &header{sender: "0123456789abcdef0123456789abcdef01234567"}
	h.typ = msgFail
	if m, err := decode(encodeFail(h, "89abcdef0123456789abcdef0123456789abcdef")); err != nil || m.about != "89abcdef0123456789abcdef0123456789abcdef" {
		t.Fatalf("fail: %v %v", m, err)
	}
	h.typ = msgPublish
	if m, err := decode(encodePublish(h, []byte("ch"), []byte("hello"))); err != nil || string(m.channel) != "ch" || string(m.payload) != "hello" {
		t.Fatalf("publish: %v %v", m, err)
	}
	h.typ = msgUpdate
	var s slotBitmap
	s.set(42)
	if m, err := decode(encodeUpdate(h, 9, "89abcdef0123456789abcdef0123456789abcdef", &s)); err != nil || m.updEpoch != 9 || !m.updSlots.has(42) {
		t.Fatalf("update: %v %v", m, err)
	}
}

// Every prefix and every corrupted length of a valid message either
// decodes or errors; none panics.
func TestDecodeBadInput(t *testing.T) {
	h := &header{typ: msgPing, sender: "0123456789abcdef0123456789abcdef01234567"}
	good := encodePing(h, []gossip{{name: "89abcdef0123456789abcdef0123456789abcdef"}}, "h")
	for n := 0; n < len(good); n += 7 {
		if _, err := decode(good[:n]); err == nil && n != len(good) {
			t.Fatalf("a %d-byte prefix decoded", n)
		}
	}
	for _, off := range []int{offCount, offCount + 1, offExtensions, offExtensions + 1, hdrLen + gossipLen, hdrLen + gossipLen + 3} {
		b := bytes.Clone(good)
		b[off] ^= 0xff
		decode(b)
	}
	b := bytes.Clone(good)
	b[offVer+1] = 2
	if _, err := decode(b); err == nil {
		t.Fatal("version 2 decoded")
	}
}

func FuzzDecode(f *testing.F) {
	h := &header{typ: msgPing, sender: "0123456789abcdef0123456789abcdef01234567"}
	f.Add(encodePing(h, nil, "x"))
	h.typ = msgPublish
	f.Add(encodePublish(h, []byte("c"), []byte("m")))
	f.Fuzz(func(t *testing.T, b []byte) { decode(b) })
}

func TestKeySlot(t *testing.T) {
	for key, want := range map[string]int{"foo": 12182, "bar": 5061, "{user1000}.following": 3443,
		"{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "foo{bar}{zap}": 5061, "": 0} {
		if got := keySlot([]byte(key)); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}
