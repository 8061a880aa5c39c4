package acl

// ChannelsNarrowed is the test ACLKillPubsubClientsIfNeeded makes before
// it looks at any client: whether changing a user from old to new may
// have taken channels away. It may not when a selector of new allows
// every channel, or when every channel pattern of old (none allowing
// every channel) is, literally, one of new's.
func ChannelsNarrowed(old, new *User) bool {
	for _, s := range new.all() {
		if s.allChannels {
			return false
		}
	}
	upcoming := map[string]bool{}
	for _, s := range new.all() {
		for _, c := range s.channels {
			upcoming[c] = true
		}
	}
	for _, s := range old.all() {
		if s.allChannels {
			return true
		}
		for _, c := range s.channels {
			if !upcoming[c] {
				return true
			}
		}
	}
	return false
}

// all is the user's selectors, the root one first (Redis's list).
func (u *User) all() []*Selector {
	return append([]*Selector{u.root}, u.selectors...)
}
