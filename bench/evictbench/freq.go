package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

// heldProfile prints what a server holds after the cache run: for bands
// of Zipf ranks (rank 0 the most requested), the share of the band's keys
// held and their mean OBJECT FREQ, and the histogram of OBJECT FREQ over
// the held keys. Two servers' profiles after the same workload show where
// their eviction choices differ.
func heldProfile(s *harness.Server, keys int) {
	c := dial(s)
	defer c.c.Close()
	type band struct{ lo, hi, held, freq int }
	var bands []*band
	for lo := 0; lo < keys; {
		hi := min(keys, max(lo*2, 1000))
		bands = append(bands, &band{lo: lo, hi: hi})
		lo = hi
	}
	var hist [256]int
	const batch = 1000
	for lo := 0; lo < keys; lo += batch {
		var buf []byte
		hi := min(keys, lo+batch)
		for id := lo; id < hi; id++ {
			buf = harness.Encode(buf, "OBJECT", "FREQ", "key:"+strconv.Itoa(id))
		}
		c.write(buf)
		for id := lo; id < hi; id++ {
			l := c.line()
			if !strings.HasPrefix(l, ":") {
				continue // no such key
			}
			f, _ := strconv.Atoi(l[1:])
			hist[f]++
			for _, b := range bands {
				if id < b.hi {
					b.held++
					b.freq += f
					break
				}
			}
		}
	}
	fmt.Printf("\n%s: held share and mean OBJECT FREQ by rank band\n", s.Name)
	for _, b := range bands {
		mean := 0.0
		if b.held > 0 {
			mean = float64(b.freq) / float64(b.held)
		}
		fmt.Printf("  ranks %8d-%8d: held %.4f  mean freq %6.2f\n", b.lo, b.hi, float64(b.held)/float64(b.hi-b.lo), mean)
	}
	fmt.Printf("%s: OBJECT FREQ histogram (value:count)\n ", s.Name)
	for f, n := range hist {
		if n > 0 {
			fmt.Printf(" %d:%d", f, n)
		}
	}
	fmt.Println()
}
