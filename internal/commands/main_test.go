package commands_test

import (
	"os"
	"testing"

	"github.com/abacusdb/abacus/internal/testenv"
)

// TestMain reports the tests skipped for a missing Redis program.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
