package commands_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The LFU counter against redis-server's rules (evict.c's LFULogIncr and
// the lookups that call it): with lfu-log-factor 0 every access counts, so
// OBJECT FREQ is exact on both; with the default factor 10 the increments
// are random, and the mean counter over many keys must agree.
func TestAccessLFUCounterDiff(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	defer d.Do("CONFIG", "SET", "maxmemory-policy", "noeviction", "lfu-log-factor", "10")
	d.Lines(`
CONFIG SET maxmemory-policy allkeys-lfu lfu-log-factor 0
SET k v
OBJECT FREQ k
GET k
GET k
GET k
OBJECT FREQ k
SET k v2
OBJECT FREQ k
APPEND k x
OBJECT FREQ k
STRLEN k
TYPE k
OBJECT FREQ k
SETRANGE k 1 y
OBJECT FREQ k
SET f 1.5
INCRBYFLOAT f 1
OBJECT FREQ f
RPUSH l a b
RPUSH l c
LRANGE l 0 -1
OBJECT FREQ l
SADD s a
SADD s b
SISMEMBER s a
OBJECT FREQ s
HSET h a 1
HSET h b 2
HGET h a
OBJECT FREQ h
XADD x 1-1 f v
XADD x 2-1 f v
OBJECT FREQ x
EXPIRE h 100
PERSIST h
OBJECT FREQ h
`)
	for range 300 {
		d.Do("GET", "k")
	}
	d.Do("OBJECT", "FREQ", "k") // saturated at 255

	d.Do("CONFIG", "SET", "lfu-log-factor", "10")
	const keys, reads = 100, 200
	mean := map[string]float64{}
	for name, c := range map[string]*servertest.Conn{"abacus": d.A, "redis": d.R} {
		var cmds [][]string
		for i := range keys {
			cmds = append(cmds, []string{"SET", "f:" + strconv.Itoa(i), "v"})
		}
		for range reads {
			for i := range keys {
				cmds = append(cmds, []string{"GET", "f:" + strconv.Itoa(i)})
			}
		}
		pipeline(t, c, cmds)
		sum := 0
		for i := range keys {
			sum += freqOf(t, c, "f:"+strconv.Itoa(i))
		}
		mean[name] = float64(sum) / keys
	}
	// Each key's counter after 200 reads is about 11.5, give or take 1:
	// the means of 100 keys are within a few tenths of each other.
	if a, r := mean["abacus"], mean["redis"]; math.Abs(a-r) > 0.6 || a < 9 || a > 14 {
		t.Errorf("mean OBJECT FREQ after %d reads: abacus %.2f, redis %.2f", reads, a, r)
	}
}
