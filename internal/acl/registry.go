package acl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
)

// Registry holds a server's users, its ACL LOG and denial counters. It
// is used under the server lock.
type Registry struct {
	Cat     *Catalog
	Default *User
	users   map[string]*User
	Log     Log
	// Denied counts refusals for INFO (acl_access_denied_*).
	Denied struct{ Auth, Cmd, Key, Channel int64 }
	// authRequired mirrors "the default user needs a password or is
	// off", for the connection layer that reads it outside the lock.
	authRequired atomic.Bool
}

// AuthRequired reports whether a new connection must authenticate:
// the default user has passwords (not nopass) or is off. Safe to call
// without the server lock.
func (r *Registry) AuthRequired() bool { return r.authRequired.Load() }

func (r *Registry) sync() {
	d := r.Default
	r.authRequired.Store(!d.NoPass() || !d.Enabled())
}

// NewRegistry makes the registry with Redis's default user: on, nopass,
// every command, key and channel.
func NewRegistry(cat *Catalog) *Registry {
	r := &Registry{Cat: cat, users: map[string]*User{}}
	r.Default = r.newDefault()
	r.users["default"] = r.Default
	r.sync()
	return r
}

func (r *Registry) newDefault() *User {
	u := NewUser(r.Cat, "default", true)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		u.Apply(op, true)
	}
	return u
}

// User returns the user of that name, or nil.
func (r *Registry) User(name string) *User { return r.users[name] }

// Names lists the users, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.users))
	for n := range r.users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// RuleError is a rule SETUSER could not apply.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string { return e.Err.Error() }

// SetUser is ACL SETUSER: the rules apply to a copy of the user (a new
// one when it does not exist) and replace it only when all apply.
func (r *Registry) SetUser(name string, rules []string, allChannels bool) error {
	merged, err := MergeSelectorArgs(rules)
	if err != nil {
		return err
	}
	old := r.users[name]
	var u *User
	if old != nil {
		u = old.Clone()
	} else {
		u = NewUser(r.Cat, name, allChannels)
	}
	for _, op := range merged {
		if err := u.Apply(op, allChannels); err != nil {
			return &RuleError{Rule: op, Err: err}
		}
	}
	if old != nil {
		old.Replace(u)
	} else {
		u.refresh()
		r.users[name] = u
	}
	r.sync()
	return nil
}

// Delete removes a user (not default); it reports whether it existed.
func (r *Registry) Delete(name string) bool {
	if name == "default" || r.users[name] == nil {
		return false
	}
	delete(r.users, name)
	return true
}

// SetRequirePass makes requirepass the default user's only password, as
// Redis's ACLUpdateDefaultUserPassword does ("" means nopass).
func (r *Registry) SetRequirePass(pass string) {
	r.Default.Apply("resetpass", true)
	if pass == "" {
		r.Default.Apply("nopass", true)
	} else {
		r.Default.Apply(">"+pass, true)
	}
	r.sync()
}

// Lines are the users as ACL LIST and ACL SAVE write them.
func (r *Registry) Lines() []string {
	var out []string
	for _, n := range r.Names() {
		out = append(out, "user "+n+" "+r.users[n].Describe())
	}
	return out
}

// Load replaces the users by those of ACL file text, all or nothing, as
// ACLLoadFromFile: every line "user <name> <rules...>". The errors name
// the file and line. The default user keeps its identity (sessions point
// at it); a file without it gets Redis's default one.
func (r *Registry) Load(path, text string, allChannels bool) error {
	users := map[string]*User{}
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		n := i + 1
		args := strings.Fields(line)
		if args[0] != "user" || len(args) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, n)
			continue
		}
		if users[args[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", args[1], n)
			continue
		}
		u := NewUser(r.Cat, args[1], allChannels)
		users[args[1]] = u
		merged, err := MergeSelectorArgs(args[2:])
		if err != nil {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, n)
			continue
		}
		for _, op := range merged {
			if err := u.Apply(op, allChannels); err != nil {
				fmt.Fprintf(&errs, "%s:%d: %s. ", path, n, err)
			}
		}
	}
	if errs.Len() > 0 {
		return fmt.Errorf("%sWARNING: ACL errors detected, no change to the previously active ACL rules was performed", errs.String())
	}
	def := users["default"]
	if def == nil {
		def = r.newDefault()
	}
	r.Default.Replace(def)
	users["default"] = r.Default
	for _, u := range users {
		u.refresh()
	}
	r.users = users
	r.sync()
	return nil
}

// Save writes the users to path atomically (ACL SAVE).
func (r *Registry) Save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".acl-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	for _, l := range r.Lines() {
		if _, err := tmp.WriteString(l + "\n"); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
