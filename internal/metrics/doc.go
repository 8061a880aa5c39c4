// Package metrics holds the metrics commands: the time series (TS.*,
// compatible with RedisTimeSeries; timeseries*.go) and the rate limiters
// (CL.THROTTLE, GCRA, RATELIMIT.SLIDING; ratelimit*.go). They register in
// the engine's command table from init like the Redis families of
// internal/commands, whose hash helpers RATELIMIT.SLIDING shares. What they
// keep beside the keyspace (the time-series label indexes) is per engine,
// in an engine extension slot (metrics_state.go), never a global.
package metrics
