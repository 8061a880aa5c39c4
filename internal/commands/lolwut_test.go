package commands_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

var lolwutVersion = regexp.MustCompile(`Redis ver\. 7\.\d+\.\d+`)

// TestLolwutDiff: LOLWUT against redis-server, the version masked (Abacus
// answers as 7.4.0). Schotter with at most two rows of squares has no
// random part, so it is compared byte for byte; the skyline and taller
// Schotters are random on both, so only their shape is.
func TestLolwutDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	length := regexp.MustCompile(`^\$\d+\r\n`)
	d.Mask = func(s string) string {
		return length.ReplaceAllString(lolwutVersion.ReplaceAllString(s, "Redis ver. V"), "$$L\r\n")
	}
	d.Lines(`
LOLWUT
LOLWUT VERSION
LOLWUT 5
LOLWUT VERSION 7
LOLWUT VERSION 4
LOLWUT VERSION -1
LOLWUT VERSION x
LOLWUT VERSION 5 66 8 2
LOLWUT VERSION 5 40 4 1
LOLWUT VERSION 5 1 1 1
LOLWUT VERSION 5 2 1 2
LOLWUT VERSION 5 3 2 2
LOLWUT VERSION 5 -5 0 0
LOLWUT VERSION 5 1000 200 2
LOLWUT VERSION 5 77 13 2
LOLWUT VERSION 5 123 7 1
LOLWUT VERSION 5 abc
LOLWUT VERSION 5 10 x
LOLWUT VERSION 6 x
LOLWUT VERSION 6 10 y
LOLWUT version 4294967301 30 3 2
`)
	shape := func(c *servertest.Conn, args ...string) string {
		s := servertest.MustParse(t, c.Do(args...)).Str
		s = lolwutVersion.ReplaceAllString(s, "Redis ver. V")
		s = regexp.MustCompile(`[\x{2800}-\x{28ff}]`).ReplaceAllString(s, ".")
		return regexp.MustCompile(`\x1b\[0;\d+;\d+m \x1b\[0m`).ReplaceAllString(s, "#")
	}
	for _, args := range [][]string{
		{"LOLWUT", "VERSION", "5"},
		{"LOLWUT", "VERSION", "5", "30", "5", "7"},
		{"LOLWUT", "VERSION", "6"},
		{"LOLWUT", "VERSION", "6", "13", "5"},
		{"LOLWUT", "VERSION", "6", "1", "1"},
	} {
		a, r := shape(d.A, args...), shape(d.R, args...)
		if a != r {
			t.Errorf("%v: shapes differ\nabacus:\n%s\nredis:\n%s", args, a, r)
		}
		if args[2] == "6" && !strings.Contains(a, "#") {
			t.Errorf("%v: no pixel", args)
		}
	}
}
