package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: the commands of
// client-side caching, over the engine's tracking table (engine/tracking.go).

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
// [OPTOUT] [NOLOOP]
func cmdClientTracking(c *engine.Ctx) {
	var opts int
	var prefixes []string
	var redir *engine.Session
	var redirID int64
	for i := 3; i < len(c.Args); i++ {
		a := c.Args[i]
		more := i+1 < len(c.Args)
		switch {
		case ascii.OptIs(a, "redirect") && more:
			if redirID != 0 {
				c.Error("ERR A client can only redirect to a single other client")
				return
			}
			i++
			id, ok := num.ParseInt(c.Args[i])
			if !ok {
				c.Error(engine.ErrNotInt)
				return
			}
			redirID = id
			if id == c.S.ID {
				redir = c.S
			}
			for _, s := range c.Env.Host.Clients() {
				if redir == nil && s.ID == id {
					redir = s
				}
			}
			if redir == nil {
				c.Error("ERR The client ID you want redirect to does not exist")
				return
			}
		case ascii.OptIs(a, "bcast"):
			opts |= engine.TrackBcast
		case ascii.OptIs(a, "optin"):
			opts |= engine.TrackOptIn
		case ascii.OptIs(a, "optout"):
			opts |= engine.TrackOptOut
		case ascii.OptIs(a, "noloop"):
			opts |= engine.TrackNoLoop
		case ascii.OptIs(a, "prefix") && more:
			i++
			prefixes = append(prefixes, string(c.Args[i]))
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	switch {
	case ascii.OptIs(c.Args[2], "on"):
		if msg := c.Env.TrackingError(c.S, opts, prefixes); msg != "" {
			c.Error(msg)
			return
		}
		c.Env.EnableTracking(c.S, opts, redir, prefixes)
	case ascii.OptIs(c.Args[2], "off"):
		c.Env.DisableTracking(c.S)
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	c.W.OK()
}

// CLIENT CACHING YES|NO
func cmdClientCaching(c *engine.Ctx) {
	if on, _, _, _, _ := c.S.Tracking(); !on {
		c.Error(engine.ErrCachingNotTracking)
		return
	}
	var msg string
	switch {
	case ascii.OptIs(c.Args[2], "yes"):
		msg = c.S.SetCaching(true)
	case ascii.OptIs(c.Args[2], "no"):
		msg = c.S.SetCaching(false)
	default:
		msg = engine.ErrSyntax
	}
	if msg != "" {
		c.Error(msg)
		return
	}
	c.W.OK()
}

func cmdClientGetRedir(c *engine.Ctx) {
	on, _, redir, _, _ := c.S.Tracking()
	if !on {
		c.W.Int(-1)
		return
	}
	c.W.Int(redir)
}

func cmdClientTrackingInfo(c *engine.Ctx) {
	on, opts, redir, broken, prefixes := c.S.Tracking()
	c.W.Map(3)
	c.W.BulkString("flags")
	var flags []string
	if !on {
		flags = append(flags, "off")
	} else {
		flags = append(flags, "on")
		for _, f := range []struct {
			bit  int
			name string
		}{{engine.TrackBcast, "bcast"}, {engine.TrackOptIn, "optin"}, {engine.TrackOptOut, "optout"}} {
			if opts&f.bit != 0 {
				flags = append(flags, f.name)
			}
		}
		if opts&engine.TrackOptIn != 0 && c.S.CachingOverride() {
			flags = append(flags, "caching-yes")
		}
		if opts&engine.TrackOptOut != 0 && c.S.CachingOverride() {
			flags = append(flags, "caching-no")
		}
		if opts&engine.TrackNoLoop != 0 {
			flags = append(flags, "noloop")
		}
		if broken {
			flags = append(flags, "broken_redirect")
		}
	}
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	switch {
	case !on:
		c.W.Int(-1)
	default:
		c.W.Int(redir)
	}
	c.W.BulkString("prefixes")
	c.W.StringArray(prefixes)
}
