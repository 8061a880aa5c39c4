package engine

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// Client-side caching (CLIENT TRACKING): the server remembers which keys
// each tracking client read and tells it when one changes, once (the key
// leaves the table until it is read again), as Redis's tracking.c does.
// In BCAST mode a client names key prefixes instead, and hears of every
// change under them. Invalidations go to the client itself as RESP3
// pushes, or to its redirection client: as pushes if that client speaks
// RESP3, as messages on __redis__:invalidate if it is a RESP2 subscriber.
// The table is global across databases, as in Redis. Everything here runs
// under the server lock; a server with no tracking client pays one
// comparison per written key.

// trackChannel is the channel RESP2 redirection clients receive on.
const trackChannel = "__redis__:invalidate"

// ErrCachingNotTracking is CLIENT CACHING's refusal outside tracking.
const ErrCachingNotTracking = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"

// Tracking options (CLIENT TRACKING ON ...).
const (
	TrackBcast = 1 << iota
	TrackOptIn
	TrackOptOut
	TrackNoLoop
)

// sessionTracking is one tracking client's mode.
type sessionTracking struct {
	opts     int
	redirect int64    // client id, 0 for none
	redir    *Session // the redirection client, while connected
	broken   bool     // the redirection client went away
	prefixes []string // BCAST prefixes, sorted
	// caching is CLIENT CACHING's one-command override of OPTIN/OPTOUT.
	caching bool
}

type bcastPrefix struct {
	clients map[*Session]struct{}
	// keys changed since the last broadcast, each with the client that
	// changed it last (NOLOOP clients do not hear of their own).
	keys map[string]*Session
}

type trackState struct {
	clients  map[*Session]struct{}            // sessions with tracking on
	table    map[string]map[*Session]struct{} // key -> clients that read it
	items    int                              // entries across table's sets
	prefixes map[string]*bcastPrefix
	// cur is the client whose top-level command runs now; pending are
	// the invalidations due to it, sent after its reply (nil: flush).
	cur     *Session
	pending []*string
	// flushing: FLUSHDB/FLUSHALL is emptying databases; its keys are not
	// invalidated one by one (clients get one flush invalidation).
	flushing bool
	hooked   bool
	// bcastDue says some BCAST prefix has changed keys to send
	// (BroadcastDue, read without the server lock by the event loops).
	bcastDue atomic.Bool
	// overLimit counts the rounds the table stayed above
	// tracking-table-max-keys (the eviction effort grows with it).
	overLimit int
}

// Tracking reports s's tracking mode: on, its options and redirection.
func (s *Session) Tracking() (on bool, opts int, redirect int64, broken bool, prefixes []string) {
	t := s.track
	if t == nil {
		return false, 0, 0, false, nil
	}
	return true, t.opts, t.redirect, t.broken, t.prefixes
}

