package docs_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// quickStartNow is the time the README's quick start shows (unix ms).
const quickStartNow = 1_700_000_000_000

// fence is one fenced code block: its info string and its text.
type fence struct{ lang, text string }

// section returns the text of the markdown section headed title (up to
// the next heading of the same level).
func section(t *testing.T, doc, title string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+title+"\n")
	if i < 0 {
		t.Fatalf("no section %q", title)
	}
	rest := doc[i+len(title)+2:]
	level := title[:strings.Index(title, " ")+1]
	if j := strings.Index(rest, "\n"+level); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

var fenceRE = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")

func fences(s string) []fence {
	var out []fence
	for _, m := range fenceRE.FindAllStringSubmatch(s, -1) {
		out = append(out, fence{m[1], m[2]})
	}
	return out
}

// quickStartServer is a server on the quick start's clock; its port.
func quickStartServer(t *testing.T) string {
	inst := servertest.Start(t, servertest.WithManualClock(quickStartNow))
	_, port, _ := net.SplitHostPort(inst.Addr)
	return port
}

// TestReadmeQuickStart runs the README's quick start: each redis-cli
// command with redis-cli, the redis-py program with Python, the go-redis
// program (examples/quickstart, which the README shows whole) with go
// run, each against a fresh server whose clock stands at the time the
// README shows; the output must be what the README prints.
func TestReadmeQuickStart(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := fences(section(t, string(b), "## Quick start: metrics"))
	if len(fs) != 5 || fs[0].lang != "console" || fs[1].lang != "python" || fs[2].lang != "text" || fs[3].lang != "go" || fs[4].lang != "text" {
		t.Fatalf("the quick start's code blocks are not console, python, text, go, text: %+v", fs)
	}
	t.Run("redis-cli", func(t *testing.T) { runCLI(t, fs[0].text) })
	t.Run("redis-py", func(t *testing.T) {
		py := pythonWithRedis(t)
		port := quickStartServer(t)
		src := strings.Replace(fs[1].text, "port=6379", "port="+port, 1)
		cmd := exec.Command(py, "-")
		cmd.Stdin = strings.NewReader(src)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		if string(out) != fs[2].text {
			t.Errorf("redis-py prints:\n%s\nthe README says:\n%s", out, fs[2].text)
		}
	})
	t.Run("go-redis", func(t *testing.T) {
		src, err := os.ReadFile("../examples/quickstart/main.go")
		if err != nil {
			t.Fatal(err)
		}
		if string(src) != fs[3].text {
			t.Fatalf("the README's go-redis program is not examples/quickstart/main.go")
		}
		port := quickStartServer(t)
		out, err := exec.Command("go", "run", "../examples/quickstart", "-addr", "127.0.0.1:"+port).CombinedOutput()
		if err != nil {
			t.Fatalf("go run: %v\n%s", err, out)
		}
		if string(out) != fs[4].text {
			t.Errorf("examples/quickstart prints:\n%s\nthe README says:\n%s", out, fs[4].text)
		}
	})
}

// runCLI runs a redis-cli session as the README shows it: each
// "127.0.0.1:6379> " line with redis-cli (as a terminal shows replies),
// the lines after it its expected reply.
func runCLI(t *testing.T, session string) {
	testenv.NeedRedis(t) // redis-cli comes with redis-server
	port := quickStartServer(t)
	const prompt = "127.0.0.1:6379> "
	lines := strings.Split(strings.TrimSuffix(session, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "$ redis-cli" {
		t.Fatalf("the session does not start with $ redis-cli")
	}
	for i := 1; i < len(lines); {
		if !strings.HasPrefix(lines[i], prompt) {
			t.Fatalf("line %q: a command was expected", lines[i])
		}
		args := strings.Fields(strings.TrimPrefix(lines[i], prompt))
		var want []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], prompt); i++ {
			want = append(want, lines[i])
		}
		cmd := exec.Command("redis-cli", append([]string{"-p", port, "--no-raw"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out.String())
		}
		if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
			t.Errorf("%v replies:\n%s\nthe README says:\n%s", args, got, strings.Join(want, "\n"))
		}
	}
}

// pythonWithRedis is a Python that has redis-py (Debian's python3-redis),
// or the test skips (fails where testenv requires the tools).
func pythonWithRedis(t *testing.T) string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import redis").Run() == nil {
			return py
		}
	}
	if testenv.Required() {
		t.Fatal("no python3 with redis-py (python3-redis)")
	}
	t.Skip("no python3 with redis-py (python3-redis)")
	return ""
}
