package xxh3

import (
	"fmt"
	"testing"
)

// Digests Redis's documentation prints (DIGEST of "Hello world"), and
// those of other servers' documentation that implement the same command.
func TestDocumented(t *testing.T) {
	for s, want := range map[string]string{
		"Hello world":       "b6acb9d84a38ff74",
		"hello":             "9555e8555c62dcfd",
		"world":             "d6476c25083d69be",
		"test":              "9ec9f7918d7dfc40",
		"Hello, Dragonfly!": "063b4909128e92b7",
		"":                  "2d06800538d394c2",
	} {
		if got := fmt.Sprintf("%016x", Hash([]byte(s))); got != want {
			t.Errorf("Hash(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestPaths covers every length path and its boundaries; the values come
// from an independent implementation (github.com/zeebo/xxh3 v1.1.0, run
// outside this module), over bytes i*7+n.
func TestPaths(t *testing.T) {
	for _, v := range []struct {
		n    int
		want uint64
	}{
		{1, 0xe12ef9d2eb86ceeb},
		{2, 0x33b0814d4f061d86},
		{3, 0xa9088dda485b481c},
		{4, 0x57648c318a7a307e},
		{7, 0x4f82be6987f5eea7},
		{8, 0xb0fb3e3c3f94990a},
		{9, 0x8aca5cb309437c2e},
		{15, 0xc14e5d6729b9e68c},
		{16, 0x2bd926d88792965a},
		{17, 0x621f018aad19b14a},
		{31, 0x1c80db9a3e8ba043},
		{32, 0x8911535e799e4d99},
		{33, 0xb6d8b523db9b284c},
		{63, 0x392f77fce09e8e01},
		{64, 0x1b1bf114c7371f1b},
		{65, 0xf0037f8ac0441cc4},
		{95, 0x630b3611d3cff0dd},
		{96, 0xcfb21e0d09d8ef29},
		{97, 0xe1415ca7902a74da},
		{127, 0xeece8f95570595f1},
		{128, 0xe9549af9a74093e6},
		{129, 0xb54ad1cd8a4c84b9},
		{200, 0x660156a92b43203f},
		{239, 0x318817637cd16359},
		{240, 0x3e136902ec966624},
		{241, 0xbd7d29b6ba966d6a},
		{255, 0xab5be9e5d858a07c},
		{256, 0xff5a1cefade75bb9},
		{1023, 0x0805f138405a64a4},
		{1024, 0xdc5acf0b043c445b},
		{1025, 0xc856c953bbdbc807},
		{2048, 0x848d24cc268f7498},
		{4096, 0x8fb047a89e810965},
		{10000, 0x70e90837a48aa18d},
	} {
		b := make([]byte, v.n)
		for i := range b {
			b[i] = byte(i*7 + v.n)
		}
		if got := Hash(b); got != v.want {
			t.Errorf("length %d: %016x, want %016x", v.n, got, v.want)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	for _, n := range []int{16, 100, 1000, 100000} {
		buf := make([]byte, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				Hash(buf)
			}
		})
	}
}
