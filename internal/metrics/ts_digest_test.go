package metrics_test

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// DEBUG DIGEST-VALUE of a time series (Abacus's own definition, computed
// like a module type's digest from the samples): equal for equal samples
// whatever the chunking and encoding, unchanged by DUMP/RESTORE, changed by
// a sample.
func TestTimeSeriesDigest(t *testing.T) {
	c := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes")).Raw(t)
	c.Do("TS.CREATE", "a", "CHUNK_SIZE", "48")
	c.Do("TS.CREATE", "b", "ENCODING", "UNCOMPRESSED", "LABELS", "x", "y")
	for i := 0; i < 200; i++ {
		ts, v := strconv.Itoa(1000+i*10), strconv.Itoa(i%7)+".5"
		c.Do("TS.ADD", "a", ts, v)
		c.Do("TS.ADD", "b", ts, v)
	}
	d := servertest.MustStrings(t, c.Do("DEBUG", "DIGEST-VALUE", "a", "b", "none"))
	if d[0] != d[1] || d[0] == d[2] || d[2] != "0000000000000000000000000000000000000000" {
		t.Fatalf("digests %q", d)
	}
	before := c.Do("DEBUG", "DIGEST")
	payload := servertest.BulkBody(t, c.Do("DUMP", "a"))
	c.Do("DEL", "a")
	c.Do("RESTORE", "a", "0", payload)
	if after := c.Do("DEBUG", "DIGEST"); after != before {
		t.Fatalf("DIGEST after DUMP/RESTORE %q, before %q", after, before)
	}
	c.Do("TS.ADD", "a", "5000", "1")
	if e := servertest.MustStrings(t, c.Do("DEBUG", "DIGEST-VALUE", "a")); e[0] == d[0] {
		t.Fatalf("digest unchanged by a sample")
	}
}
