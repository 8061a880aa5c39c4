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

	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// RedisVersion is the Redis version Abacus reports (INFO redis_version,
// HELLO, the fatal config error banner).
const RedisVersion = "7.4.0"

// Kind is a parameter's value type.
type Kind uint8

// Parameter kinds.
const (
	Bool   Kind = iota // yes|no
	Int                // integer with bounds
	Memory             // integer with units (1k, 5mb, 1gb)
	Enum               // one of a fixed list
	String             // free text, or arguments checked by Canon
)

// Param describes one configuration parameter.
type Param struct {
	Name    string
	Alias   string // old name also accepted (e.g. lua-time-limit)
	Kind    Kind
	Default string
	// Min and Max bound Int and Memory values (inclusive).
	Min, Max int64
	Enum     []string
	// Immutable parameters are only settable at startup; Protected ones
	// need enable-protected-configs (Redis's PROTECTED_CONFIG).
	Immutable, Protected bool
	// Multi parameters take several arguments (save 3600 1 300 100).
	Multi bool
	// Sensitive values (passwords) are not logged.
	Sensitive bool
	// Unsigned Memory values go up to 2^64-1 (maxmemory); Int reports
	// them saturated at MaxInt64.
	Unsigned bool
	// Percent Memory values also accept "N%"; Int reports them as -N.
	Percent bool
	// Octal Int values are written and read in base 8 (unixsocketperm).
	Octal bool
	// Canon validates a String parameter's arguments and returns the text
	// CONFIG GET shows; the error is Redis's reason.
	// cur is the current value: client-output-buffer-limit keeps the
	// classes a new value does not name.
	Canon func(cur string, args []string) (string, error)
	// Validate rejects a parsed value (any kind), seeing its canonical text.
	Validate func(v string) error
	// Apply runs on CONFIG SET once every value of the command is stored;
	// an error undoes the whole command.
	Apply func(v int64) error

	clampLo, clampHi int64 // values kept within (hz: 1..500), if set
	id               int
}

// ID returns the parameter's ID.
func (p *Param) ID() ID { return ID(p.id) }

// ID identifies a parameter within a Config.
type ID int

// Config is one server's configuration.
type Config struct {
	mu   sync.Mutex // serializes writers
	nums []atomic.Int64
	strs []atomic.Pointer[string]
	// File is the absolute path of the config file the server was started
	// with ("" when none); CONFIG REWRITE writes it.
	File string
	// Users are the config's "user" lines, kept for the ACL layer
	// (engine.Env.LoadUsers) with their line for its errors.
	Users []UserLine
	// OnChange is called after a successful Set of any parameter (under the
	// caller's lock), so that the server can apply it (for example hz).
	OnChange func(id ID)
	// Verify, when set, is asked after CONFIG SET stored its values
	// whether the server can apply a parameter's new value (TLS files
	// that load); an error undoes the whole CONFIG SET, as a Param's
	// Apply does.
	Verify func(id ID) error
}

