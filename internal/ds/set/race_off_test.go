//go:build !race

package set

const raceEnabled = false
