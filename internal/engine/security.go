package engine

import (
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
)

// crossProtocolWarning is Redis's log line for a client that sends
// "POST" or "Host:" as a command.
const crossProtocolWarning = "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted."

// crossProtocol is Redis's guard against cross-protocol scripting: a web
// page can make a browser send an HTTP request to a local server, whose
// lines would otherwise run as inline commands. "POST" or "Host:" as a
// command name closes the connection, before authentication and before
// MULTI queues it, as processCommand does; the commands after it in the
// same read do not run. The warning is logged at most once a minute.
// Neither name is a command, so callers ask only for names the table
// lacks, which keeps the check off the path of every known command.
func (e *Env) crossProtocol(s *Session, name []byte) bool {
	if !ascii.EqualFold(name, "post") && !ascii.EqualFold(name, "host:") {
		return false
	}
	now := time.Now().Unix()
	if last := e.xssLogged.Load(); last == 0 || now-last > 60 || last-now > 60 {
		e.xssLogged.Store(now)
		e.Log.Warn(crossProtocolWarning)
	}
	s.CloseAfterReply, s.DropReplies = true, true
	return true
}
