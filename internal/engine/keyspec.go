package engine

import (
	"strings"

	"github.com/abacusdb/abacus/internal/num"
)

// KeySpec is one of a command's key specifications, as Redis 7.0
// describes keys in COMMAND INFO: where the search for its keys begins
// (an argument index, or the argument after a keyword) and how the keys
// are found from there (a range, or a count argument), with flags that
// say what the command does to them.
type KeySpec struct {
	Notes string
	Flags string // e.g. "RW access update"
	// Begin search: Index > 0 begins at that argument; Keyword begins
	// after that keyword, searched from StartFrom (negative: from the
	// end, backwards); neither is an unknown begin.
	Index     int
	Keyword   string
	StartFrom int
	// Find: a range (LastKey relative to the first key, negative from
	// the end; KeyStep; Limit divides what is left), a keynum (the count
	// at KeynumIdx after the begin, the keys FirstKey after it), or
	// unknown.
	Find      FindKind
	LastKey   int
	KeyStep   int
	Limit     int
	KeynumIdx int
	FirstKey  int
}

// FindKind is how a key spec finds its keys.
type FindKind uint8

const (
	FindRange FindKind = iota
	FindKeynum
	FindUnknown
)

// Known reports whether both the begin search and the find are known
// and the spec finds every key (not flagged incomplete).
func (k *KeySpec) Known() bool {
	return (k.Index > 0 || k.Keyword != "") && k.Find != FindUnknown && !strings.Contains(k.Flags, "incomplete")
}

// KeySpecs returns c's key specs: those set in the table, or the ones
// its key positions imply (a range spec for First/Last/Step, the Keyword
// spec, an unknown one for keys only its Keys function finds).
func (c *Command) KeySpecs() []KeySpec {
	if c.Specs != nil {
		return c.Specs
	}
	flags := c.KeyFlags
	if flags == "" {
		switch {
		case c.Flags&FlagWrite != 0:
			flags = "RW update"
		case c.Flags&FlagReadonly != 0:
			flags = "RO access"
		default:
			flags = "RO"
		}
	}
	var out []KeySpec
	if c.First != 0 {
		last := c.Last
		if last > 0 {
			last -= c.First
		}
		out = append(out, KeySpec{Flags: flags, Index: c.First, LastKey: last, KeyStep: max(c.Step, 1)})
	}
	if k := c.Keyword; k != nil {
		out = append(out, KeySpec{Flags: flags, Keyword: k.Keyword, StartFrom: k.StartFrom,
			LastKey: k.LastKey, KeyStep: k.Step, Limit: k.Limit})
	} else if c.Keys != nil {
		out = append(out, KeySpec{Flags: flags, Find: FindUnknown})
	}
	return out
}

// KeyRef is a key's position in a command's arguments and the flags of
// the key spec that found it.
type KeyRef struct {
	Pos   int
	Flags string
}

// KeysWithFlags returns the keys of args (a whole command, its name
// first) with their spec's flags, as COMMAND GETKEYSANDFLAGS reports
// them: found through the key specs when they are all known and their
// flags fixed (Redis's getKeysUsingKeySpecs), else the positions the
// command's key extraction gives, each with the flags of the spec that
// covers it (or of the first spec that cannot say). ok is false when the
// arguments do not fit the specs.
func (c *Command) KeysWithFlags(args [][]byte) (keys []KeyRef, ok bool) {
	specs := c.KeySpecs()
	known, varFlags := true, false
	for i := range specs {
		known = known && specs[i].Known()
		varFlags = varFlags || strings.Contains(specs[i].Flags, "variable_flags")
	}
	if known && !varFlags {
		keys, ok = specKeys(specs, args, false)
		if ok {
			return keys, true
		}
	}
	if c.Keys == nil && c.First == 0 {
		return nil, known
	}
	covered, _ := specKeys(specs, args, true)
	varf := variableFlags(c.Name, args)
	for n, p := range c.KeyIndexes(args) {
		f := varf
		if f == "" {
			f = procFlags(c, specs, n)
			for _, k := range covered {
				if k.Pos == p {
					f = k.Flags
					break
				}
			}
		}
		keys = append(keys, KeyRef{Pos: p, Flags: f})
	}
	return keys, true
}

// procFlags are the flags Redis's key-finding function of a command with
// incomplete specs gives its n-th key when no known spec covers it: the
// STORE destination of SORT is written over, the others take the first
// spec's flags.
func procFlags(c *Command, specs []KeySpec, n int) string {
	if c.Name == "sort" && n > 0 {
		return "OW update"
	}
	if len(specs) == 0 {
		return ""
	}
	return strings.ReplaceAll(specs[0].Flags, " incomplete", "")
}

// specKeys applies known specs to args; partial skips the specs that do
// not apply instead of failing.
func specKeys(specs []KeySpec, args [][]byte, partial bool) ([]KeyRef, bool) {
	var out []KeyRef
	argc := len(args)
	for si := range specs {
		k := &specs[si]
		if !k.Known() {
			if partial {
				continue
			}
			return nil, false
		}
		first := 0
		if k.Index > 0 {
			first = k.Index
		} else {
			start, end := k.StartFrom, argc-1
			if start <= 0 {
				start, end = argc+k.StartFrom, 0
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if strings.EqualFold(string(args[i]), k.Keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue // keyword absent: this spec has no keys here
			}
		}
		var last, step int
		switch k.Find {
		case FindRange:
			step = k.KeyStep
			switch {
			case k.LastKey >= 0:
				last = first + k.LastKey
			case k.Limit == 0:
				last = argc + k.LastKey
			default:
				last = first + ((argc-first)/k.Limit + k.LastKey)
			}
		case FindKeynum:
			step = k.KeyStep
			if k.KeynumIdx >= argc-first {
				if partial {
					continue
				}
				return nil, false
			}
			n, isNum := num.ParseInt(args[first+k.KeynumIdx])
			if !isNum || n < 0 || n > int64(argc) {
				if partial {
					continue
				}
				return nil, false
			}
			first += k.FirstKey
			last = first + int(n) - 1
		}
		if last >= argc || last < first || first >= argc {
			if partial {
				continue
			}
			return nil, false
		}
		for i := first; i <= last; i += max(step, 1) {
			out = append(out, KeyRef{Pos: i, Flags: k.Flags})
		}
	}
	return out, true
}

// variableFlags are the flags of the keys of a command whose key spec
// says variable_flags, as its arguments decide them (Redis's setGetKeys
// and bitfieldGetKeys); "" for other commands.
func variableFlags(name string, args [][]byte) string {
	switch name {
	case "set":
		for _, a := range args[min(3, len(args)):] {
			if strings.EqualFold(string(a), "get") {
				return "RW access update"
			}
		}
		return "OW update"
	case "bitfield":
		for i := 2; i < len(args); i++ {
			left := len(args) - i - 1
			a := string(args[i])
			switch {
			case strings.EqualFold(a, "get") && left >= 2:
				i += 2
			case (strings.EqualFold(a, "set") || strings.EqualFold(a, "incrby")) && left >= 3:
				return "RW access update"
			case strings.EqualFold(a, "overflow") && left >= 1:
				i++
			default:
				return "RW access update" // a syntax error: assume it writes
			}
		}
		return "RO access"
	}
	return ""
}
