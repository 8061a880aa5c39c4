//go:build !amd64 || purego || noasm

package crc64

func update(crc uint64, p []byte) uint64 { return updateGeneric(crc, p) }

// mul returns a*b mod P.
func mul(a, b uint64) uint64 { return mulmod(a, b) }
