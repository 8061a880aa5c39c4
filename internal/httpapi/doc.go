// Package httpapi is Abacus's HTTP endpoint (off unless http-port is
// set): /metrics in Prometheus's text format (OpenMetrics on request)
// with oliver006/redis_exporter's metric names, /healthz and /readyz, and
// a dashboard at / whose page, script and chart library are embedded in
// the binary.
//
// It runs on net/http's goroutines, never on the event loop. It reads the
// server as a client does: every figure comes from a command (INFO ALL,
// SLOWLOG, TS.MGET, TS.QUERYINDEX, TS.MRANGE) run through Env.Execute with
// a session of its own, under the server lock, so what it shows is what
// INFO and the TS commands answer, and it adds no hooks to the engine.
// The commands are counted in INFO commandstats like any client's (as
// redis_exporter's INFO is).
//
// Bounds: one request at a time holds or waits for the server lock (the
// others wait for their turn outside it); a request's work under the lock
// is bounded by a fixed command list and, for series, by the filter's
// matches, capped (http-export-series-max, and 50 drawn series in the
// explorer); connections, header size and the time to send headers are
// limited (Limits), so slow or hostile HTTP clients hold goroutines of
// this package at most, never the data port's clients.
package httpapi
