package rdb

import "hash/crc64"

// Redis's CRC-64/Jones: reflected polynomial 0x95ac9329ac4bc9b5, init 0,
// no final xor. hash/crc64 inverts its input and output, hence the ^.
// TODO: switch to internal/crc64 when it lands.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// checksum is Redis's crc64(0, p, len(p)).
func checksum(p []byte) uint64 {
	return ^crc64.Update(^uint64(0), jonesTable, p)
}
