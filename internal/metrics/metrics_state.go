package metrics

import (
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// metricsState is what the metrics commands keep beside the keyspace for
// one engine: each Env has its own, so two servers in one process share
// nothing and a dropped server's state goes with it. The rate limiters
// (CL.THROTTLE, GCRA, RATELIMIT.SLIDING) keep everything in their keys;
// the time-series family keeps its label indexes here. Touched only under
// the server lock, like the keyspace it follows.
type metricsState struct {
	ks *keyspace.Keyspace
	ts tsState
}

// metricsExt is the engine's slot for the metrics state.
var metricsExt = engine.NewExt(newMetricsState)

func newMetricsState(e *engine.Env) *metricsState {
	return &metricsState{ks: e.KS}
}

// metricsOf is e's metrics state.
func metricsOf(e *engine.Env) *metricsState { return metricsExt.Of(e) }
