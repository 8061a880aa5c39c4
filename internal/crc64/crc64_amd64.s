//go:build amd64 && !purego && !noasm

#include "textflag.h"

// Offsets into foldConsts (foldconsts.go).
#define K128 0
#define K1024 16
#define LANES 32
#define FINAL 144
#define BARRETT 160
#define K4096 176
#define K2048 192
#define K512 208

// REDUCE128 turns the 128-bit block in x (low half H, high half L, standing
// for H*x^64 + L) into (H*x^64 + L)*x^64 mod P, left in AX. Clobbers X8-X10,
// X15 and BX. First Q = H*(x^127 mod P)*x + L*x^64 (128 bits), then Barrett:
// q = floor(Q.lo*x^64 / P) from mu, and the low 64 terms of q*P.
#define REDUCE128(x, k) \
	MOVOU FINAL(k), X15 \
	MOVO x, X8 \
	PCLMULQDQ $0x00, X15, x \
	PSRLDQ $8, X8 \
	PXOR X8, x \
	MOVOU BARRETT(k), X15 \
	MOVO x, X9 \
	PCLMULQDQ $0x00, X15, X9 \
	MOVO X9, X10 \
	PCLMULQDQ $0x10, X15, X10 \
	PXOR x, X10 \
	PEXTRQ $1, X10, AX \
	MOVQ X9, BX \
	XORQ BX, AX

// FOLD_SSE replaces the block in x by its fold with the constant pair in k
// (x.lo*k.lo ^ x.hi*k.hi), using t as scratch.
#define FOLD_SSE(x, k, t) \
	MOVO x, t \
	PCLMULQDQ $0x00, k, x \
	PCLMULQDQ $0x11, k, t \
	PXOR t, x

// FOLD_V is the AVX form for xmm or zmm registers: it leaves the two
// products in t (low halves) and x (high halves) for a VPTERNLOGQ $0x96 to
// xor together with a third value.
#define FOLD_V(x, k, t) \
	VPCLMULQDQ $0x00, k, x, t \
	VPCLMULQDQ $0x11, k, x, x

// func foldSSE(crc uint64, p *byte, n int, k *foldConsts) uint64
//
// n is a multiple of 16 and at least 16. Inputs under 128 bytes take one
// lane. Otherwise eight 128-bit lanes fold 128 bytes per round; the lanes
// are then folded onto the last one, the remaining 16-byte blocks folded in
// one at a time, and the 128-bit remainder reduced to 64 bits (x^64 times
// it, mod P, by Barrett).
TEXT ·foldSSE(SB), NOSPLIT, $0-40
	MOVQ crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX
	CMPQ CX, $128
	JB one
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVOU 64(SI), X4
	MOVOU 80(SI), X5
	MOVOU 96(SI), X6
	MOVOU 112(SI), X7
	MOVQ AX, X8
	PXOR X8, X0
	ADDQ $128, SI
	SUBQ $128, CX
	MOVOU K1024(DX), X15

loop8:
	CMPQ CX, $128
	JB lanes
	FOLD_SSE(X0, X15, X8)
	FOLD_SSE(X1, X15, X9)
	FOLD_SSE(X2, X15, X10)
	FOLD_SSE(X3, X15, X11)
	FOLD_SSE(X4, X15, X12)
	FOLD_SSE(X5, X15, X13)
	FOLD_SSE(X6, X15, X14)
	FOLD_SSE(X7, X15, X8)
	MOVOU 0(SI), X9
	MOVOU 16(SI), X10
	MOVOU 32(SI), X11
	MOVOU 48(SI), X12
	PXOR X9, X0
	PXOR X10, X1
	PXOR X11, X2
	PXOR X12, X3
	MOVOU 64(SI), X9
	MOVOU 80(SI), X10
	MOVOU 96(SI), X11
	MOVOU 112(SI), X12
	PXOR X9, X4
	PXOR X10, X5
	PXOR X11, X6
	PXOR X12, X7
	ADDQ $128, SI
	SUBQ $128, CX
	JMP loop8

lanes:
	// Lane i carries 128*(7-i) bits further to meet lane 7.
	MOVOU (LANES+0)(DX), X14
	FOLD_SSE(X0, X14, X8)
	MOVOU (LANES+16)(DX), X15
	FOLD_SSE(X1, X15, X9)
	PXOR X0, X7
	PXOR X1, X7
	MOVOU (LANES+32)(DX), X14
	FOLD_SSE(X2, X14, X8)
	MOVOU (LANES+48)(DX), X15
	FOLD_SSE(X3, X15, X9)
	PXOR X2, X7
	PXOR X3, X7
	MOVOU (LANES+64)(DX), X14
	FOLD_SSE(X4, X14, X8)
	MOVOU (LANES+80)(DX), X15
	FOLD_SSE(X5, X15, X9)
	PXOR X4, X7
	PXOR X5, X7
	MOVOU (LANES+96)(DX), X14
	FOLD_SSE(X6, X14, X8)
	PXOR X6, X7
	JMP loop1k

