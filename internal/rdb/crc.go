package rdb

import "github.com/abacusdb/abacus/internal/crc64"

// checksum is Redis's crc64(0, p, len(p)), the CRC-64/Jones that ends DUMP
// payloads and RDB files.
func checksum(p []byte) uint64 { return crc64.Checksum(p) }

func checksumUpdate(crc uint64, p []byte) uint64 { return crc64.Update(crc, p) }
