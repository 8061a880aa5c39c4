package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/abacusdb/abacus/internal/resp"
)

// FromArgs builds a configuration the way redis-server reads its command
// line: an optional config file first, then "--name value ..." pairs that
// override it.
func FromArgs(args []string) (*Config, error) {
	c := New()
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		if err := c.LoadFile(args[0]); err != nil {
			return nil, err
		}
		args = args[1:]
	}
	for i := 0; i < len(args); {
		if !strings.HasPrefix(args[i], "--") {
			return nil, fmt.Errorf("invalid argument %q: options are --name value", args[i])
		}
		name := args[i][2:]
		var vals []string
		i++
		for i < len(args) && !strings.HasPrefix(args[i], "--") {
			vals = append(vals, args[i])
			i++
		}
		if err := c.apply("command line", 0, name, strings.Join(vals, " ")); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadFile reads a redis.conf-style file: one "name value..." per line,
// '#' comments, quoted arguments, and include directives.
func (c *Config) LoadFile(path string) error {
	return c.loadFile(path, 0)
}

func (c *Config) loadFile(path string, depth int) error {
	if depth > 10 {
		return fmt.Errorf("include nesting too deep at %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("Fatal error, can't open config file '%s': %v", path, err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		argv, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			return fmt.Errorf("Reading the configuration file, at line %d\n>>> '%s'\nUnbalanced quotes in configuration line", n+1, line)
		}
		if len(argv) == 0 {
			continue
		}
		name := strings.ToLower(string(argv[0]))
		var vals []string
		for _, a := range argv[1:] {
			vals = append(vals, string(a))
		}
		if name == "include" {
			if len(vals) != 1 {
				return fmt.Errorf("Reading the configuration file, at line %d\n>>> '%s'\nwrong number of arguments", n+1, line)
			}
			if err := c.loadFile(vals[0], depth+1); err != nil {
				return err
			}
			continue
		}
		if err := c.apply(path, n+1, name, strings.Join(vals, " ")); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) apply(where string, line int, name, value string) error {
	p, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("Reading the configuration file, at line %d (%s)\n>>> '%s %s'\nBad directive or wrong number of arguments", line, where, name, value)
	}
	if err := c.Set(p, value); err != nil {
		return fmt.Errorf("Reading the configuration file, at line %d (%s)\n>>> '%s %s'\n%v", line, where, name, value, err)
	}
	return nil
}
