package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// TestMetricsExamples runs the examples of docs/metrics.md as they are
// written. Each "## " section runs on a fresh server whose clock starts
// at unix time 1700000000 (22:13:20 UTC, where the examples are set); in
// the indented example blocks, in order:
//
//   - a line starting with a command name is sent (placeholders such as
//     <owner-id> become a fixed word; text after two or more spaces is a
//     note or a second column, not part of the command);
//   - a note that reads like a reply ("(integer) 5", "OK", "(nil)", a
//     quoted string) is compared with the reply;
//   - the lines after a command that read like redis-cli's output ("1) ",
//     "(integer) " ...) are compared with the reply as redis-cli prints it
//     (the first column, each line up to its note);
//   - "... 20 s later ..." and "... 6 minutes later ..." move the clock.
//
// The Redis way's examples (the blocks after a paragraph starting "The
// Redis way") run in database 1, the Abacus way's in 0, as they use the
// same key names. What the prose says happened before an example is
// replayed from HTML comments beside it, invisible when the document is
// rendered: <!-- test: at <ms> CMD args --> sends a command with the
// clock at that unix ms time (and leaves it there), <!-- test: CMD args
// --> sends one, <!-- test: skip --> leaves the next block out (an
// illustration that the prose then describes differently).
func TestMetricsExamples(t *testing.T) {
	b, err := os.ReadFile("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := strings.Split("\n"+string(b), "\n## ")
	ran := 0
	for _, sec := range sections[1:] {
		title, body, _ := strings.Cut(sec, "\n")
		t.Run(title, func(t *testing.T) { ran += runMetricsSection(t, title, body) })
	}
	t.Logf("%d example commands ran", ran)
	if ran < 40 {
		t.Errorf("only %d example commands ran", ran)
	}
}

var (
	placeholderRE = regexp.MustCompile(`<[^<>]*>`)
	laterRE       = regexp.MustCompile(`^\.\.\. (\d+) (s|seconds|minutes?|hours?) later \.\.\.$`)
	noteRE        = regexp.MustCompile(`\s{2,}`)
	replyLineRE   = regexp.MustCompile(`^(\d+\) |\(integer\) |\(nil\)$|\(empty array\)$|OK$|"|\(error\) )`)
	directiveRE   = regexp.MustCompile(`^<!-- test: (.*) -->$`)
)

// splitArgs splits a command line as redis-cli does for the simple cases
// the document has: words, and double-quoted strings without escapes.
func splitArgs(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			if j := strings.IndexByte(s[1:], '"'); j >= 0 {
				out = append(out, s[1:1+j])
				s = s[2+j:]
				continue
			}
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
	return out
}

// firstColumn is a line up to its note or second column, keeping its
// indentation.
func firstColumn(l string) string {
	body := strings.TrimLeft(l, " ")
	return strings.TrimRight(l[:len(l)-len(body)]+noteRE.Split(body, 2)[0], " ")
}

func runMetricsSection(t *testing.T, title, body string) int {
	inst := servertest.Start(t, servertest.WithManualClock(quickStartNow))
	c := inst.Raw(t)
	ran := 0
	// Indented lines are examples; a line of prose ends a block.
	type line struct {
		text  string
		prose bool
	}
	var lines []line
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "    "):
			lines = append(lines, line{text: l[4:]})
		case strings.TrimSpace(l) != "":
			lines = append(lines, line{text: l, prose: true})
		}
	}
	skip := false
	for i := 0; i < len(lines); i++ {
		if lines[i].prose {
			l := lines[i].text
			switch {
			case strings.HasPrefix(l, "The Redis way"):
				c.Do("SELECT", "1")
			case strings.HasPrefix(l, "The Abacus way"):
				c.Do("SELECT", "0")
			}
			if m := directiveRE.FindStringSubmatch(l); m != nil {
				d := m[1]
				switch {
				case d == "skip":
					skip = true
				case strings.HasPrefix(d, "at "):
					at, rest, _ := strings.Cut(d[3:], " ")
					ms, err := strconv.ParseInt(at, 10, 64)
					if err != nil {
						t.Fatalf("directive %q", d)
					}
					inst.Clock.Set(ms)
					c.Do(splitArgs(rest)...)
				default:
					c.Do(splitArgs(d)...)
				}
			} else if !strings.HasPrefix(l, "<!--") {
				skip = false
			}
			continue
		}
		if skip {
			continue
		}
		l := strings.TrimRight(lines[i].text, " ")
		if m := laterRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour}[m[2][0]]
			inst.Clock.Advance(time.Duration(n) * unit)
			continue
		}
		parts := noteRE.Split(l, 2)
		args := splitArgs(placeholderRE.ReplaceAllString(parts[0], "x"))
		if len(args) == 0 || args[0] != strings.ToUpper(args[0]) || engine.Lookup([]byte(args[0])) == nil {
			continue
		}
		got := c.Do(args...)
		ran++
		if strings.HasPrefix(got, "-ERR unknown command") || strings.Contains(got, "syntax error") || strings.Contains(got, "wrong number of arguments") {
			t.Errorf("%s: %q: %q", title, l, got)
			continue
		}
		shown := cliFormat(t, got)
		if len(parts) == 2 && replyLineRE.MatchString(parts[1]) {
			if want := parts[1]; want != shown {
				t.Errorf("%s: %q replies %q, the document says %q", title, l, shown, want)
			}
			continue
		}
		var want []string
		for i+1 < len(lines) && !lines[i+1].prose && replyLineRE.MatchString(strings.TrimLeft(lines[i+1].text, " ")) {
			i++
			want = append(want, firstColumn(lines[i].text))
		}
		if want != nil && strings.Join(want, "\n") != shown {
			t.Errorf("%s: %q replies\n%s\nthe document says\n%s", title, l, shown, strings.Join(want, "\n"))
		}
	}
	return ran
}

// cliFormat is a RESP2 reply as redis-cli shows it on a terminal.
func cliFormat(t *testing.T, raw string) string {
	return strings.Join(cliLines(servertest.MustParse(t, raw)), "\n")
}

func cliLines(r servertest.Reply) []string {
	switch r.Kind {
	case ':':
		return []string{"(integer) " + r.Str}
	case '+':
		return []string{r.Str}
	case '-':
		return []string{"(error) " + r.Str}
	case '$':
		if r.Null {
			return []string{"(nil)"}
		}
		return []string{strconv.Quote(r.Str)}
	case '*':
		if r.Null {
			return []string{"(nil)"}
		}
		if len(r.Items) == 0 {
			return []string{"(empty array)"}
		}
		var out []string
		w := len(strconv.Itoa(len(r.Items)))
		for i, it := range r.Items {
			prefix := fmt.Sprintf("%*d) ", w, i+1)
			for j, l := range cliLines(it) {
				if j == 0 {
					out = append(out, prefix+l)
				} else {
					out = append(out, strings.Repeat(" ", len(prefix))+l)
				}
			}
		}
		return out
	}
	return []string{r.Str}
}
