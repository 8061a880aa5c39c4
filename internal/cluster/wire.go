package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The cluster bus message (Redis 7.0's clusterMsg, cluster.h): a fixed
// header of hdrLen bytes, then a body whose shape the type decides. All
// integers are big-endian. The layout is Redis's struct with its C
// padding, byte for byte, since redis-server nodes read it as a struct.

// NumSlots is the number of hash slots.
const NumSlots = 16384

const (
	nameLen   = 40 // a node id: 40 hex digits
	ipLen     = 46 // NET_IP_STR_LEN
	hdrLen    = 2256
	gossipLen = 104
	extHdrLen = 8
	protoVer  = 1
	// maxMsgLen bounds what a peer may announce as a message's length
	// (PUBLISH carries client payloads, bounded by proto-max-bulk-len).
	maxMsgLen = 1 << 30
)

// Message types.
const (
	msgPing = iota
	msgPong
	msgMeet
	msgFail
	msgPublish
	msgAuthRequest
	msgAuthAck
	msgUpdate
	msgMFStart
	msgModule
	msgPublishShard
	msgTypeCount
)

var msgTypeNames = [msgTypeCount]string{"ping", "pong", "meet", "fail", "publish",
	"auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

// Node flags as the bus carries them.
const (
	flagMaster     = 1
	flagSlave      = 2
	flagPFail      = 4
	flagFail       = 8
	flagMyself     = 16
	flagHandshake  = 32
	flagNoAddr     = 64
	flagMeet       = 128
	flagMigrateTo  = 256
	flagNoFailover = 512
)

// mflags[0] bits.
const (
	mflagPaused   = 1
	mflagForceAck = 2
	mflagExtData  = 4
)

const extHostname = 0 // the only ping extension Redis 7.0 sends

// Header field offsets.
const (
	offTotLen       = 4
	offVer          = 8
	offPort         = 10
	offType         = 12
	offCount        = 14
	offCurrentEpoch = 16
	offConfigEpoch  = 24
	offOffset       = 32
	offSender       = 40
	offSlots        = 80
	offSlaveOf      = 2128
	offMyIP         = 2168
	offExtensions   = 2214
	offPPort        = 2246
	offCPort        = 2248
	offFlags        = 2250
	offState        = 2252
	offMFlags       = 2253
)

// slotBitmap is a set of slots, bit j of byte j/8 (Redis's bitmap order).
type slotBitmap [NumSlots / 8]byte

func (b *slotBitmap) has(j int) bool { return b[j>>3]&(1<<(j&7)) != 0 }
func (b *slotBitmap) set(j int)      { b[j>>3] |= 1 << (j & 7) }
func (b *slotBitmap) clear(j int)    { b[j>>3] &^= 1 << (j & 7) }

// header is the fixed part of every message.
type header struct {
	typ          uint16
	count        uint16
	port         uint16
	pport        uint16
	cport        uint16
	flags        uint16
	currentEpoch uint64
	configEpoch  uint64
	offset       uint64
	sender       string
	slots        slotBitmap
	slaveOf      string // "" for none
	myIP         string
	state        byte
	mflags       byte
}

type gossip struct {
	name               string
	pingSent, pongRecv uint32 // seconds
	ip                 string
	port, cport, pport uint16
	flags              uint16
}

// message is a decoded bus message.
type message struct {
	header
	gossip   []gossip
	hostname string // the hostname extension ("" when not sent)
	about    string // FAIL: the failing node
	channel  []byte // PUBLISH, PUBLISHSHARD
	payload  []byte
	// UPDATE: a node's slots at a config epoch.
	updEpoch uint64
	updName  string
	updSlots slotBitmap
}

var errBadMsg = errors.New("bad message")

// cstr reads a NUL-padded fixed field.
func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

var be = binary.BigEndian

// decode parses one whole message (its length already checked to be the
// header's totlen). It returns an error for a message whose length does
// not match its type, as Redis's clusterProcessPacket checks.
func decode(b []byte) (*message, error) {
	if len(b) < 16 || string(b[:4]) != "RCmb" {
		return nil, errBadMsg
	}
	if v := be.Uint16(b[offVer:]); v != protoVer {
		return nil, fmt.Errorf("unsupported bus protocol version %d", v)
	}
	if len(b) < hdrLen {
		return nil, fmt.Errorf("message of %d bytes is shorter than a header", len(b))
	}
	m := &message{}
	h := &m.header
	h.typ = be.Uint16(b[offType:])
	h.count = be.Uint16(b[offCount:])
	h.port = be.Uint16(b[offPort:])
	h.pport = be.Uint16(b[offPPort:])
	h.cport = be.Uint16(b[offCPort:])
	h.flags = be.Uint16(b[offFlags:])
	h.currentEpoch = be.Uint64(b[offCurrentEpoch:])
	h.configEpoch = be.Uint64(b[offConfigEpoch:])
	h.offset = be.Uint64(b[offOffset:])
	h.sender = string(b[offSender : offSender+nameLen])
	copy(h.slots[:], b[offSlots:offSlots+NumSlots/8])
	if so := b[offSlaveOf : offSlaveOf+nameLen]; !allZero(so) {
		h.slaveOf = string(so)
	}
	h.myIP = cstr(b[offMyIP : offMyIP+ipLen])
	h.state = b[offState]
	h.mflags = b[offMFlags]
	body := b[hdrLen:]
	bad := func() (*message, error) {
		return nil, fmt.Errorf("%s message of %d bytes has the wrong length", typeName(h.typ), len(b))
	}
	switch h.typ {
	case msgPing, msgPong, msgMeet:
		n := int(h.count) * gossipLen
		if len(body) < n {
			return bad()
		}
		m.gossip = make([]gossip, h.count)
		for i := range m.gossip {
			g := body[i*gossipLen:]
			m.gossip[i] = gossip{
				name:     string(g[:nameLen]),
				pingSent: be.Uint32(g[40:]), pongRecv: be.Uint32(g[44:]),
				ip:   cstr(g[48 : 48+ipLen]),
				port: be.Uint16(g[94:]), cport: be.Uint16(g[96:]),
				flags: be.Uint16(g[98:]), pport: be.Uint16(g[100:]),
			}
		}
		ext := body[n:]
		if h.mflags&mflagExtData != 0 {
			for i := 0; i < int(be.Uint16(b[offExtensions:])); i++ {
				if len(ext) < extHdrLen {
					return bad()
				}
				l := int(be.Uint32(ext))
				if l%8 != 0 || l < extHdrLen || l > len(ext) {
					return bad()
				}
				if be.Uint16(ext[4:]) == extHostname {
					m.hostname = cstr(ext[extHdrLen:l])
				}
				ext = ext[l:]
			}
		}
		if len(ext) != 0 {
			return bad()
		}
	case msgFail:
		if len(body) != nameLen {
			return bad()
		}
		m.about = string(body)
	case msgPublish, msgPublishShard:
		if len(body) < 8 {
			return bad()
		}
		cl, ml := uint64(be.Uint32(body)), uint64(be.Uint32(body[4:]))
		if uint64(len(body)) != 8+cl+ml {
			return bad()
		}
		m.channel = body[8 : 8+cl]
		m.payload = body[8+cl:]
	case msgAuthRequest, msgAuthAck, msgMFStart:
		if len(body) != 0 {
			return bad()
		}
	case msgUpdate:
		if len(body) != 8+nameLen+NumSlots/8 {
			return bad()
		}
		m.updEpoch = be.Uint64(body)
		m.updName = string(body[8 : 8+nameLen])
		copy(m.updSlots[:], body[8+nameLen:])
	case msgModule:
		if len(body) < 13 || uint64(len(body)) != 13+uint64(be.Uint32(body[8:])) {
			return bad()
		}
	default:
		// Unknown types are ignored (as Redis does), but kept framed.
	}
	return m, nil
}

func typeName(t uint16) string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return fmt.Sprintf("type %d", t)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// encodeHeader writes h into a buffer of totlen bytes (the body is left
// for the caller) and returns it.
func encodeHeader(h *header, totlen int) []byte {
	b := make([]byte, totlen)
	copy(b, "RCmb")
	be.PutUint32(b[offTotLen:], uint32(totlen))
	be.PutUint16(b[offVer:], protoVer)
	be.PutUint16(b[offPort:], h.port)
	be.PutUint16(b[offType:], h.typ)
	be.PutUint16(b[offCount:], h.count)
	be.PutUint64(b[offCurrentEpoch:], h.currentEpoch)
	be.PutUint64(b[offConfigEpoch:], h.configEpoch)
	be.PutUint64(b[offOffset:], h.offset)
	copy(b[offSender:offSender+nameLen], h.sender)
	copy(b[offSlots:], h.slots[:])
	copy(b[offSlaveOf:offSlaveOf+nameLen], h.slaveOf)
	copy(b[offMyIP:offMyIP+ipLen-1], h.myIP)
	be.PutUint16(b[offPPort:], h.pport)
	be.PutUint16(b[offCPort:], h.cport)
	be.PutUint16(b[offFlags:], h.flags)
	b[offState] = h.state
	b[offMFlags] = h.mflags
	return b
}

// encodePing writes a PING, PONG or MEET with its gossip entries and the
// hostname extension when there is a hostname.
func encodePing(h *header, gs []gossip, hostname string) []byte {
	n := hdrLen + len(gs)*gossipLen
	extLen := 0
	if hostname != "" {
		extLen = extHdrLen + (len(hostname)+1+7)/8*8
		h.mflags |= mflagExtData
	}
	h.count = uint16(len(gs))
	b := encodeHeader(h, n+extLen)
	for i, g := range gs {
		e := b[hdrLen+i*gossipLen:]
		copy(e[:nameLen], g.name)
		be.PutUint32(e[40:], g.pingSent)
		be.PutUint32(e[44:], g.pongRecv)
		copy(e[48:48+ipLen-1], g.ip)
		be.PutUint16(e[94:], g.port)
		be.PutUint16(e[96:], g.cport)
		be.PutUint16(e[98:], g.flags)
		be.PutUint16(e[100:], g.pport)
	}
	if extLen > 0 {
		be.PutUint16(b[offExtensions:], 1)
		e := b[n:]
		be.PutUint32(e, uint32(extLen))
		be.PutUint16(e[4:], extHostname)
		copy(e[extHdrLen:], hostname)
	}
	return b
}

func encodeFail(h *header, about string) []byte {
	b := encodeHeader(h, hdrLen+nameLen)
	copy(b[hdrLen:], about)
	return b
}

func encodePublish(h *header, channel, payload []byte) []byte {
	b := encodeHeader(h, hdrLen+8+len(channel)+len(payload))
	be.PutUint32(b[hdrLen:], uint32(len(channel)))
	be.PutUint32(b[hdrLen+4:], uint32(len(payload)))
	copy(b[hdrLen+8:], channel)
	copy(b[hdrLen+8+len(channel):], payload)
	return b
}

func encodeUpdate(h *header, epoch uint64, name string, slots *slotBitmap) []byte {
	b := encodeHeader(h, hdrLen+8+nameLen+NumSlots/8)
	be.PutUint64(b[hdrLen:], epoch)
	copy(b[hdrLen+8:], name)
	copy(b[hdrLen+8+nameLen:], slots[:])
	return b
}
