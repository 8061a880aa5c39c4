// Package commands holds Redis's command families, one file per family as
// Redis's src/t_*.c: strings (and the conditional writes beside them,
// condwrite.go), keys, expire, hashes, lists, sets, zsets, bitmaps, hll,
// sort, scripting (EVAL, SCRIPT, FUNCTION), and the server, connection,
// client, config, info, debug, memory and introspection commands, with
// DUMP/RESTORE/MIGRATE. Each family registers its table entries with
// engine.Register from init: a handler parses its arguments, reads or
// writes the keyspace, declares the effects of its writes and writes its
// reply; everything about a command that is not its behaviour (arity,
// flags, key positions, ACL categories, documentation) is data in its
// table entry, which COMMAND, arity checks and key extraction all read.
// Linking the package (main.go, servertest) is what makes the commands
// exist.
package commands