// New returns a Config holding every parameter's default.
func New() *Config {
	c := &Config{nums: make([]atomic.Int64, len(table)), strs: make([]atomic.Pointer[string], len(table))}
	for _, p := range table {
		n, s, err := parse(p, "", fileArgs(p, p.Default))
		if err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", p.Name, err))
		}
		c.put(p, n, s)
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

func (c *Config) put(p *Param, n int64, s string) {
	c.nums[p.id].Store(n)
	c.strs[p.id].Store(&s)
}

// ValueError is a value that a parameter refuses; Msg is Redis's reason.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

func verr(format string, args ...any) error { return &ValueError{Msg: fmt.Sprintf(format, args...)} }

// Parse validates a CONFIG SET value for p given its current value cur,
// and returns its numeric form (for Bool, Int, Memory, Enum) and the
// canonical text CONFIG GET will show. A Multi parameter's value is split
// on single spaces, as CONFIG SET splits it.
func Parse(p *Param, cur, v string) (int64, string, error) {
	if !p.Multi {
		return parse(p, cur, []string{v})
	}
	var args []string
	if v != "" {
		args = strings.Split(v, " ")
	}
	return parse(p, cur, args)
}

// fileArgs splits a one-string value of a Multi parameter the way a config
// file line's single argument is split (quotes allowed; "" stays one empty
// argument).
func fileArgs(p *Param, v string) []string {
	if !p.Multi || v == "" {
		return []string{v}
	}
	split, ok := resp.SplitArgs([]byte(v), nil)
	if !ok {
		return []string{v}
	}
	args := make([]string, len(split))
	for i, a := range split {
		args[i] = string(a)
	}
	return args
}

func parse(p *Param, cur string, args []string) (int64, string, error) {
	if !p.Multi && len(args) != 1 {
		return 0, "", verr("wrong number of arguments")
	}
	n, s, err := parseValue(p, cur, args)
	if err != nil {
		return 0, "", err
	}
	if p.Validate != nil {
		if err := p.Validate(s); err != nil {
			return 0, "", err
		}
	}
	return n, s, nil
}

func parseValue(p *Param, cur string, args []string) (int64, string, error) {
	switch p.Kind {
	case Bool:
		switch strings.ToLower(args[0]) {
		case "yes":
			return 1, "yes", nil
		case "no":
			return 0, "no", nil
		}
		return 0, "", verr("argument must be 'yes' or 'no'")
	case Int:
		return parseInt(p, args[0])
	case Memory:
		return parseMemoryValue(p, args[0])
	case Enum:
		for i, e := range p.Enum {
			if strings.EqualFold(e, args[0]) {
				return int64(i), e, nil
			}
		}
		return 0, "", verr("argument(s) must be one of the following: %s", strings.Join(p.Enum, ", "))
	default:
		if p.Canon != nil {
			s, err := p.Canon(cur, args)
			return 0, s, err
		}
		return 0, strings.Join(args, " "), nil
	}
}

func parseInt(p *Param, v string) (int64, string, error) {
	var n int64
	var ok bool
	if p.Octal {
		u, err := strconv.ParseInt(v, 8, 64)
		n, ok = u, err == nil
	} else {
		n, ok = num.ParseInt([]byte(v))
	}
	if !ok {
		return 0, "", verr("argument couldn't be parsed into an integer")
	}
	if n < p.Min || n > p.Max {
		return 0, "", verr("argument must be between %d and %d inclusive", p.Min, p.Max)
	}
	if p.clampHi != 0 {
		n = max(p.clampLo, min(n, p.clampHi))
	}
	if p.Octal {
		return n, strconv.FormatInt(n, 8), nil
	}
	return n, strconv.FormatInt(n, 10), nil
}

func parseMemoryValue(p *Param, v string) (int64, string, error) {
	u, ok := memtoull(v)
	if !ok {
		if p.Percent && len(v) > 1 && v[len(v)-1] == '%' {
			if pct, ok := num.ParseInt([]byte(v[:len(v)-1])); ok && pct >= 0 {
				if pct > 100 {
					return 0, "", verr("percentage argument must be less or equal to 100")
				}
				if pct == 0 {
					return 0, "0", nil
				}
				return -pct, strconv.FormatInt(pct, 10) + "%", nil
			}
		}
		if p.Percent {
			return 0, "", verr("argument must be a memory or percent value")
		}
		return 0, "", verr("argument must be a memory value")
	}
	if p.Unsigned {
		n := int64(u)
		if u > maxInt64 {
			n = maxInt64
		}
		return n, strconv.FormatUint(u, 10), nil
	}
	n := int64(u) // values past MaxInt64 wrap negative and fail below, as in Redis
	if n < p.Min || n > p.Max {
		return 0, "", verr("argument must be between %d and %d inclusive", p.Min, p.Max)
	}
	if p.clampHi != 0 {
		n = max(p.clampLo, min(n, p.clampHi))
	}
	return n, strconv.FormatInt(n, 10), nil
}

// ParseMemory parses Redis's memory units: a plain number of bytes, or a
// number followed by b, k, kb, m, mb, g, gb (case-insensitive; k = 1000,
// kb = 1024). It reports false for values past MaxInt64.
func ParseMemory(v string) (int64, bool) {
	u, ok := memtoull(v)
	if !ok || u > maxInt64 {
		return 0, false
	}
	return int64(u), true
}

// memtoull is Redis's memtoull: digits then an optional unit. Like Redis it
// accepts an empty number as 0 and lets digits past 2^64 saturate and the
// unit's multiplication wrap.
func memtoull(v string) (uint64, bool) {
	if strings.HasPrefix(v, "-") {
		return 0, false
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(v[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	var n uint64
	if i > 0 {
		var err error
		n, err = strconv.ParseUint(v[:i], 10, 64)
		if err != nil {
			n = 1<<64 - 1 // strtoull saturates
		}
	}
	return n * mul, true
}

// Set validates and stores one value at startup (config file or command
// line), where immutable and protected parameters are allowed. A Multi
// parameter's value is split into arguments as a config file line's.
func (c *Config) Set(p *Param, v string) error {
	return c.SetArgs(p, fileArgs(p, v))
}

// SetArgs is Set for a value already split into arguments (a config file
// line's).
func (c *Config) SetArgs(p *Param, args []string) error {
	n, s, err := parse(p, c.Get(p), args)
	if err != nil {
		return err
	}
	c.commit(p, n, s)
	return nil
}

func (c *Config) commit(p *Param, n int64, s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(p, n, s)
	if c.OnChange != nil {
		c.OnChange(ID(p.id))
	}
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
// validated first and either all are applied or none is. local tells
// whether the client is on a loopback connection (enable-protected-configs
// local). The errors and their precedence are Redis 7.0's: the first bad
// name, immutable, protected or duplicate pair in argument order, then the
// first value that does not parse, then the first apply that fails.
func (c *Config) SetMany(pairs [][2]string, local bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	type parsed struct {
		p    *Param
		name string // the name as the table has it (canonical or alias)
		n    int64
		s    string
	}
	var (
		todo  []parsed
		first error
	)
	for _, kv := range pairs {
		p, ok := Lookup(kv[0])
		if !ok {
			if first == nil {
				first = &UnknownError{Name: kv[0]}
			}
			continue
		}
		if first != nil {
			continue
		}
		if p.Immutable {
			first = &SetError{Name: kv[0], Msg: "can't set immutable config"}
			continue
		}
		if p.Protected && !c.allowed(EnableProtectedConfigs, local) {
			first = &SetError{Name: kv[0], Msg: "can't set protected config"}
			continue
		}
		name := strings.ToLower(kv[0])
		for _, t := range todo {
			if t.name == name {
				first = &SetError{Name: kv[0], Msg: "duplicate parameter"}
			}
		}
		todo = append(todo, parsed{p: p, name: name, s: kv[1]})
	}
	if first != nil {
		return first
	}
	for i := range todo {
		n, s, err := Parse(todo[i].p, c.Get(todo[i].p), todo[i].s)
		if err != nil {
			return &SetError{Name: todo[i].name, Msg: err.Error()}
		}
		todo[i].n, todo[i].s = n, s
	}
	type saved struct {
		n int64
		s *string
	}
	old := make([]saved, len(todo))
	for i, t := range todo {
		old[i] = saved{c.nums[t.p.id].Load(), c.strs[t.p.id].Load()}
		c.put(t.p, t.n, t.s)
	}
	for _, t := range todo {
		var err error
		if t.p.Apply != nil {
			err = t.p.Apply(c.nums[t.p.id].Load())
		}
		if err == nil && c.Verify != nil {
			err = c.Verify(ID(t.p.id))
		}
		if err != nil {
			for i := len(todo) - 1; i >= 0; i-- {
				c.nums[todo[i].p.id].Store(old[i].n)
				c.strs[todo[i].p.id].Store(old[i].s)
			}
			return &SetError{Name: t.name, Msg: err.Error()}
		}
	}
	if c.OnChange != nil {
		for _, t := range todo {
			c.OnChange(ID(t.p.id))
		}
	}
	return nil
}

// Allowed reports whether a protected action gated by an enable-* enum
// parameter (no, yes, local) is allowed for a client; local tells whether
// it is on a loopback connection.
func (c *Config) Allowed(id ID, local bool) bool { return c.allowed(id, local) }

func (c *Config) allowed(id ID, local bool) bool {
	switch c.Str(id) {
	case "yes":
		return true
	case "local":
		return local
	}
	return false
}
