package engine_test

// The engine's external tests run real commands: link the families.
import (
	_ "github.com/abacusdb/abacus/internal/commands"
	_ "github.com/abacusdb/abacus/internal/metrics"
)
