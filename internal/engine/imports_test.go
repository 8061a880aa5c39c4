package engine_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps the engine below the layers built on it: it must not
// depend on the command families, the metrics commands, durability or the
// connection layer (they import the engine, not the reverse).
func TestImports(t *testing.T) {
	const mod = "github.com/abacusdb/abacus/internal/"
	forbidden := []string{"command", "commands", "metrics", "durability", "conn", "servertest"}
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Import(path, ".", 0)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			for _, f := range forbidden {
				if imp == mod+f {
					t.Errorf("%s imports %s", path, imp)
				}
			}
			walk(imp)
		}
	}
	walk(mod + "engine")
}
