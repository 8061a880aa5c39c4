package commands_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// PFDEBUG and PFSELFTEST against redis-server: the encoding at every size
// for several hll-sparse-max-bytes values (the sparse->dense promotion
// happens at the same element), DECODE's text, GETREG's registers,
// TODENSE, the errors.
func TestPfdebugDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, nil)
	p.Lines(`
PFDEBUG
PFDEBUG ENCODING
PFDEBUG ENCODING k extra
PFDEBUG ENCODING nokey
SET str hello
PFDEBUG ENCODING str
PFDEBUG DECODE str
RPUSH list a
PFDEBUG ENCODING list
PFADD h a b c
PFDEBUG NOPE h
PFDEBUG SIMD h
PFDEBUG SIMD ON
PFDEBUG DECODE h
PFDEBUG ENCODING h
PFDEBUG TODENSE h
PFDEBUG TODENSE h
PFDEBUG ENCODING h
PFDEBUG DECODE h
GET h
PFCOUNT h
PFSELFTEST x
`)
	for _, max := range []string{"3000", "0", "100", "400", "1000", "5000"} {
		p.Do("CONFIG", "SET", "hll-sparse-max-bytes", max)
		key := "hll" + max
		for i := 0; i < 1500; i++ {
			p.Do("PFADD", key, "e"+strconv.Itoa(i), "f"+strconv.Itoa(i*7))
			if i%5 == 0 || i < 40 {
				p.Do("PFDEBUG", "ENCODING", key)
			}
			if i%97 == 0 {
				p.Do("PFDEBUG", "DECODE", key)
				p.Do("STRLEN", key)
			}
		}
		p.Do("PFDEBUG", "ENCODING", key)
		p.Do("PFDEBUG", "GETREG", key)
		p.Do("PFDEBUG", "ENCODING", key)
		p.Do("GET", key)
		// PFMERGE into a sparse value promotes by the same rule.
		p.Do("PFADD", key+"m", "x")
		p.Do("PFMERGE", key+"m", key)
		p.Do("PFDEBUG", "ENCODING", key+"m")
	}
	// A crafted sparse value (one XZERO) and a corrupt one (cut off).
	p.Lines(`
CONFIG SET hll-sparse-max-bytes 3000
SET crafted "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"
PFDEBUG DECODE crafted
PFDEBUG ENCODING crafted
SET bad "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"
PFDEBUG DECODE bad
PFDEBUG GETREG bad
PFDEBUG TODENSE bad
PFDEBUG ENCODING bad
`)
}

// TestPfselftestDiff: PFSELFTEST passes on both (it takes seconds, holding
// the server, so it runs without the connections' read timeout).
func TestPfselftestDiff(t *testing.T) {
	r := servertest.Redis(t)
	inst := servertest.Start(t)
	for name, addr := range map[string]string{"abacus": inst.Addr, "redis": r.Addr} {
		c := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: -1})
		if got, err := c.Do(servertest.Ctx, "PFSELFTEST").Result(); err != nil || got != "OK" {
			t.Errorf("%s: PFSELFTEST %v %v", name, got, err)
		}
		c.Close()
	}
}
