//go:build !unix

package config

func applyMaxClients(int64) error { return nil }
