package command

// RegisterForTest lets the external tests of this package add commands
// that exist only in tests (a handler that panics, for instance).
func RegisterForTest(cmds ...*Command) { register(cmds...) }
