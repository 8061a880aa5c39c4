package persist_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Replies and errors of the persistence commands, byte for byte against
// redis-server 7.0 (the cases whose reply does not depend on timing).
func TestPersistenceCommandsDiff(t *testing.T) {
	inst := start(t, t.TempDir())
	d := servertest.NewDiff(t, inst)
	d.Lines(`
BGSAVE foo
BGSAVE schedule extra
BGSAVE SCHEDULEX
SAVE x
LASTSAVE x
SET k v
SAVE
MULTI
SAVE
DISCARD
MULTI
BGSAVE
EXEC
`)
	// The scheduled save runs at the next cron tick on both.
	inst.Dur.PersistCron()
	inst.Dur.WaitBgsave()
}
