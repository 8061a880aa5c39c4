package commands_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// COMMAND INFO and GETKEYS of the scripting commands against redis-server.
// EVAL and FCALL are left out of COMMAND INFO: Redis describes their keys
// with a "keynum" key spec (and a note), which the command table does not
// model; their key positions are compared through GETKEYS instead.

var scriptingOwnCommands = []string{
	"script|load", "script|exists", "script|flush", "script|kill", "script|debug", "script|help",
	"function|load", "function|delete", "function|flush", "function|list", "function|dump",
	"function|restore", "function|stats", "function|kill", "function|help",
}

func TestScriptingCommandInfoDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	for _, proto := range []string{"2", "3"} {
		d.A.Do("HELLO", proto)
		d.R.Do("HELLO", proto)
		for _, name := range scriptingOwnCommands {
			d.Do("COMMAND", "INFO", name)
		}
	}
	d.Lines(`
COMMAND GETKEYS EVAL x 0
COMMAND GETKEYS EVAL x 2 a b c
COMMAND GETKEYS EVALSHA x 1 a b
COMMAND GETKEYS EVAL_RO x 3 a b c d
COMMAND GETKEYS EVALSHA_RO x 1 a
COMMAND GETKEYS FCALL f 2 a b c
COMMAND GETKEYS FCALL_RO f 1 a
COMMAND GETKEYS FCALL f 0
COMMAND GETKEYS EVAL x 5 a
COMMAND GETKEYS EVAL x -1
COMMAND GETKEYS SCRIPT LOAD x
COMMAND GETKEYS FUNCTION LIST
`)
}