// TrackingError checks CLIENT TRACKING ON's options against s's current
// mode and the prefixes against each other, returning Redis's error.
func (e *Env) TrackingError(s *Session, opts int, prefixes []string) string {
	if opts&TrackBcast == 0 && len(prefixes) > 0 {
		return "ERR PREFIX option requires BCAST mode to be enabled"
	}
	if t := s.track; t != nil && (t.opts&TrackBcast != 0) != (opts&TrackBcast != 0) {
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	}
	if opts&TrackBcast != 0 && opts&(TrackOptIn|TrackOptOut) != 0 {
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	}
	if opts&TrackOptIn != 0 && opts&TrackOptOut != 0 {
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	}
	if t := s.track; t != nil && (opts&TrackOptIn != 0 && t.opts&TrackOptOut != 0 || opts&TrackOptOut != 0 && t.opts&TrackOptIn != 0) {
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	}
	if opts&TrackBcast == 0 {
		return ""
	}
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		if s.track != nil {
			for _, old := range s.track.prefixes {
				if overlap(p, old) {
					return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + old + "'. Prefixes for a single client must not overlap."
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// EnableTracking turns tracking on for s (after TrackingError passed);
// redir is the redirection client or nil.
func (e *Env) EnableTracking(s *Session, opts int, redir *Session, prefixes []string) {
	tr := &e.trk
	if !tr.hooked {
		tr.hooked = true
		tr.clients = map[*Session]struct{}{}
		tr.table = map[string]map[*Session]struct{}{}
		tr.prefixes = map[string]*bcastPrefix{}
		e.KS.OnTouched(e.trackTouched)
	}
	t := s.track
	if t == nil {
		t = &sessionTracking{}
		s.track = t
		tr.clients[s] = struct{}{}
	}
	t.opts, t.redir, t.redirect, t.broken, t.caching = opts, redir, 0, false, false
	if redir != nil {
		t.redirect = redir.ID
	}
	if opts&TrackBcast != 0 {
		if len(prefixes) == 0 && len(t.prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			bp := tr.prefixes[p]
			if bp == nil {
				bp = &bcastPrefix{clients: map[*Session]struct{}{}, keys: map[string]*Session{}}
				tr.prefixes[p] = bp
			}
			if _, ok := bp.clients[s]; !ok {
				bp.clients[s] = struct{}{}
				t.prefixes = append(t.prefixes, p)
			}
		}
		slices.Sort(t.prefixes)
	}
}

// DisableTracking turns tracking off for s. Its entries in the key table
// go lazily, when their keys change.
func (e *Env) DisableTracking(s *Session) {
	t := s.track
	if t == nil {
		return
	}
	for _, p := range t.prefixes {
		if bp := e.trk.prefixes[p]; bp != nil {
			delete(bp.clients, s)
			if len(bp.clients) == 0 {
				delete(e.trk.prefixes, p)
			}
		}
	}
	delete(e.trk.clients, s)
	s.track = nil
}

// SetCaching is CLIENT CACHING YES|NO: it returns Redis's error, or ""
// after setting the override for s's next command.
func (s *Session) SetCaching(yes bool) string {
	t := s.track
	switch {
	case t == nil:
		return ErrCachingNotTracking
	case yes && t.opts&TrackOptIn == 0:
		return "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	case !yes && t.opts&TrackOptOut == 0:
		return "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
	}
	t.caching = true
	return ""
}

// TrackingCounts are INFO's tracking_clients, tracking_total_keys,
// tracking_total_items and tracking_total_prefixes.
func (e *Env) TrackingCounts() (clients, keys, items, prefixes int) {
	return len(e.trk.clients), len(e.trk.table), e.trk.items, len(e.trk.prefixes)
}

// trackRead remembers the keys a read-only command of s read, when s
// tracks keys (not BCAST) and OPTIN/OPTOUT let it.
func (e *Env) trackRead(s *Session, cmd *Command, args [][]byte) {
	e.trackKeys(s, cmd, args, cmd.KeyIndexes(args))
}

// trackKeys remembers that s read the keys of args at idx (every one of
// args when idx is nil) with cmd.
func (e *Env) trackKeys(s *Session, cmd *Command, args [][]byte, idx []int) {
	t := s.track
	if t.opts&TrackBcast != 0 || cmd.Flags&FlagPubSub != 0 || trackingExcluded(cmd) {
		return
	}
	if t.opts&TrackOptIn != 0 && !t.caching || t.opts&TrackOptOut != 0 && t.caching {
		return
	}
	if idx == nil {
		for _, a := range args {
			e.trackKey(s, a)
		}
		return
	}
	for _, i := range idx {
		e.trackKey(s, args[i])
	}
}

// trackKey adds s to the clients that read key.
func (e *Env) trackKey(s *Session, k []byte) {
	key := string(k)
	set := e.trk.table[key]
	if set == nil {
		set = map[*Session]struct{}{}
		e.trk.table[key] = set
	}
	if _, ok := set[s]; !ok {
		set[s] = struct{}{}
		e.trk.items++
	}
}

// trackTouched is the keyspace's hook for a written key.
func (e *Env) trackTouched(_ *keyspace.DB, key string) {
	tr := &e.trk
	if len(tr.clients) == 0 || tr.flushing {
		return
	}
	e.invalidate(key, true)
}

// invalidate tells the clients that read key that it changed and drops
// it from the table; with bcast, the key is also queued for the BCAST
// clients whose prefixes it has.
func (e *Env) invalidate(key string, bcast bool) {
	tr := &e.trk
	if bcast && len(tr.prefixes) > 0 {
		for p, bp := range tr.prefixes {
			if strings.HasPrefix(key, p) {
				bp.keys[key] = tr.cur
				tr.bcastDue.Store(true)
			}
		}
	}
	set, ok := tr.table[key]
	if !ok {
		return
	}
	delete(tr.table, key)
	tr.items -= len(set)
	for s := range set {
		t := s.track
		if t == nil || t.opts&TrackBcast != 0 {
			continue // tracking went off (or to BCAST) since the read
		}
		if s == tr.cur {
			if t.opts&TrackNoLoop == 0 {
				k := key
				tr.pending = append(tr.pending, &k)
			}
			continue
		}
		e.sendInvalidation(s, appendKeyArray(nil, []string{key}))
	}
}

// appendKeyArray is the RESP array of keys an invalidation carries.
func appendKeyArray(b []byte, keys []string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(keys)), 10)
	b = append(b, '\r', '\n')
	for _, k := range keys {
		b = resp.AppendBulk(b, k)
	}
	return b
}

// sendInvalidation sends payload (an array of keys, or a null for a
// flush) to s's invalidation target.
func (e *Env) sendInvalidation(s *Session, payload []byte) {
	if to, b := e.invalidationFor(s, payload); b != nil {
		to.Push(b)
	}
}

// invalidationFor returns the message telling s that payload changed and
// the session it goes to (s, or its redirection), or a nil message when
// there is nowhere to send it.
func (e *Env) invalidationFor(s *Session, payload []byte) (*Session, []byte) {
	t := s.track
	to := s
	if t.redirect != 0 {
		if t.redir == nil || t.redir.closed {
			t.broken = true
			if s.Proto == 3 && s.Push != nil {
				b := append([]byte(">2\r\n"), resp.AppendBulk(nil, "tracking-redir-broken")...)
				b = append(b, ':')
				b = strconv.AppendInt(b, t.redirect, 10)
				s.Push(append(b, '\r', '\n'))
			}
			return nil, nil
		}
		to = t.redir
	}
	if to.Push == nil { // CLIENT REPLY OFF does not silence it (Redis's CLIENT_PUSHING)
		return nil, nil
	}
	var b []byte
	switch {
	case to.Proto == 3:
		b = append(b, ">2\r\n"...)
		b = resp.AppendBulk(b, "invalidate")
	case t.redirect != 0 && to.subs != nil:
		b = append(b, "*3\r\n"...)
		b = resp.AppendBulk(b, "message")
		b = resp.AppendBulk(b, trackChannel)
	default:
		return nil, nil // RESP2 without a redirection: nowhere to send it
	}
	if len(payload) == 0 {
		// The null is in the tracking client's protocol, wherever it
		// goes (as Redis sends it).
		if s.Proto == 3 {
			b = append(b, "_\r\n"...)
		} else {
			b = append(b, "$-1\r\n"...)
		}
	} else {
		b = append(b, payload...)
	}
	return to, b
}

// ownInvalidations sends s the invalidations its own command queued while
// it ran (trk.cur), after its reply: as pushes, which its connection sends
// after the replies it holds, or, with out (the reply of a client served
// after blocking, sent when it wakes), appended to out when they are for
// s itself.
func (e *Env) ownInvalidations(s *Session, out *resp.Writer) {
	tr := &e.trk
	for _, k := range tr.pending {
		if s.track == nil {
			break
		}
		var payload []byte
		if k != nil {
			payload = appendKeyArray(nil, []string{*k})
		}
		if to, b := e.invalidationFor(s, payload); to == s && out != nil {
			out.Buf = append(out.Buf, b...)
		} else if b != nil {
			to.Push(b)
		}
	}
	clear(tr.pending)
	tr.pending = tr.pending[:0]
}

// BeforeFlush is called by FLUSHDB and FLUSHALL before they empty their
// databases: every tracking client gets one null invalidation (the
// running one after its reply), and the key table is emptied.
func (e *Env) BeforeFlush() {
	tr := &e.trk
	if len(tr.clients) == 0 && len(tr.table) == 0 {
		return
	}
	for s := range tr.clients {
		if s == tr.cur {
			tr.pending = append(tr.pending, nil)
			continue
		}
		e.sendInvalidation(s, nil)
	}
	clear(tr.table)
	tr.items = 0
	tr.flushing = true
}

// trackAfter runs at the end of each top-level command: the running
// client's own invalidations follow its reply, CLIENT CACHING's override
// lapses, and the table is kept under tracking-table-max-keys. BCAST
// clients hear of the keys changed later, once per round
// (BroadcastTracking).
func (e *Env) trackAfter(s *Session, cmd *Command) {
	tr := &e.trk
	tr.flushing = false
	e.TrackingLimit()
	if len(tr.pending) > 0 {
		e.ownInvalidations(s, nil)
	}
	if t := s.track; t != nil && t.caching && !s.tx.multi && !isClientCommand(cmd) {
		t.caching = false
	}
	tr.cur = nil
}

// isClientCommand: CLIENT's subcommands (CLIENT CACHING among them) leave
// the CACHING override for the command after them.
func isClientCommand(cmd *Command) bool {
	if p := cmd.Parent(); p != nil {
		cmd = p
	}
	return cmd.Name == "client"
}

// trackingExcluded are read-only commands whose keys are not remembered:
// a read-only script's own keys (the commands it runs are).
func trackingExcluded(cmd *Command) bool {
	switch cmd.Name {
	case "eval_ro", "evalsha_ro", "fcall_ro":
		return true
	}
	return false
}

// BroadcastDue reports whether BCAST clients have invalidations waiting
// for BroadcastTracking. Safe without the server lock.
func (e *Env) BroadcastDue() bool { return e.trk.bcastDue.Load() }

// BroadcastTracking sends each BCAST prefix's changed keys to its
// clients, one message per prefix and client with every key changed
// since the last call, as Redis's trackingBroadcastInvalidationMessages
// does once per event-loop round in beforeSleep: a pipeline or a round
// of several clients' writes makes one invalidation, not one per
// command. The server calls it at the end of each round of its event
// loop, after each batch of a client served by its own goroutine, and
// from its cron (keys expired there). Prefixes go in sorted order, and
// the keys sorted, as Redis's radix trees list them. Under the server
// lock.
func (e *Env) BroadcastTracking() {
	tr := &e.trk
	if !tr.bcastDue.Swap(false) {
		return
	}
	var due []string
	for p, bp := range tr.prefixes {
		if len(bp.keys) > 0 {
			due = append(due, p)
		}
	}
	slices.Sort(due)
	for _, p := range due {
		bp := tr.prefixes[p]
		keys := make([]string, 0, len(bp.keys))
		for k := range bp.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var all []byte
		for s := range bp.clients {
			if s.track.opts&TrackNoLoop == 0 {
				if all == nil {
					all = appendKeyArray(nil, keys)
				}
				e.sendInvalidation(s, all)
				continue
			}
			var mine []string
			for _, k := range keys {
				if bp.keys[k] != s {
					mine = append(mine, k)
				}
			}
			if len(mine) > 0 {
				e.sendInvalidation(s, appendKeyArray(nil, mine))
			}
		}
		clear(bp.keys)
	}
}

// trackEvict invalidates keys (Go's map order is the random walk) until
// the table is back under max, with an effort that grows each time a
// round could not get there, as Redis's trackingLimitUsedSlots.
// TrackingLimit drops keys from the tracking table while it holds more than
// tracking-table-max-keys (their clients are told, as if they changed):
// after each command and, so that a table nobody adds to still shrinks,
// from the server's cron, as Redis's trackingLimitUsedSlots. Called under
// the lock.
func (e *Env) TrackingLimit() {
	tr := &e.trk
	if max := e.Cfg.Int(config.TrackingTableMaxKeys); max > 0 && len(tr.table) > int(max) {
		tr.cur = nil // the keys dropped are nobody's change
		e.trackEvict(int(max))
	}
}

func (e *Env) trackEvict(max int) {
	tr := &e.trk
	effort := 100 * (tr.overLimit + 1)
	for key := range tr.table {
		if effort == 0 {
			tr.overLimit++
			return
		}
		effort--
		e.invalidate(key, false)
		if len(tr.table) <= max {
			break
		}
	}
	tr.overLimit = 0
}

// CachingOverride reports whether CLIENT CACHING is in effect for s's
// next command.
func (s *Session) CachingOverride() bool { return s.track != nil && s.track.caching }

// Closed reports whether s's connection is gone.
func (s *Session) Closed() bool { return s.closed }
