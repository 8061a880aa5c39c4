package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
)

// Errors of the rule grammar, with Redis's texts (ACLSetUserStringError).
var (
	ErrUnknown      = errors.New("Unknown command or category name in ACL")
	ErrSyntax       = errors.New("Syntax error")
	ErrKeyAfterAll  = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChanAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPass   = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrDuplicate    = errors.New("Duplicate user found. A user can only be defined once in config files")
	ErrSubFirstArg  = errors.New("Allowing first-arg of a subcommand is not supported")
)

// Key pattern permissions.
const (
	permRead  = NeedRead
	permWrite = NeedWrite
	permAll   = permRead | permWrite
)

type keyPattern struct {
	pattern string
	perm    int
	// prefix is the pattern's literal start (up to its first *, ?, [ or
	// \): a key without it cannot match, which most keys show at once.
	prefix string
	// prefixOnly: the pattern is its prefix and one trailing '*' (the
	// usual "app:*"), so the prefix decides.
	prefixOnly bool
}

func newKeyPattern(p string, perm int) keyPattern {
	i := strings.IndexAny(p, "*?[\\")
	if i < 0 {
		i = len(p)
	}
	return keyPattern{pattern: p, perm: perm, prefix: p[:i], prefixOnly: i == len(p)-1 && p[i] == '*'}
}

// Selector is one set of permissions: the root one of a user, or one of
// its "(...)" selectors. A command is allowed when one selector allows
// the command, each of its keys and each of its channels.
type Selector struct {
	cat         *Catalog
	allCommands bool     // +@all and nothing removed since
	allKeys     bool     // ~* / allkeys
	allChannels bool     // &* / allchannels
	bits        []uint64 // allowed command IDs; the bit past the last ID is "future commands" (+@all)
	firstArgs   map[int][]string
	keys        []keyPattern
	keyIdx      *keyIndex // keys by first byte, from refresh; nil for few keys
	channels    []string
}

func newSelector(cat *Catalog) *Selector {
	return &Selector{cat: cat, bits: make([]uint64, (len(cat.Cmds)+1+63)/64)}
}

