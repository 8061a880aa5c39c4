package recipes

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// onSeries runs write, which adds samples to series that create makes. A
// series that is missing although made (deleted since, or FLUSHDB) fails
// the write: then the series are made again and the write repeated once.
func onSeries(ctx context.Context, setup *setupOnce, create func(context.Context) error, write func() error) error {
	for attempt := 0; ; attempt++ {
		if err := create(ctx); err != nil {
			return err
		}
		err := write()
		if err == nil || attempt == 1 || ignoreErr(err, "does not exist") != nil {
			return err
		}
		setup.reset()
	}
}

// sampleValue is a sample's value: a string in RESP2, a double in RESP3.
func sampleValue(x any) (float64, error) {
	switch x := x.(type) {
	case string:
		return strconv.ParseFloat(x, 64)
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	}
	return 0, fmt.Errorf("recipes: unexpected value %v", x)
}

// parseSamples reads a TS.RANGE reply, [[ms, "value"], ...], in RESP2 or
// RESP3.
func parseSamples(r any) ([]Point, error) {
	list, ok := r.([]any)
	if !ok {
		return nil, fmt.Errorf("recipes: unexpected range reply %T", r)
	}
	out := make([]Point, 0, len(list))
	for _, s := range list {
		pair, ok := s.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("recipes: unexpected sample %v", s)
		}
		ms, ok := pair[0].(int64)
		if !ok {
			return nil, fmt.Errorf("recipes: unexpected timestamp %v", pair[0])
		}
		v, err := sampleValue(pair[1])
		if err != nil {
			return nil, err
		}
		out = append(out, Point{T: time.UnixMilli(ms), V: v})
	}
	return out, nil
}