one:
	MOVOU (SI), X7
	MOVQ AX, X8
	PXOR X8, X7
	ADDQ $16, SI
	SUBQ $16, CX

loop1k:
	MOVOU K128(DX), X15

loop1:
	CMPQ CX, $16
	JB reduce
	FOLD_SSE(X7, X15, X8)
	MOVOU (SI), X9
	PXOR X9, X7
	ADDQ $16, SI
	SUBQ $16, CX
	JMP loop1

reduce:
	REDUCE128(X7, DX)
	MOVQ AX, ret+32(FP)
	RET

// func mulCLMUL(a, b uint64, k *foldConsts) uint64
//
// a*b mod P: one carry-less product of a and b shifted up one place (so the
// 128-bit result has the layout REDUCE128 uses after its first step), b's
// x^0 term added back as a itself, then the Barrett steps.
TEXT ·mulCLMUL(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), AX
	MOVQ b+8(FP), BX
	MOVQ k+16(FP), DX
	MOVQ BX, CX
	SARQ $63, CX
	ANDQ AX, CX
	SHLQ $1, BX
	MOVQ AX, X0
	MOVQ BX, X1
	PCLMULQDQ $0x00, X1, X0
	MOVOU BARRETT(DX), X2
	MOVO X0, X3
	PCLMULQDQ $0x00, X2, X3
	MOVO X3, X4
	PCLMULQDQ $0x10, X2, X4
	PXOR X0, X4
	PEXTRQ $1, X4, AX
	MOVQ X3, BX
	XORQ BX, AX
	XORQ CX, AX
	MOVQ AX, ret+24(FP)
	RET

// func foldAVX512(crc uint64, p *byte, n int, k *foldConsts) uint64
//
// n is a multiple of 16 and at least 256. Four 512-bit registers, each four
// 128-bit lanes, fold 256 bytes per round with VPCLMULQDQ; VPTERNLOGQ does
// the two xors in one instruction. The registers are then folded 4 -> 2 ->
// 1, further 64-byte blocks folded into the last one, its four lanes folded
// onto the top lane, 16-byte blocks folded in, and the result reduced as in
// foldSSE.
TEXT ·foldAVX512(SB), NOSPLIT, $0-40
	MOVQ crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVQ AX, X4
	VPXORQ Z4, Z0, Z0
	ADDQ $256, SI
	SUBQ $256, CX
	VBROADCASTI32X4 K2048(DX), Z12

loop4:
	CMPQ CX, $256
	JB fold4
	FOLD_V(Z0, Z12, Z4)
	FOLD_V(Z1, Z12, Z5)
	FOLD_V(Z2, Z12, Z6)
	FOLD_V(Z3, Z12, Z7)
	VPTERNLOGQ $0x96, 0(SI), Z4, Z0
	VPTERNLOGQ $0x96, 64(SI), Z5, Z1
	VPTERNLOGQ $0x96, 128(SI), Z6, Z2
	VPTERNLOGQ $0x96, 192(SI), Z7, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JMP loop4

fold4:
	// Z0 onto Z2 and Z1 onto Z3 (1024 bits), then Z2 onto Z3 (512 bits).
	VBROADCASTI32X4 K1024(DX), Z12
	FOLD_V(Z0, Z12, Z4)
	FOLD_V(Z1, Z12, Z5)
	VPTERNLOGQ $0x96, Z4, Z0, Z2
	VPTERNLOGQ $0x96, Z5, Z1, Z3
	VBROADCASTI32X4 K512(DX), Z12
	FOLD_V(Z2, Z12, Z4)
	VPTERNLOGQ $0x96, Z4, Z2, Z3

loop1z:
	CMPQ CX, $64
	JB lanes4
	FOLD_V(Z3, Z12, Z4)
	VPTERNLOGQ $0x96, 0(SI), Z4, Z3
	ADDQ $64, SI
	SUBQ $64, CX
	JMP loop1z

lanes4:
	// Lane i of Z3 carries 128*(3-i) bits to meet lane 3: the constants
	// of lanes 4, 5 and 6 of the eight-lane table.
	VEXTRACTI32X4 $1, Z3, X5
	VEXTRACTI32X4 $2, Z3, X6
	VEXTRACTI32X4 $3, Z3, X7
	VMOVDQU (LANES+64)(DX), X12
	FOLD_V(X3, X12, X8)
	VPTERNLOGQ $0x96, X8, X3, X7
	VMOVDQU (LANES+80)(DX), X12
	FOLD_V(X5, X12, X8)
	VPTERNLOGQ $0x96, X8, X5, X7
	VMOVDQU (LANES+96)(DX), X12
	FOLD_V(X6, X12, X8)
	VPTERNLOGQ $0x96, X8, X6, X7
	VMOVDQU K128(DX), X12

loop1x:
	CMPQ CX, $16
	JB reducez
	FOLD_V(X7, X12, X8)
	VPTERNLOGQ $0x96, 0(SI), X8, X7
	ADDQ $16, SI
	SUBQ $16, CX
	JMP loop1x

reducez:
	VZEROUPPER
	REDUCE128(X7, DX)
	MOVQ AX, ret+32(FP)
	RET