func (s *Selector) clone() *Selector {
	n := *s
	n.bits = append([]uint64(nil), s.bits...)
	n.keys = append([]keyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for k, v := range s.firstArgs {
			n.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &n
}

func (s *Selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *Selector) setBit(id int, on bool) {
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

func (s *Selector) futureBit() int { return len(s.cat.Cmds) }

// changePerm is ACLChangeSelectorPerm: the command and its subcommands.
func (s *Selector) changePerm(c *Command, on bool) {
	s.setBit(c.ID, on)
	delete(s.firstArgs, c.ID)
	for _, sub := range c.Subs {
		s.setBit(sub.ID, on)
	}
}

func (s *Selector) setCategory(bit uint64, on bool) {
	for _, c := range s.cat.Cmds {
		if c.Cats&bit != 0 {
			s.changePerm(c, on)
		}
	}
}

func (s *Selector) setAll(on bool) {
	for i := range s.bits {
		if on {
			s.bits[i] = ^uint64(0)
		} else {
			s.bits[i] = 0
		}
	}
	s.allCommands = on
	s.firstArgs = nil
}

func hasSpace(s string) bool { return strings.ContainsAny(s, " \t\r\n\v\f") }

// apply is ACLSetSelector: one rule that a selector understands.
func (s *Selector) apply(op string) error {
	lop := strings.ToLower(op)
	switch {
	case lop == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lop == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lop == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case lop == "resetchannels":
		s.allChannels, s.channels = false, nil
	case lop == "allcommands" || lop == "+@all":
		s.setAll(true)
	case lop == "nocommands" || lop == "-@all":
		s.setAll(false)
	case op != "" && (op[0] == '~' || op[0] == '%'):
		return s.addKey(op)
	case op != "" && op[0] == '&':
		if s.allChannels {
			return ErrChanAfterAll
		}
		if hasSpace(op[1:]) {
			return ErrSyntax
		}
		for _, c := range s.channels {
			if c == op[1:] {
				return nil
			}
		}
		s.channels = append(s.channels, op[1:])
	case len(op) > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		bit := CategoryBit(op[2:])
		if bit == 0 {
			return ErrUnknown
		}
		s.setCategory(bit, op[0] == '+')
	case op != "" && op[0] == '+':
		return s.allow(op[1:])
	case op != "" && op[0] == '-':
		c := s.cat.Lookup(op[1:])
		if c == nil {
			return ErrUnknown
		}
		s.changePerm(c, false)
	default:
		return ErrSyntax
	}
	return nil
}

func (s *Selector) addKey(op string) error {
	if s.allKeys {
		return ErrKeyAfterAll
	}
	perm, off := permAll, 1
	if op[0] == '%' {
		perm = 0
		for ; off < len(op); off++ {
			switch {
			case (op[off] == 'R' || op[off] == 'r') && perm&permRead == 0:
				perm |= permRead
				continue
			case (op[off] == 'W' || op[off] == 'w') && perm&permWrite == 0:
				perm |= permWrite
				continue
			case op[off] == '~':
				off++
			default:
				return ErrSyntax
			}
			break
		}
		if perm == 0 || off > len(op) || op[off-1] != '~' {
			return ErrSyntax
		}
	}
	pat := op[off:]
	if hasSpace(pat) {
		return ErrSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == pat {
			s.keys[i].perm |= perm
			return nil
		}
	}
	s.keys = append(s.keys, newKeyPattern(pat, perm))
	return nil
}

// allow is "+name": a command, a subcommand ("config|get"), or a first
// argument of a command without subcommands ("select|0").
func (s *Selector) allow(name string) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		c := s.cat.Lookup(name)
		if c == nil {
			return ErrUnknown
		}
		s.changePerm(c, true)
		return nil
	}
	c := s.cat.Lookup(name[:i])
	if c == nil {
		return ErrUnknown
	}
	if c.Parent != nil {
		return ErrSubFirstArg
	}
	sub := name[i+1:]
	if sub == "" {
		return ErrSyntax
	}
	if len(c.Subs) > 0 {
		sc := s.cat.Lookup(name)
		if sc == nil {
			return ErrUnknown
		}
		s.changePerm(sc, true)
		return nil
	}
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	sub = strings.ToLower(sub)
	for _, a := range s.firstArgs[c.ID] {
		if a == sub {
			return nil
		}
	}
	s.firstArgs[c.ID] = append(s.firstArgs[c.ID], sub)
	return nil
}

// User is an ACL user. Its fields change only under the server lock
// (ACL SETUSER applies to a copy, then replaces the user's content).
type User struct {
	Name      string
	enabled   bool
	noPass    bool
	sanitize  int8     // 0 unset, 1 sanitize-payload, -1 skip-sanitize-payload
	passwords []string // hex SHA-256, in the order added
	root      *Selector
	selectors []*Selector
	// open caches "on, every command, key and channel, no selectors":
	// the check then costs one load (the default user's usual state).
	open bool
}

// NewUser is a user as ACLCreateUser makes it: off, no passwords, no
// permissions; channels per acl-pubsub-default.
func NewUser(cat *Catalog, name string, allChannels bool) *User {
	u := &User{Name: name, root: newSelector(cat)}
	u.root.allChannels = allChannels
	return u
}

// Clone copies the user (SETUSER works on a copy: all rules or none).
func (u *User) Clone() *User {
	n := *u
	n.passwords = append([]string(nil), u.passwords...)
	n.root = u.root.clone()
	n.selectors = make([]*Selector, len(u.selectors))
	for i, s := range u.selectors {
		n.selectors[i] = s.clone()
	}
	return &n
}

// Replace gives u the content of n, keeping u's identity (sessions hold
// the pointer).
func (u *User) Replace(n *User) { *u = *n; u.refresh() }

func (u *User) refresh() {
	r := u.root
	u.open = u.enabled && r.allCommands && r.allKeys && r.allChannels && len(u.selectors) == 0
	r.keyIdx = newKeyIndex(r.keys)
	for _, s := range u.selectors {
		s.keyIdx = newKeyIndex(s.keys)
	}
}

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.enabled }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.noPass }

