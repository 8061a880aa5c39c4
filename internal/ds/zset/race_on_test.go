//go:build race

package zset

// deepRace is set when the race detector is on.
const deepRace = true
