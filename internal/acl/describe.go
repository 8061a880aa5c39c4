package acl

import "strings"

// FlagNames are the user's flags as GETUSER lists them, in Redis's order.
func (u *User) FlagNames() []string {
	out := []string{"off"}
	if u.enabled {
		out[0] = "on"
	}
	if u.noPass {
		out = append(out, "nopass")
	}
	switch u.sanitize {
	case -1:
		out = append(out, "skip-sanitize-payload")
	case 1:
		out = append(out, "sanitize-payload")
	}
	return out
}

// Passwords are the user's password digests (hex SHA-256).
func (u *User) Passwords() []string { return append([]string(nil), u.passwords...) }

// Root is the user's root selector; Selectors the "(...)" ones.
func (u *User) Root() *Selector        { return u.root }
func (u *User) Selectors() []*Selector { return u.selectors }

// Describe is the user as ACL LIST and ACL SAVE write it (without the
// "user <name> " prefix): rules that rebuild it.
func (u *User) Describe() string {
	var b strings.Builder
	for _, f := range u.FlagNames() {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	b.WriteString(u.root.Describe())
	for _, s := range u.selectors {
		b.WriteString(" (" + s.Describe() + ")")
	}
	return b.String()
}

// Describe is ACLDescribeSelector: keys, channels, command rules.
func (s *Selector) Describe() string {
	var b strings.Builder
	if k := s.KeysString(); k != "" {
		b.WriteString(k + " ")
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules())
	return b.String()
}

// KeysString is GETUSER's keys field.
func (s *Selector) KeysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		switch k.perm {
		case permAll:
			parts[i] = "~" + k.pattern
		case permRead:
			parts[i] = "%R~" + k.pattern
		default:
			parts[i] = "%W~" + k.pattern
		}
	}
	return strings.Join(parts, " ")
}

// ChannelsString is GETUSER's channels field.
func (s *Selector) ChannelsString() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// CommandRules is ACLDescribeSelectorCommandRules: +@all or -@all, the
// categories that get closest to the bitmap (each taken when most of its
// commands agree, in category order), then the single commands that still
// differ and the allowed first arguments. Redis emits the single commands
// in its command dictionary's order, which is random per process; here
// they follow the catalog.
func (s *Selector) CommandRules() string {
	cat := s.cat
	fake := newSelector(cat)
	var rules []string
	additive := !s.bit(s.futureBit())
	if additive {
		rules = append(rules, "-@all")
	} else {
		rules = append(rules, "+@all")
		fake.setAll(true)
	}
	temp := s.clone()
	for i, name := range Categories {
		bit := uint64(1) << i
		on, off := 0, 0
		for _, c := range cat.Cmds {
			if c.Cats&bit != 0 {
				if temp.bit(c.ID) {
					on++
				} else {
					off++
				}
			}
		}
		if (additive && on > off) || (!additive && off > on) {
			fake.setCategory(bit, additive)
			temp.setCategory(bit, !additive)
			if additive {
				rules = append(rules, "+@"+name)
			} else {
				rules = append(rules, "-@"+name)
			}
		}
	}
	var emit func(c *Command)
	emit = func(c *Command) {
		user, f := s.bit(c.ID), fake.bit(c.ID)
		if user != f {
			if user {
				rules = append(rules, "+"+c.Name)
			} else {
				rules = append(rules, "-"+c.Name)
			}
			fake.changePerm(c, user)
		}
		for _, sub := range c.Subs {
			emit(sub)
		}
		if !user {
			for _, a := range s.firstArgs[c.ID] {
				rules = append(rules, "+"+c.Name+"|"+a)
			}
		}
	}
	for _, c := range cat.Cmds {
		if c.Parent == nil {
			emit(c)
		}
	}
	return strings.Join(rules, " ")
}
