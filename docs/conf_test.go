package docs_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
)

// TestSampleConfig: the sample abacus.conf at the repository's root loads,
// every parameter it sets has its default (it documents them), and every
// parameter Abacus knows is in it, set or commented out.
func TestSampleConfig(t *testing.T) {
	const path = "../abacus.conf"
	cfg, err := config.FromArgs([]string{path})
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range config.Params() {
		if got, want := cfg.Get(p), config.DefaultValue(p); got != want {
			t.Errorf("%s: the sample sets %q, the default is %q", p.Name, got, want)
		}
		if !regexp.MustCompile(`(?m)^(# )?` + regexp.QuoteMeta(p.Name) + ` `).Match(text) {
			t.Errorf("%s is not in %s: add it (set to its default, or commented out) in its section", p.Name, path)
		}
	}
}
