//go:build amd64 && !purego && !noasm

package crc64

func addArchImpls(m map[string]func(uint64, []byte) uint64) {
	if hasCLMUL {
		m["sse"] = updateSSE
	}
	if hasVPCLMUL {
		m["avx512"] = updateAVX512
	}
}
