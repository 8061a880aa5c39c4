package crc64_test

import (
	"fmt"

	"github.com/abacusdb/abacus/internal/crc64"
)

func ExampleChecksum() {
	fmt.Printf("%#x\n", crc64.Checksum([]byte("123456789")))
	// Output: 0xe9c6d914c4b8d9ca
}

// A running CRC, as an RDB writer keeps it while it streams the file.
func ExampleUpdate() {
	crc := crc64.Update(0, []byte("1234"))
	crc = crc64.Update(crc, []byte("56789"))
	fmt.Printf("%#x\n", crc)
	// Output: 0xe9c6d914c4b8d9ca
}

// The CRCs of two pieces computed separately (on different goroutines, say)
// joined without reading the bytes again.
func ExampleCombine() {
	a, b := []byte("1234"), []byte("56789")
	fmt.Printf("%#x\n", crc64.Combine(crc64.Checksum(a), crc64.Checksum(b), int64(len(b))))
	// Output: 0xe9c6d914c4b8d9ca
}
