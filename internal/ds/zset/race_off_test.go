//go:build !race

package zset

const deepRace = false
