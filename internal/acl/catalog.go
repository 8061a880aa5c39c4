// Package acl is Redis 7.0's access control: users, their selectors
// (command permissions, key patterns with read/write flags, channel
// patterns), the SETUSER rule grammar, the description ACL LIST and
// GETUSER give back, the permission check and ACL LOG. It knows commands
// only through a Catalog the engine builds from its table, so it imports
// nothing of the server.
package acl

import (
	"strings"
)

// Categories are Redis's ACL categories in Redis's order (ACL CAT lists
// them so); Abacus's own follow.
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
	// Abacus's metrics commands (docs/acl.md).
	"timeseries", "rate_limit",
}

// CategoryBit returns the bit of a category name (without '@'), or 0.
func CategoryBit(name string) uint64 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Key permissions a key position needs, from its key-spec flags.
const (
	NeedRead  = 1 << iota // access
	NeedWrite             // insert, delete or update
)

// KeyNeeds derives the permissions from key-spec flags ("RW access
// update"), as Redis's ACLSelectorCheckKey does: access needs read;
// insert, delete and update need write; RO/RW/OW alone need neither (any
// matching pattern will do).
func KeyNeeds(flags string) int {
	n := 0
	for _, f := range strings.Fields(flags) {
		switch strings.ToLower(f) {
		case "access":
			n |= NeedRead
		case "insert", "delete", "update":
			n |= NeedWrite
		}
	}
	return n
}

// Command is one command or subcommand as ACL rules see it.
type Command struct {
	ID     int    // index in the catalog: the bit in a selector's bitmap
	Name   string // full name, lower case: "get", "config|get"
	Cats   uint64 // CategoryBit of each category
	NoAuth bool   // runs whatever the user (AUTH, HELLO...)
	Parent *Command
	Subs   []*Command
}

// Catalog is every command, in a stable order (parents before their
// subcommands, by name), with its lookup by name.
type Catalog struct {
	Cmds   []*Command
	byName map[string]*Command
}

// NewCatalog numbers the commands given (each with its Subs, whose
// Parent it sets) in the order given.
func NewCatalog(top []*Command) *Catalog {
	c := &Catalog{byName: map[string]*Command{}}
	add := func(cmd *Command) {
		cmd.ID = len(c.Cmds)
		c.Cmds = append(c.Cmds, cmd)
		c.byName[cmd.Name] = cmd
	}
	for _, t := range top {
		add(t)
		for _, s := range t.Subs {
			s.Parent = t
			add(s)
		}
	}
	return c
}

// Lookup finds a command by its full name, case-insensitively.
func (c *Catalog) Lookup(name string) *Command { return c.byName[strings.ToLower(name)] }

// InCategory lists the full names of the commands in a category (ACL CAT
// <category>): top-level commands and subcommands alike.
func (c *Catalog) InCategory(bit uint64) []string {
	var out []string
	for _, cmd := range c.Cmds {
		if cmd.Cats&bit != 0 {
			out = append(out, cmd.Name)
		}
	}
	return out
}
