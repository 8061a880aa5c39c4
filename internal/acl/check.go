package acl

import (
	"strings"

	"github.com/abacusdb/abacus/internal/glob"
)

// Reason is why a command was refused, in the order Redis ranks them
// when picking the one to report (ACLCheckAllUserCommandPerm).
type Reason int

// Reasons.
const (
	Allowed Reason = iota
	DeniedCmd
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// String is ACL LOG's reason field.
func (r Reason) String() string {
	switch r {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedAuth:
		return "auth"
	case DeniedChannel:
		return "channel"
	}
	return ""
}

// KeyRef is a key argument and the permissions its position needs.
type KeyRef struct {
	Pos  int
	Need int // NeedRead | NeedWrite
}

// ChanRef is a channel argument; Pattern for PSUBSCRIBE's.
type ChanRef struct {
	Pos     int
	Pattern bool
}

// Check is ACLCheckAllUserCommandPerm: whether one of u's selectors
// allows the command with these keys and channels. When none does, the
// reason reported is the highest ranked one, and pos the argument it is
// about (the last such for equal reasons).
func (u *User) Check(c *Command, args [][]byte, keys []KeyRef, chans []ChanRef) (Reason, int) {
	if u.open {
		return Allowed, 0
	}
	best, bestPos := DeniedCmd, 0
	try := func(s *Selector) bool {
		r, pos := s.check(c, args, keys, chans)
		if r == Allowed {
			return true
		}
		if r > best || (r == best && pos > bestPos) {
			best, bestPos = r, pos
		}
		return false
	}
	if try(u.root) {
		return Allowed, 0
	}
	for _, s := range u.selectors {
		if try(s) {
			return Allowed, 0
		}
	}
	return best, bestPos
}

func (s *Selector) check(c *Command, args [][]byte, keys []KeyRef, chans []ChanRef) (Reason, int) {
	if !s.CommandAllowed(c, args) {
		return DeniedCmd, 0
	}
	if !s.allKeys {
		for _, k := range keys {
			if !s.KeyAllowed(args[k.Pos], k.Need) {
				return DeniedKey, k.Pos
			}
		}
	}
	if !s.allChannels {
		for _, ch := range chans {
			if !s.channelAllowed(string(args[ch.Pos]), ch.Pattern) {
				return DeniedChannel, ch.Pos
			}
		}
	}
	return Allowed, 0
}

// CommandAllowed is the command part of ACLSelectorCheckCmd: the
// command (or subcommand) is allowed, or its first argument is.
func (s *Selector) CommandAllowed(c *Command, args [][]byte) bool {
	if s.allCommands || c.NoAuth || s.bit(c.ID) {
		return true
	}
	idx := 1
	if c.Parent != nil {
		idx = 2
	}
	if idx < len(args) {
		for _, a := range s.firstArgs[c.ID] {
			if strings.EqualFold(a, string(args[idx])) {
				return true
			}
		}
	}
	return false
}

// AllKeys reports whether the selector allows every key.
func (s *Selector) AllKeys() bool { return s.allKeys }

// KeyAllowed is ACLSelectorCheckKey: a pattern with at least the needed
// permissions matches the key.
func (s *Selector) KeyAllowed(key []byte, need int) bool {
	if s.allKeys {
		return true
	}
	if s.keyIdx != nil {
		return s.keyIdx.allowed(key, need)
	}
	for i := range s.keys {
		if s.keys[i].matches(key, need) {
			return true
		}
	}
	return false
}

// matches reports whether the pattern grants need and matches the key.
func (p *keyPattern) matches(key []byte, need int) bool {
	if p.perm&need != need || len(key) < len(p.prefix) || string(key[:len(p.prefix)]) != p.prefix {
		return false
	}
	// A pattern never matches the empty key (Redis's stringmatchlen).
	return p.prefixOnly && len(key) > 0 || !p.prefixOnly && glob.Match(p.pattern, key, false)
}

// channelAllowed is ACLCheckChannelAgainstList: a channel matches the
// user's patterns; a subscription pattern must equal one of them
// literally (a pattern could match channels a narrower one does not).
func (s *Selector) channelAllowed(ch string, isPattern bool) bool {
	if s.allChannels {
		return true
	}
	for _, p := range s.channels {
		if (isPattern && p == ch) || (!isPattern && glob.Match(p, ch, false)) {
			return true
		}
	}
	return false
}

// ChannelAllowed reports whether one of u's selectors lets it use the
// channel (PUBLISH, SUBSCRIBE) or, with isPattern, the pattern
// (PSUBSCRIBE). The pub/sub commands' permission is checked with the
// command itself; this serves what checks channels on its own (the
// subscriptions kept after the user's channels change).
func (u *User) ChannelAllowed(channel string, isPattern bool) bool {
	if u.open || u.root.channelAllowed(channel, isPattern) {
		return true
	}
	for _, s := range u.selectors {
		if s.channelAllowed(channel, isPattern) {
			return true
		}
	}
	return false
}

// NOPERM texts, as processCommand words them.
const (
	ErrNoPermKey     = "NOPERM this user has no permissions to access one of the keys used as arguments"
	ErrNoPermChannel = "NOPERM this user has no permissions to access one of the channels used as arguments"
)

// ErrNoPermCmd is the refusal of a command the user may not run.
func ErrNoPermCmd(fullName string) string {
	return "NOPERM this user has no permissions to run the '" + fullName + "' command"
}

// Refusal is the error for a denial reason.
func Refusal(r Reason, c *Command) string {
	switch r {
	case DeniedCmd:
		return ErrNoPermCmd(c.Name)
	case DeniedKey:
		return ErrNoPermKey
	case DeniedChannel:
		return ErrNoPermChannel
	}
	return "NOPERM no permission"
}

// ScriptRefusal is the error redis.call raises for a denial (without
// the script's location, which the caller adds).
func ScriptRefusal(r Reason) string {
	switch r {
	case DeniedCmd:
		return "The user executing the script can't run this command or subcommand"
	case DeniedKey:
		return "The user executing the script can't access at least one of the keys mentioned in the command"
	case DeniedChannel:
		return "The user executing the script can't publish to the channel mentioned in the command"
	}
	return "The user executing the script is lacking the permissions for the command"
}
