package rdb

import (
	"encoding/binary"
	"errors"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// A DUMP payload: type byte, value, RDB version (2 bytes little endian),
// CRC-64 of everything before (8 bytes little endian).

// ErrPayload is a payload whose version or checksum is wrong.
var ErrPayload = errors.New("DUMP payload version or checksum are wrong")

// Dump serializes o's value as a DUMP payload.
func Dump(o *keyspace.Object, opt EncodeOptions) ([]byte, error) {
	return AppendDump(make([]byte, 0, 64), o, opt)
}

// AppendDump appends o's value as a DUMP payload to dst. On an error dst
// is returned as it was.
func AppendDump(dst []byte, o *keyspace.Object, opt EncodeOptions) ([]byte, error) {
	at := len(dst)
	b, typ, err := AppendValue(append(dst, 0), o, opt)
	if err != nil {
		return dst[:at], err
	}
	b[at] = typ
	b = binary.LittleEndian.AppendUint16(b, VersionFor(typ))
	return binary.LittleEndian.AppendUint64(b, checksum(b[at:])), nil
}

// VerifyPayload checks a payload's footer as Redis's verifyDumpPayload
// does: at least 10 bytes, a version Abacus reads, and the checksum. It
// returns the payload's version.
func VerifyPayload(p []byte) (uint16, error) {
	if len(p) < 10 {
		return 0, ErrPayload
	}
	footer := p[len(p)-10:]
	ver := binary.LittleEndian.Uint16(footer)
	if ver > MaxVersion {
		return 0, ErrPayload
	}
	if binary.LittleEndian.Uint64(footer[2:]) != checksum(p[:len(p)-8]) {
		return 0, ErrPayload
	}
	return ver, nil
}

// Restore verifies a payload and decodes its value. Like Redis it reads
// the type and value and does not insist that they fill the payload.
func Restore(p []byte, opt Options) (*keyspace.Object, error) {
	if _, err := VerifyPayload(p); err != nil {
		return nil, err
	}
	return DecodePayload(p, opt)
}

// DecodePayload is Restore for a payload VerifyPayload has accepted.
func DecodePayload(p []byte, opt Options) (*keyspace.Object, error) {
	if len(p) < 10 {
		return nil, ErrPayload
	}
	body := p[:len(p)-10]
	if len(body) == 0 {
		return nil, ErrTruncated
	}
	o, _, err := DecodeValue(body[0], body[1:], opt)
	return o, err
}
