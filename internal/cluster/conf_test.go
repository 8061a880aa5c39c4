package cluster

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// slotRanges against a slot-at-a-time walk, on bitmaps with runs of every
// length, byte-aligned or not, touching both ends or not.
func TestSlotRanges(t *testing.T) {
	naive := func(b *slotBitmap) [][2]int {
		var out [][2]int
		for j := 0; j < NumSlots; j++ {
			if !b.has(j) {
				continue
			}
			if n := len(out); n > 0 && out[n-1][1] == j-1 {
				out[n-1][1] = j
			} else {
				out = append(out, [2]int{j, j})
			}
		}
		return out
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		var b slotBitmap
		switch i {
		case 0:
		case 1:
			for j := 0; j < NumSlots; j++ {
				b.set(j)
			}
		default:
			for j, on := 0, rnd.Intn(2) == 0; j < NumSlots; on = !on {
				run := 1 + rnd.Intn([]int{3, 20, 700, 9000}[rnd.Intn(4)])
				for k := j; k < min(j+run, NumSlots); k++ {
					if on {
						b.set(k)
					}
				}
				j += run
			}
		}
		if got, want := slotRanges(&b), naive(&b); !reflect.DeepEqual(got, want) {
			t.Fatalf("bitmap %d: got %v, want %v", i, got, want)
		}
	}
}

// writeInPlace leaves exactly the new content, shorter or longer than the
// old, in the same file (no new inode), and creates a missing file.
func TestWriteInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	long := []byte(strings.Repeat("x", 5000) + "\n")
	for _, text := range [][]byte{long, []byte("short\n"), long[:100], []byte("")} {
		before, _ := os.Stat(path)
		if err := writeInPlace(path, append([]byte(nil), text...)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(text) {
			t.Fatalf("file holds %d bytes %v, want %d", len(got), err, len(text))
		}
		if after, _ := os.Stat(path); before != nil && !os.SameFile(before, after) {
			t.Fatal("the save replaced the file")
		}
	}
}
