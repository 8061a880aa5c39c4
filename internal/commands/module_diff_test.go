package commands_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// MODULE against redis-server with enable-module-command no (both
// defaults) and yes.
func TestModuleDiff(t *testing.T) {
	for _, enable := range []string{"no", "yes"} {
		inst := servertest.Start(t, servertest.WithConfig("enable-module-command", enable))
		r := servertest.PrivateRedis(t, "--enable-module-command", enable)
		d := servertest.DialDiff(t, inst.Addr, r.Addr)
		d.Lines(`MODULE HELP
MODULE LIST
MODULE LOAD /nonexistent/x.so
MODULE LOADEX /nonexistent/x.so CONFIG a b ARGS c
MODULE UNLOAD x
MODULE FOO
MODULE LIST x
MODULE
CONFIG SET enable-module-command yes`)
	}
}
