package commands_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"testing"
)

// TestStreamDiffGroupCursor drives the paths a consumer group's delivery
// cursor and the stream's first- and last-entry shortcuts take, against
// redis-server: streams of many small nodes, approximate and exact trims
// (XADD MAXLEN ~ / MINID ~, XTRIM), deletions of first and last entries,
// XREADGROUP ">" with and without COUNT by several consumers, history
// reads, XACK, groups moved back and forth by XGROUP SETID, and streams
// emptied, set back by XSETID and refilled with ids their old nodes had.
func TestStreamDiffGroupCursor(t *testing.T) {
	d := streamDiff(t)
	for _, cfg := range [][2]string{{"0", "4"}, {"120", "0"}, {"4096", "100"}} {
		d.Do("CONFIG", "SET", "stream-node-max-bytes", cfg[0], "stream-node-max-entries", cfg[1])
		for seed := int64(1); seed <= 3; seed++ {
			r := rand.New(rand.NewSource(seed))
			d.Do("FLUSHALL")
			const k = "s"
			groups := []string{"g1", "g2", "g3"}
			cons := []string{"c1", "c2", "c3", "c4"}
			for _, g := range groups {
				d.Do("XGROUP", "CREATE", k, g, "0", "MKSTREAM")
			}
			ms := 1
			id := func() string { return fmt.Sprintf("%d-%d", 1+r.Intn(ms), r.Intn(2)) }
			for op := 0; op < 2000; op++ {
				g := groups[r.Intn(len(groups))]
				c := cons[r.Intn(len(cons))]
				var args []string
				switch n := r.Intn(40); {
				case n < 14:
					ms += r.Intn(2)
					args = []string{"XADD", k}
					switch r.Intn(6) {
					case 0:
						args = append(args, "MAXLEN", "~", strconv.Itoa(r.Intn(60)))
					case 1:
						args = append(args, "MINID", "~", id())
					case 2:
						args = append(args, "MAXLEN", "~", strconv.Itoa(r.Intn(60)), "LIMIT", strconv.Itoa(r.Intn(20)))
					}
					args = append(args, fmt.Sprintf("%d-*", ms), "f1", strconv.Itoa(op), "f2", "ok")
					if r.Intn(5) == 0 {
						args = append(args, "f3", "x")
					}
				case n < 26:
					args = []string{"XREADGROUP", "GROUP", g, c}
					if r.Intn(5) != 0 {
						args = append(args, "COUNT", strconv.Itoa(1+r.Intn(5)))
					}
					if r.Intn(8) == 0 {
						args = append(args, "NOACK")
					}
					from := ">"
					if r.Intn(6) == 0 {
						from = "0"
					}
					args = append(args, "STREAMS", k, from)
				case n < 32:
					args = []string{"XACK", k, g, id(), id(), id()}
				case n < 34:
					args = []string{"XDEL", k, id()}
					if r.Intn(2) == 0 {
						// The last entry: LastEntry's shortcut must see the tombstone.
						args = []string{"XDEL", k, fmt.Sprintf("%d-0", ms), fmt.Sprintf("%d-1", ms)}
					}
				case n < 35:
					args = []string{"XGROUP", "SETID", k, g, []string{"0", "$", id()}[r.Intn(3)]}
				case n < 36:
					args = []string{"XTRIM", k, "MAXLEN", []string{"~", "="}[r.Intn(2)], strconv.Itoa(r.Intn(40))}
				case n < 37:
					// Empty the stream, set its id back and refill it with
					// ids its removed nodes had.
					d.Do("XTRIM", k, "MAXLEN", "0")
					back := max(1, ms-r.Intn(20))
					d.Do("XSETID", k, fmt.Sprintf("%d-0", back))
					ms = back
					args = []string{"XADD", k, fmt.Sprintf("%d-1", ms), "f1", "back", "f2", "ok"}
				case n < 38:
					args = []string{"XINFO", "STREAM", k}
				case n < 39:
					args = []string{"XINFO", "GROUPS", k}
				default:
					args = []string{"XREVRANGE", k, "+", "-", "COUNT", "3"}
				}
				d.Do(args...)
				if t.Failed() {
					t.Fatalf("config %v seed %d op %d", cfg, seed, op)
				}
			}
			d.Do("XINFO", "STREAM", k, "FULL")
			for _, g := range groups {
				d.Do("XPENDING", k, g)
			}
		}
	}
}
