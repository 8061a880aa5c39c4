package command

// metricsState is what the metrics commands keep beside the keyspace for
// one engine: each Env has its own, so two servers in one process share
// nothing and a dropped server's state goes with it. The rate limiters
// (CL.THROTTLE, GCRA, RATELIMIT.SLIDING) keep everything in their keys;
// the time-series family keeps its label indexes here. Touched only under
// the server lock, like the keyspace it follows.
type metricsState struct {
	ts tsState
}

func newMetricsState() *metricsState { return &metricsState{} }

// metricsOf is e's metrics state.
func metricsOf(e *Env) *metricsState { return e.metrics }