// Open reports whether the user may run anything (no check needed).
func (u *User) Open() bool { return u.open }

// Single is the user's only selector when it has no "(...)" ones (nil
// otherwise): a command it allows is allowed, which lets a caller decide
// the usual case without building Check's arguments. A refusal still
// goes through Check, which ranks the reasons.
func (u *User) Single() *Selector {
	if len(u.selectors) != 0 {
		return nil
	}
	return u.root
}

// HashPassword is the form passwords are kept in: hex SHA-256.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

// CheckPassword reports whether pass authenticates u (enabled, and nopass
// or one of its passwords); digests are compared in constant time, so
// neither a password's content nor its length shows in the timing.
func (u *User) CheckPassword(pass []byte) bool {
	if !u.enabled {
		return false
	}
	if u.noPass {
		return true
	}
	got := sha256.Sum256(pass)
	ok := 0
	for _, p := range u.passwords {
		want, err := hex.DecodeString(p)
		if err == nil && len(want) == len(got) {
			ok |= subtle.ConstantTimeCompare(got[:], want)
		}
	}
	return ok == 1
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Apply is ACLSetUser: one rule. A "(...)" argument is a selector whose
// rules are separated by spaces.
func (u *User) Apply(op string, allChannelsDefault bool) error {
	defer u.refresh()
	lop := strings.ToLower(op)
	switch {
	case lop == "on":
		u.enabled = true
	case lop == "off":
		u.enabled = false
	case lop == "skip-sanitize-payload":
		u.sanitize = -1
	case lop == "sanitize-payload":
		u.sanitize = 1
	case lop == "nopass":
		u.noPass, u.passwords = true, nil
	case lop == "resetpass":
		u.noPass, u.passwords = false, nil
	case op != "" && op[0] == '>':
		h := HashPassword([]byte(op[1:]))
		u.addPassword(h)
	case op != "" && op[0] == '#':
		if !validHash(op[1:]) {
			return ErrBadHash
		}
		u.addPassword(op[1:])
	case op != "" && op[0] == '<':
		return u.removePassword(HashPassword([]byte(op[1:])))
	case op != "" && op[0] == '!':
		if !validHash(op[1:]) {
			return ErrBadHash
		}
		return u.removePassword(op[1:])
	case op != "" && op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(u.root.cat)
		s.allChannels = allChannelsDefault
		for _, r := range strings.Fields(op[1 : len(op)-1]) {
			if err := s.apply(r); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case lop == "clearselectors":
		u.selectors = nil
	case lop == "reset":
		u.noPass, u.passwords = false, nil
		u.root.allKeys, u.root.keys = false, nil
		u.root.allChannels, u.root.channels = allChannelsDefault, nil
		u.enabled = false
		u.sanitize = 1
		u.selectors = nil
		u.root.setAll(false)
	default:
		return u.root.apply(op)
	}
	return nil
}

func (u *User) addPassword(h string) {
	u.noPass = false
	for _, p := range u.passwords {
		if p == h {
			return
		}
	}
	u.passwords = append(u.passwords, h)
}

func (u *User) removePassword(h string) error {
	for i, p := range u.passwords {
		if p == h {
			u.passwords = append(u.passwords[:i], u.passwords[i+1:]...)
			return nil
		}
	}
	return ErrNoSuchPass
}

// MergeSelectorArgs is ACLMergeSelectorArguments: arguments from one
// starting with "(" to one ending with ")" become one rule, joined by
// spaces. An unclosed selector is an error naming its start.
func MergeSelectorArgs(args []string) ([]string, error) {
	var out []string
	var open []string
	for _, a := range args {
		if open == nil {
			if strings.HasPrefix(a, "(") && !strings.HasSuffix(a, ")") {
				open = []string{a}
				continue
			}
			out = append(out, a)
			continue
		}
		open = append(open, a)
		if strings.HasSuffix(a, ")") {
			out = append(out, strings.Join(open, " "))
			open = nil
		}
	}
	if open != nil {
		return nil, errors.New("Unmatched parenthesis in acl selector starting at '" + open[0] + "'.")
	}
	return out, nil
}
