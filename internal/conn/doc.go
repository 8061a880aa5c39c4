// Package conn serves Abacus's clients: it accepts connections, reads and
// parses their requests, runs them through engine.Env under one lock and
// writes the replies. This comment is the package's concurrency contract;
// the files hold the details.
//
// # Goroutines
//
//   - An accept goroutine per listener (Server.Serve) registers each new
//     client and gives it to an event loop, or to a goroutine of its own.
//   - A TLS client's first goroutine (client.serveTLS) runs its handshake,
//     so that a slow or stuck one holds nothing else, and then gives the
//     client to an event loop (client.tlsToLoop), which serves it as a
//     plaintext one through its tls.Conn (tlssock.go), and ends; without
//     a loop it goes on as the client's goroutine.
//   - An event loop (loop_linux.go; io-threads of them, io-event-loop yes,
//     the default on Linux) waits on an epoll set of TCP clients. For a
//     readable client it reads what arrived, runs every complete command
//     in batches under the server lock, and leaves the replies staged;
//     after the round of events it writes every staged reply (flushAll),
//     as Redis does in beforeSleep.
//     Clients whose unread output passed backlogAt (eventLoop.heavy)
//     are served once the round's others have been served and their
//     replies written (flushAll runs again after them), within a
//     budget of reply bytes and of the loop's time (serveHeavy), the
//     largest queue first, so that clients that do not read cannot
//     stall the others; they are out of the epoll set until served
//     (addHeavy), and the loop sleeps until their turn when nothing
//     else is ready.
//     Then, while the engine has background steps (a save's encoding,
//     engine.Env.RunInBackground), the loop runs them for a bounded time
//     under the server lock, taken with TryLock so the loop never waits
//     for it holding eventLoop.mu (background_linux.go).
//   - A client goroutine (client.serve) serves a client the loop cannot:
//     unix sockets, io-event-loop no, systems without epoll, and a loop
//     client that must wait ("handoff": a blocking command parked it,
//     CLIENT PAUSE holds its next command, or its socket would not take a
//     reply whole), or that sends a command of engine.PrepareArgs
//     arguments or more, which its goroutine reads, prepares and runs
//     (prepare.go). A handed-off client keeps its goroutine until it
//     closes; the goroutine goes on exactly where the loop stopped.
//   - A busy watcher per loop (eventLoop.busyWatch) serves the loop's
//     clients while a script is busy and the loop is not polling: it
//     sleeps until a script starts (engine.Env.ScriptStarted), then until
//     the command package says the script is busy (Env.ScriptBusyIn: it
//     has run busy-reply-threshold), then takes the loop's epoll set when
//     the loop lets go of it and answers through Env.ExecuteBusy (BUSY,
//     SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE). It gives the set back
//     when the script ends or the loop asks (eventLoop.want); what it
//     cannot answer it leaves to the loop (kick).
//   - A pushed-output writer (client.writeLoop) for each client that has
//     been sent output by other clients (MONITOR), or whose socket would
//     not take its replies while a client-output-buffer-limit applies to
//     it (outlimit.go): it goes on being served, its output queued.
//   - A memory releaser (freeOSMemory, outlimit.go), while large buffers
//     that clients dropped wait to go back to the system.
//   - The cron goroutine (Server.cron): Env.Cron, idle timeouts, active
//     expiry, each step under the server lock.
//   - Short-lived ones: a client's close when it must not run on the
//     loop (loop_linux.go, drop), and Close's wait for the others.
//
// # Locks
//
// The package's mutexes, in lock order: a goroutine takes one only while
// holding none that comes after it. No goroutine unlocks a mutex another
// goroutine locked.
//
//  1. eventLoop.mu: the loop's epoll set and clients (byFD, cur, kick,
//     pending, heavy) and the loop-side state of each client in it (see
//     Ownership). The loop goroutine holds it except while it runs a
//     client's batch; the busy watcher holds it while it serves. Under
//     it: the server lock (a dropped client's close takes it, except
//     while a script holds it: then the close runs on its own goroutine),
//     ioMu (handoff), inMu (admitting new clients), outQueue.mu (replies
//     joining a queue on the busy path). Nothing takes eventLoop.mu while
//     holding the server lock, so a script never waits for a loop.
//  2. Server.mu, the keyspace lock: every command runs under it, so
//     commands are atomic and a script or EXEC runs with nothing
//     interleaved. It also guards engine.Env's unsynchronized state,
//     Server.current, each client's out pointer and the session fields
//     commands change. Under it: clientsMu (CLIENT LIST, idle timeouts),
//     ioMu (waking a parked client, kill), outQueue.mu (pushes, staged
//     replies). Tests take it through Server.Lock.
//  3. Server.clientsMu: the clients map. Under it: ioMu (kill, Close).
//  4. client.ioMu: a client's conn and fdOpen, against kill, Close and a
//     parked client's waker, which run on other goroutines. A leaf.
//  5. eventLoop.inMu: the loop's inbox of accepted clients. Under it:
//     evMu, the eventfd that wakes the loop (closed with the loop), a
//     leaf, which wakers take alone (eventLoop.wake): the AOF's
//     committer (eventLoop.syncWake) holding the AOF's own mutex, which
//     nothing here takes, and a save's encoder.
//  6. outQueue.mu: a pushed-output queue's bytes and its closing and
//     failed flags. A leaf: add releases it before it checks the limits,
//     logs or kills.
//  7. Server.lnMu: the listeners and the port. A leaf.
//  8. The log handler's mu: one line at a time. Innermost: anyone logs.
//
// The command package's own mutexes (statistics, a script's end channel)
// are taken inside its calls and are leaves for this package.
//
// # Ownership of a client
//
// A client's input (client.reader: its buffers and parse state) and reply
// buffer (client.w) belong to one goroutine at a time, its owner:
//
//   - A client on a loop is owned by the holder of eventLoop.mu (the loop
//     goroutine, or the busy watcher while it serves), except while the
//     loop goroutine runs its batch: the loop records it as eventLoop.cur
//     before letting go of mu, owns it without mu, and the busy watcher
//     skips cur.
//   - A handoff passes ownership with a go statement: the loop takes the
//     client out of its set, gives it a net.Conn (under ioMu) and starts
//     its goroutine, which owns it from then on. A TLS client's, made
//     from a duplicate of its descriptor, becomes the socket its tls.Conn
//     reads (tlsToGoroutine).
//   - A TLS client's handshake goroutine owns it until it puts it in the
//     loop's inbox (eventLoop.add, under inMu); the loop owns it from
//     admit on, and serves it once without an event (kick), since the
//     TLS layer may hold requests read with the handshake.
//   - A client goroutine owns its client until close, which it runs
//     itself; a loop that drops a client closes it, itself or on a
//     goroutine it starts for that.
//
// Other goroutines never touch a client's reply buffer. Output another
// client produces for it (Session.Push: MONITOR lines), under the server
// lock, goes to its pushed-output queue, except when the client is the
// one running commands now (Server.current), whose own goroutine then
// appends it to its replies in order; output pushed during another
// client's batch is first gathered per receiver under the server lock and
// joins its queue once, under that lock: at the end of the event loop's
// round (eventLoop.roundEnd) when the batch ran on a loop, else at the
// batch's end, and in any case before the receiver's own output or a push
// that is not gathered (pushround.go). kill sets Session.Killed and shuts
// the socket down (under ioMu); the owner notices and closes.
//
// With the AOF on, pushed bytes are held in the queue (outQueue.held)
// until the batch that pushed them has fed its writes to the AOF
// (Server.releasePushes, under the server lock, with the batch's
// position; pushes made outside a batch are released by the cron, the
// loop's round end or Server.Unlock), and the writer waits for that
// position to be durable before it writes them (holdPushes, out.go).
//
// The queue (client.out) is made once, by compare-and-swap: by a push,
// or by the owner when its socket is full (queueRest); whoever makes it
// counts its writer in Server.wg. Its output buffer limits are checked by
// whoever adds to it (outQueue.added), the owner's reply buffer's by the
// owner after each command (outputGrew); a client over its limit is
// killed from there, and its owner closes it as for any kill.
//
// # Who writes to the socket
//
// client.wown names the one goroutine that may write to a client's socket
// at each moment, and changes by compare-and-swap, never by a held lock:
//
//   - wIdle: nobody writes. The owner, having put replies in client.w,
//     claims the socket in stage (wIdle to wDirect) before it releases
//     the server lock, so that output pushed later cannot overtake them.
//   - wDirect: the owner's staged replies are in flight. The owner writes
//     them (finish) right after the lock is released, or, on a loop,
//     after the round of events (client.wpending: the loop or the busy
//     watcher writes them, holding eventLoop.mu, as the client's owner),
//     unless they passed replyFlushAt: then at once. Under appendfsync
//     always, replies also wait for the AOF position their batch
//     depends on (client.syncAt, set from Persistence.Flush after the
//     lock is released) to be durable: finish waits for it
//     (Persistence.Wait) before it writes; the loop instead keeps the
//     client in its pending list, across rounds if need be, and goes on
//     serving others while the group fsync runs (flushAll asks
//     Persistence.Durable, whose end wakes the loop); replies of a held
//     client served again join the held ones. When a write finds
//     the socket full (socketFull), a client with an output limit moves
//     the rest to the head of its queue and straight to wQueue; for
//     another, a loop's rest (client.wrest) is written by the goroutine
//     the handoff starts (writeRest), a goroutine's by itself, waiting
//     and reading the client's input meanwhile (writeReading: the owner
//     fills its own reader).
//     Whoever finishes ends the write (endDirect: back to wIdle).
//   - wQueueWaits: a push created the queue while a write was in flight.
//     endDirect (or queueRest) then moves to wQueue and starts the
//     queue's writer, so the pushed bytes follow the replies.
//   - wQueue: the queue alone is written, for the rest of the
//     connection; the owner's replies join it in stage instead, and a
//     large reply may join it unencoded during its command
//     (client.deferReply): its writer encodes it as it sends it. Its
//     writer is whoever holds outQueue.busy (under outQueue.mu): the
//     pushed-output writer, or an event loop that drains it without
//     blocking at the end of its round (outQueue.drain, from wakeAll)
//     instead of waking the writer, and gives what the socket did not
//     take back to the queue's head for the writer.
//
// A TLS client's writes go through its tls.Conn to a socket that never
// waits (tlsSock): the ciphertext it does not take stays pending there,
// and a write that leaves some reports the socket full like a raw one,
// so the same routes follow (on a loop: the queue's writer, or the
// handoff's goroutine, which flushes it in writeRest); the writers that
// may wait (outWrite, writeReading) flush it, one at a time
// (tlsSock.flushMu). A loop does not drain a TLS client's queue (the
// writer alone writes it). So neither a reply nor a close_notify sent
// by a kill under the server lock waits for a TLS client that does not
// read.
//
// So bytes reach a socket by three routes: the owner's write of its
// staged replies (finish, finished by writeRest after a handoff), the
// queue's writer (writeLoop, or a loop's drain), and the refusal line sent to a
// connection turned away before it becomes a client (Server.accept). The
// queue stays a route of its own because pushes come from other clients'
// goroutines under the server lock and must not wait for the receiving
// client, whose owner may be a loop busy with others or a goroutine
// parked in a read. The busy path stages its replies the same way as the
// normal one (flushUnlocked), without the server lock: the
// compare-and-swap on wown orders it against a push made meanwhile by the
// running script.
package conn
