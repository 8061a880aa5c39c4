// Package engine is what every command runs through. It owns the command
// table (Command, its flags and key positions, Register, Lookup), the
// per-server state (Env), each client's state as commands see it
// (Session), the context a handler runs in (Ctx) and execution: Execute and
// ExecuteBusy share one pre-check (lookup, arity, authentication, MULTI
// queuing, refusals) before calling the handler. Beside execution it owns
// MULTI/EXEC (tx.go), the blocking machinery (blocking.go; the blocking
// commands themselves are families), MONITOR, SLOWLOG and LATENCY, the
// error texts clients branch on (errors.go), the clock, key prefetching, the
// effect stream handlers declare their writes on (propagate.go), the
// Persistence interface the durability layer implements, the script
// machinery (running, busy scripts), INFO's statistics, and extension
// slots (Ext) for per-engine state of packages above it.
//
// The command families (internal/commands, internal/metrics) register
// their commands from init; the engine imports none of them, nor
// durability or the connection layer (TestImports).
package engine
