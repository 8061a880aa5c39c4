// Package config holds the server's configuration parameters with Redis's
// names, defaults and validation, and implements what CONFIG GET/SET/REWRITE
// and the redis.conf-style file need.
//
// Each parameter is an entry of one table (params.go). Values are kept in
// atomics so that connection goroutines can read hot parameters (for
// example proto-max-bulk-len) without taking the server lock; writes happen
// under the server lock, one CONFIG SET at a time.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Kind is a parameter's value type.
type Kind uint8

// Parameter kinds.
const (
	Bool   Kind = iota // yes|no
	Int                // integer with bounds
	Memory             // integer with units (1k, 5mb, 1gb)
	Enum               // one of a fixed list
	String             // free text (may have a Check)
)

// Param describes one configuration parameter.
type Param struct {
	Name      string
	Alias     string // old name also accepted (e.g. lua-time-limit)
	Kind      Kind
	Default   string
	Min, Max  int64
	Enum      []string
	Immutable bool // only settable at startup
	// Check validates a String parameter's value; it returns Redis's reason
	// text on failure.
	Check func(v string) error
	id    int
}

// ID identifies a parameter within a Config.
type ID int

// Config is one server's configuration.
type Config struct {
	mu   sync.Mutex // serializes writers
	nums []atomic.Int64
	strs []atomic.Pointer[string]
	// OnChange is called after a successful Set of any parameter (under the
	// caller's lock), so that the server can apply it (for example hz).
	OnChange func(id ID)
}

// New returns a Config holding every parameter's default.
func New() *Config {
	c := &Config{nums: make([]atomic.Int64, len(table)), strs: make([]atomic.Pointer[string], len(table))}
	for _, p := range table {
		if err := c.store(p, p.Default); err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", p.Name, err))
		}
	}
	return c
}

// Lookup finds a parameter by name or alias, case-insensitively.
func Lookup(name string) (*Param, bool) {
	p, ok := byName[strings.ToLower(name)]
	return p, ok
}

// Params lists every parameter in table order.
func Params() []*Param { return table }

// Int returns a numeric, memory, boolean (1/0) or enum (index) parameter.
func (c *Config) Int(id ID) int64 { return c.nums[id].Load() }

// Bool returns a boolean parameter.
func (c *Config) Bool(id ID) bool { return c.nums[id].Load() != 0 }

// Str returns a parameter's value as CONFIG GET shows it.
func (c *Config) Str(id ID) string { return *c.strs[id].Load() }

// Get returns the CONFIG GET form of a parameter.
func (c *Config) Get(p *Param) string { return *c.strs[p.id].Load() }

// ValueError is a value that a parameter refuses; Msg is Redis's reason.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

func verr(format string, args ...any) error { return &ValueError{Msg: fmt.Sprintf(format, args...)} }

// Parse validates v for p and returns its numeric form (for Bool, Int,
// Memory, Enum) and the canonical text CONFIG GET will show.
func Parse(p *Param, v string) (int64, string, error) {
	switch p.Kind {
	case Bool:
		switch strings.ToLower(v) {
		case "yes":
			return 1, "yes", nil
		case "no":
			return 0, "no", nil
		}
		return 0, "", verr("argument must be 'yes' or 'no'")
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, "", verr("argument couldn't be parsed into an integer")
		}
		if n < p.Min || n > p.Max {
			return 0, "", verr("argument must be between %d and %d inclusive", p.Min, p.Max)
		}
		return n, strconv.FormatInt(n, 10), nil
	case Memory:
		n, ok := ParseMemory(v)
		if !ok {
			return 0, "", verr("argument must be a memory value")
		}
		if n < p.Min || n > p.Max {
			return 0, "", verr("argument must be between %d and %d inclusive", p.Min, p.Max)
		}
		return n, strconv.FormatInt(n, 10), nil
	case Enum:
		for i, e := range p.Enum {
			if strings.EqualFold(e, v) {
				return int64(i), e, nil
			}
		}
		return 0, "", verr("argument(s) must be one of the following: %s", strings.Join(p.Enum, ", "))
	default:
		if p.Check != nil {
			if err := p.Check(v); err != nil {
				return 0, "", err
			}
		}
		return 0, v, nil
	}
}

func (c *Config) store(p *Param, v string) error {
	n, s, err := Parse(p, v)
	if err != nil {
		return err
	}
	c.nums[p.id].Store(n)
	c.strs[p.id].Store(&s)
	return nil
}

// Set validates and stores one value at startup (config file or command
// line), where immutable parameters are allowed.
func (c *Config) Set(p *Param, v string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.store(p, v); err != nil {
		return err
	}
	if c.OnChange != nil {
		c.OnChange(ID(p.id))
	}
	return nil
}

// SetError is a failed CONFIG SET: the parameter it names and the reason.
type SetError struct {
	Name string
	Msg  string
}

func (e *SetError) Error() string {
	return fmt.Sprintf("CONFIG SET failed (possibly related to argument '%s') - %s", e.Name, e.Msg)
}

// UnknownError is CONFIG SET of a name that does not exist.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("Unknown option or number of arguments for CONFIG SET - '%s'", e.Name)
}

// SetMany is CONFIG SET with several name/value pairs: every pair is
// validated first and either all are applied or none is.
func (c *Config) SetMany(pairs [][2]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	type parsed struct {
		p *Param
		n int64
		s string
	}
	seen := map[*Param]bool{}
	var todo []parsed
	for _, kv := range pairs {
		p, ok := Lookup(kv[0])
		if !ok {
			return &UnknownError{Name: kv[0]}
		}
		if seen[p] {
			return &SetError{Name: kv[0], Msg: "duplicate parameter"}
		}
		seen[p] = true
		if p.Immutable {
			return &SetError{Name: kv[0], Msg: "can't set immutable config"}
		}
		n, s, err := Parse(p, kv[1])
		if err != nil {
			return &SetError{Name: kv[0], Msg: err.Error()}
		}
		todo = append(todo, parsed{p, n, s})
	}
	for _, t := range todo {
		c.nums[t.p.id].Store(t.n)
		s := t.s
		c.strs[t.p.id].Store(&s)
	}
	if c.OnChange != nil {
		for _, t := range todo {
			c.OnChange(ID(t.p.id))
		}
	}
	return nil
}

// ParseMemory parses Redis's memory units: a plain number of bytes, or a
// number followed by k, kb, m, mb, g, gb (case-insensitive; k = 1000,
// kb = 1024).
func ParseMemory(v string) (int64, bool) {
	s := strings.ToLower(v)
	mul := int64(1)
	for _, u := range []struct {
		suf string
		mul int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mul = s[:len(s)-len(u.suf)], u.mul
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	if mul > 1 && n > (1<<63-1)/mul {
		return 0, false
	}
	return n * mul, true
}
