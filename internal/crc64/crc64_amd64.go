//go:build amd64 && !purego && !noasm

package crc64

import "golang.org/x/sys/cpu"

//go:noescape
func foldSSE(crc uint64, p *byte, n int, k *foldConsts) uint64

//go:noescape
func foldAVX512(crc uint64, p *byte, n int, k *foldConsts) uint64

// hasCLMUL reports whether the folding assembly can run on this CPU.
var hasCLMUL = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// hasVPCLMUL reports whether the 512-bit folding can run: VPCLMULQDQ on zmm
// registers, VPTERNLOGQ on xmm (VL), and the OS saving zmm state (x/sys/cpu
// checks that before setting the AVX-512 flags).
var hasVPCLMUL = hasCLMUL && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512VPCLMULQDQ

// foldMin is the shortest input handed to the folding code; below it the
// fixed cost of setting up and reducing the lanes beats slicing-by-8.
const foldMin = 32

func update(crc uint64, p []byte) uint64 {
	switch {
	case len(p) < foldMin || !hasCLMUL:
		return updateGeneric(crc, p)
	case hasVPCLMUL && len(p) >= avx512Min:
		return updateAVX512(crc, p)
	default:
		return updateSSE(crc, p)
	}
}

// updateSSE folds the 16-byte blocks of p with PCLMULQDQ.
func updateSSE(crc uint64, p []byte) uint64 {
	if len(p) < foldMin {
		return updateSlicing8(crc, p)
	}
	return updateFolded(crc, p, false)
}

// updateFolded runs foldAVX512 (wide) or foldSSE over the 16-byte blocks of
// p and finishes the tail of up to 15 bytes with the tables.
func updateFolded(crc uint64, p []byte, wide bool) uint64 {
	n := len(p) &^ 15
	if wide {
		crc = foldAVX512(crc, &p[0], n, foldK)
	} else {
		crc = foldSSE(crc, &p[0], n, foldK)
	}
	return updateSlicing8(crc, p[n:])
}

//go:noescape
func mulCLMUL(a, b uint64, k *foldConsts) uint64

// avx512Min is the shortest input handed to foldAVX512.
const avx512Min = 256

// updateAVX512 folds the 16-byte blocks of p with 512-bit registers.
func updateAVX512(crc uint64, p []byte) uint64 {
	if len(p) < avx512Min {
		return updateSSE(crc, p)
	}
	return updateFolded(crc, p, true)
}

// mul returns a*b mod P.
func mul(a, b uint64) uint64 {
	if hasCLMUL {
		return mulCLMUL(a, b, foldK)
	}
	return mulmod(a, b)
}
