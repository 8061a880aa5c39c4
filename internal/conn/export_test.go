package conn

// WholePrepared is the count of commands prepared from the input in
// place (prepareWhole).
func WholePrepared() int64 { return wholePrepared.Load() }
