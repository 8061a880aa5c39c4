package commands

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"strconv"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/script"
)

// FUNCTION DUMP and FUNCTION RESTORE use Redis 7.0's payload, so that
// libraries move between Abacus and redis-server both ways: for each
// library the RDB opcode FUNCTION2 (245) and its code as an RDB string,
// then the RDB version (10, two bytes little-endian) and the CRC-64/Jones
// of everything before (eight bytes little-endian). Abacus writes strings
// uncompressed; it reads the integer and LZF encodings redis-server may
// write.

const (
	rdbOpcodeFunctionPreGA = 246
	rdbOpcodeFunction2     = 245
	functionsRDBVersion    = 10
)

// crcJones is the table of CRC-64/Jones (reflected polynomial). Go's
// crc64 inverts the CRC before and after; Redis's variant does not, hence
// the complements around Update.
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

func crc64Jones(crc uint64, p []byte) uint64 { return ^crc64.Update(^crc, crcJones, p) }

// FUNCTION DUMP
func cmdFunctionDump(c *engine.Ctx) {
	var b []byte
	for _, l := range c.Env.Scripting().Libraries() {
		b = append(b, rdbOpcodeFunction2)
		b = appendRDBString(b, l.Code)
	}
	b = binary.LittleEndian.AppendUint16(b, functionsRDBVersion)
	b = binary.LittleEndian.AppendUint64(b, crc64Jones(0, b))
	c.W.Bulk(b)
}

// appendRDBString appends s as an uncompressed RDB string.
func appendRDBString(b []byte, s string) []byte {
	n := uint64(len(s))
	switch {
	case n < 1<<6:
		b = append(b, byte(n))
	case n < 1<<14:
		b = append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		b = append(b, 0x80)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	default:
		b = append(b, 0x81)
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return append(b, s...)
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]
func cmdFunctionRestore(c *engine.Ctx) {
	if len(c.Args) > 4 {
		subcommandSyntaxError(c)
		return
	}
	policy := script.RestoreAppend
	if len(c.Args) == 4 {
		switch {
		case c.ArgIs(3, "append"):
		case c.ArgIs(3, "replace"):
			policy = script.RestoreReplace
		case c.ArgIs(3, "flush"):
			policy = script.RestoreFlush
		default:
			c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	data := c.Args[2]
	if !verifyDumpPayload(data) {
		c.Error("ERR DUMP payload version or checksum are wrong")
		return
	}
	codes, msg := readFunctionPayload(data[:len(data)-10])
	if msg != "" {
		c.Error("ERR " + msg)
		return
	}
	if err := c.Env.Scripting().RestoreLibraries(codes, policy); err != nil {
		c.Error(err.Error())
		return
	}
	c.Env.SyncFunctionCounts()
	c.Dirty(1)
	c.W.OK()
}

// verifyDumpPayload checks a payload's footer: an RDB version Abacus
// reads and the checksum.
func verifyDumpPayload(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > functionsRDBVersion {
		return false
	}
	return crc64Jones(0, p[:len(p)-8]) == binary.LittleEndian.Uint64(footer[2:])
}

// readFunctionPayload reads the libraries' codes; msg is Redis's error.
func readFunctionPayload(p []byte) (codes []string, msg string) {
	for len(p) > 0 {
		switch p[0] {
		case rdbOpcodeFunction2:
		case rdbOpcodeFunctionPreGA:
			// The format of Redis 7.0's release candidates: library and
			// engine names first. Abacus reads only the released format.
			_, rest, err := readRDBString(p[1:])
			if err != nil {
				return nil, "Failed loading library name"
			}
			if _, _, err := readRDBString(rest); err != nil {
				return nil, "Failed loading engine name"
			}
			return nil, "Pre-GA function format not supported"
		default:
			return nil, "given type is not a function"
		}
		s, rest, err := readRDBString(p[1:])
		if err != nil {
			return nil, "Failed loading library payload"
		}
		codes = append(codes, s)
		p = rest
	}
	return codes, ""
}

var errRDBString = errors.New("bad RDB string")

// readRDBString reads an RDB string: plain, integer-encoded or LZF.
func readRDBString(p []byte) (string, []byte, error) {
	n, enc, p, err := readRDBLen(p)
	if err != nil {
		return "", nil, err
	}
	if !enc {
		if uint64(len(p)) < n {
			return "", nil, errRDBString
		}
		return string(p[:n]), p[n:], nil
	}
	switch n {
	case 0, 1, 2: // 8, 16, 32-bit integers, little-endian
		size := 1 << n
		if len(p) < size {
			return "", nil, errRDBString
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(p[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		var tmp [24]byte
		return string(strconv.AppendInt(tmp[:0], v, 10)), p[size:], nil
	case 3: // LZF
		clen, _, rest, err := readRDBLen(p)
		if err != nil {
			return "", nil, err
		}
		ulen, _, rest, err := readRDBLen(rest)
		if err != nil || uint64(len(rest)) < clen || ulen > 512<<20 {
			return "", nil, errRDBString
		}
		out, ok := lzfDecompress(rest[:clen], int(ulen))
		if !ok {
			return "", nil, errRDBString
		}
		return string(out), rest[clen:], nil
	}
	return "", nil, errRDBString
}

// readRDBLen reads an RDB length; enc reports the "encoded" form, whose
// value is then the encoding type.
func readRDBLen(p []byte) (n uint64, enc bool, rest []byte, err error) {
	if len(p) == 0 {
		return 0, false, nil, errRDBString
	}
	switch p[0] >> 6 {
	case 0:
		return uint64(p[0] & 0x3f), false, p[1:], nil
	case 1:
		if len(p) < 2 {
			return 0, false, nil, errRDBString
		}
		return uint64(p[0]&0x3f)<<8 | uint64(p[1]), false, p[2:], nil
	case 2:
		switch p[0] {
		case 0x80:
			if len(p) < 5 {
				return 0, false, nil, errRDBString
			}
			return uint64(binary.BigEndian.Uint32(p[1:])), false, p[5:], nil
		case 0x81:
			if len(p) < 9 {
				return 0, false, nil, errRDBString
			}
			return binary.BigEndian.Uint64(p[1:]), false, p[9:], nil
		}
		return 0, false, nil, errRDBString
	}
	return uint64(p[0] & 0x3f), true, p[1:], nil
}

// lzfDecompress is liblzf's decompressor; ok is false for corrupt input
// or a size other than ulen.
func lzfDecompress(in []byte, ulen int) ([]byte, bool) {
	out := make([]byte, 0, ulen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			n := ctrl + 1
			if i+n > len(in) || len(out)+n > ulen {
				return nil, false
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(in) {
				return nil, false
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		back := (ctrl&0x1f)<<8 + int(in[i]) + 1
		i++
		n += 2
		ref := len(out) - back
		if ref < 0 || len(out)+n > ulen {
			return nil, false
		}
		for k := 0; k < n; k++ {
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == ulen
}
