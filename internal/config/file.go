package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/abacusdb/abacus/internal/resp"
)

// FatalBanner heads a configuration error on stderr, as redis-server's.
const FatalBanner = "*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***"

// Args is what the command line says about configuration, read the way
// redis-server 7 reads it: `abacus [/path/to/abacus.conf] [options] [-]`.
type Args struct {
	// File is the config file's absolute path ("" when none).
	File string
	// Stdin asks for configuration lines on standard input ("-").
	Stdin bool
	// Options are the "--name value ..." arguments rendered as config
	// lines; they are read after the file and stdin, so they win.
	Options string
}

// ParseArgs reads a command line (without the program name). Like
// redis-server, a first argument not starting with '-' is the config file;
// "--name" starts a directive whose values are the arguments up to the next
// "--name" ("--save" alone means save ""); "-" as the first or last argument
// reads stdin. It does not handle --version and --help.
func ParseArgs(argv []string) (Args, error) {
	var a Args
	j := 0
	if len(argv) > 0 && !strings.HasPrefix(argv[0], "-") {
		abs, err := filepath.Abs(argv[0])
		if err != nil {
			return a, err
		}
		a.File = abs
		j = 1
	}
	var opts strings.Builder
	handledLast := true
	last := len(argv) - 1
	for ; j < len(argv); j++ {
		arg := argv[j]
		switch {
		case arg == "-" && (j == 0 || j == last):
			a.Stdin = true
		case handledLast && strings.HasPrefix(arg, "--"):
			if opts.Len() > 0 {
				opts.WriteByte('\n')
			}
			opts.WriteString(arg[2:])
			opts.WriteByte(' ')
			split, _ := resp.SplitArgs([]byte(arg), nil)
			if len(split) != 1 {
				// "--port 6380" as one argument carries its value.
				handledLast = true
				break
			}
			handledLast = false
			isSave := strings.EqualFold(arg, "--save")
			if isSave && (j == last || strings.HasPrefix(argv[j+1], "--")) {
				opts.WriteString(`""`)
				handledLast = j != last
			}
		default:
			opts.WriteString(Repr(arg))
			opts.WriteByte(' ')
			handledLast = true
		}
	}
	a.Options = opts.String()
	return a, nil
}

// FileError is a bad line of configuration, worded as redis-server words
// it: the line number, the line, and the reason.
type FileError struct {
	Line int
	Text string
	Msg  string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("Reading the configuration file, at line %d\n>>> '%s'\n%s", e.Line, e.Text, e.Msg)
}

// UserLine is a "user <name> <rules...>" line of the config.
type UserLine struct {
	Line int
	Text string
	Args []string // the name, then the rules
}

// OpenError is a config file that cannot be read.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("Fatal error, can't open config file '%s': %s", e.Path, ErrnoText(e.Err))
}

func (e *OpenError) Unwrap() error { return e.Err }

// FromArgs builds a configuration from a command line, reading stdin when
// it says "-".
func FromArgs(argv []string) (*Config, error) {
	a, err := ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	c := New()
	if err := c.Load(a, os.Stdin); err != nil {
		return nil, err
	}
	return c, nil
}

// Load applies configuration from the file, then stdin (when a.Stdin),
// then the command-line options, as one text whose line numbers the errors
// report (the options start after a blank line, as in Redis). It records
// the file for CONFIG REWRITE.
func (c *Config) Load(a Args, stdin io.Reader) error {
	var text strings.Builder
	if a.File != "" {
		data, err := os.ReadFile(a.File)
		if err != nil {
			return &OpenError{Path: a.File, Err: err}
		}
		text.Write(data)
		c.File = a.File
	}
	if a.Stdin && stdin != nil {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		text.Write(data)
	}
	text.WriteByte('\n')
	text.WriteString(a.Options)
	l := loader{c: c}
	return l.load(text.String(), 0)
}

// LoadString applies configuration lines (tests, includes).
func (c *Config) LoadString(text string) error {
	l := loader{c: c}
	return l.load(text, 0)
}

// Directives Redis 7 still accepts and ignores.
var deprecated = map[string]bool{
	"list-max-ziplist-entries": true,
	"list-max-ziplist-value":   true,
	"lua-replicate-commands":   true,
}

type loader struct {
	c        *Config
	saveSeen bool
}

const maxIncludeDepth = 16

func (l *loader) load(text string, depth int) error {
	for n, raw := range strings.Split(text, "\n") {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(msg string) error { return &FileError{Line: n + 1, Text: line, Msg: msg} }
		split, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(split) == 0 {
			continue
		}
		name := strings.ToLower(string(split[0]))
		args := make([]string, len(split)-1)
		for i, a := range split[1:] {
			args[i] = string(a)
		}
		if p, ok := Lookup(name); ok {
			if !p.Multi && len(args) != 1 {
				return fail("wrong number of arguments")
			}
			if p.Multi && len(args) == 1 && args[0] != "" {
				// One argument holding several: --save "60 10".
				args = fileArgs(p, args[0])
			}
			if p.id == int(Save) {
				args = l.saveArgs(args)
			}
			if err := l.c.SetArgs(p, args); err != nil {
				return fail(err.Error())
			}
			continue
		}
		if deprecated[name] {
			continue
		}
		if name == "user" && len(args) >= 1 {
			l.c.Users = append(l.c.Users, UserLine{Line: n + 1, Text: line, Args: args})
			continue
		}
		if name == "include" && len(args) == 1 {
			if depth >= maxIncludeDepth {
				return fail("include nesting is too deep")
			}
			if err := l.include(args[0], depth+1); err != nil {
				return err
			}
			continue
		}
		return fail("Bad directive or wrong number of arguments")
	}
	return nil
}

// saveArgs implements how redis.conf reads several save lines: the first
// replaces the default, the next ones add save points, and save "" clears.
func (l *loader) saveArgs(args []string) []string {
	first := !l.saveSeen
	l.saveSeen = true
	if first || (len(args) == 1 && args[0] == "") {
		return args
	}
	return append(strings.Fields(l.c.Str(Save)), args...)
}

// include reads another file (or every file a wildcard matches, in name
// order; none is not an error), with its own line numbers.
func (l *loader) include(path string, depth int) error {
	paths := []string{path}
	if strings.ContainsAny(path, "*?[") {
		m, err := filepath.Glob(path)
		if err != nil {
			return &OpenError{Path: path, Err: err}
		}
		sort.Strings(m)
		paths = m
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return &OpenError{Path: p, Err: err}
		}
		if err := l.load(string(data), depth); err != nil {
			return err
		}
	}
	return nil
}

// Repr quotes s the way Redis's sdscatrepr does: double quotes, C escapes
// for \ " \n \r \t \a \b, and \xHH for other unprintable bytes.
func Repr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
