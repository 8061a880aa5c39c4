package commands

import (
	"testing"
)

func TestBytesToHuman(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.00K", 1067064: "1.02M",
		672130984: "640.99M", 3 << 30: "3.00G", 5 << 40: "5.00T", 7 << 50: "7.00P"} {
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMallocSize(t *testing.T) {
	for n, want := range map[int]int{1: 8, 8: 8, 9: 16, 20: 32, 49: 64, 104: 112, 129: 160, 204: 224,
		306: 320, 1006: 1024, 5006: 5120, 70010: 81920} {
		if got := mallocSize(n); got != want {
			t.Errorf("mallocSize(%d) = %d, want %d", n, got, want)
		}
	}
}
