package docs_test

import (
	"os"
	"testing"

	"github.com/abacusdb/abacus/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
