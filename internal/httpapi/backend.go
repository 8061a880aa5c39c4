package httpapi

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/abacusdb/abacus/internal/acl"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/metrics"
	"github.com/abacusdb/abacus/internal/resp"
)

// errNotReady answers a request that needs the engine while the server is
// still loading its data (the loader holds the server lock throughout).
var errNotReady = errors.New("the server is loading its data")

// backend runs commands for the HTTP side as one more client of the
// engine, without a socket: through Env.Execute, under the server lock,
// with a session of its own. The commands are fixed by this package (INFO,
// SLOWLOG, TS.MGET, TS.QUERYINDEX, TS.MRANGE); request input only ever
// becomes their arguments (a label filter, a time range).
type backend struct {
	env  *engine.Env
	lock sync.Locker
	// gate admits one request at a time to the server lock, so however many
	// HTTP clients ask, at most one goroutine of this package holds or
	// waits for it: the data port's clients compete with one HTTP request,
	// never with a queue of them. It also makes sess and w single-owner.
	gate  chan struct{}
	sess  *engine.Session
	w     resp.Writer
	ready atomic.Bool
}

func newBackend(env *engine.Env, lock sync.Locker) *backend {
	return &backend{
		env: env, lock: lock,
		gate: make(chan struct{}, 1),
		// The name shows in SLOWLOG entries of commands this side ran.
		sess: &engine.Session{Name: "abacus-http", Proto: 2, Authed: true, User: "default", DenyBlocking: true},
	}
}

// userKey is the request context's key for the ACL user a request
// authenticated as; without one, commands run as the default user.
type userKey struct{}

// errUserGone answers a request whose user was deleted or turned off
// between its authentication and its commands.
var errUserGone = errors.New("the request's ACL user no longer exists or is off")

// authenticate checks user and pass as AUTH does and returns the user's
// name, or "" when they do not pass (counted and logged in ACL LOG, as a
// failed AUTH is). Users are read under the server lock.
func (b *backend) authenticate(ctx context.Context, user, pass string) (string, error) {
	if !b.ready.Load() {
		return "", errNotReady
	}
	select {
	case b.gate <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-b.gate }()
	b.lock.Lock()
	defer b.lock.Unlock()
	u := b.env.ACL.User(user)
	if u == nil || !u.CheckPassword([]byte(pass)) {
		b.env.ACLAuthFailed(b.sess, user, "http")
		return "", nil
	}
	return u.Name, nil
}

// run executes cmds back to back under one hold of the server lock and
// returns their decoded replies. nowMs, when not nil, receives the
// server's clock as the commands run (the series explorer's windows end
// there). A command that fails has its error as its reply.
func (b *backend) run(ctx context.Context, nowMs *int64, cmds ...[]string) ([]value, error) {
	raw, err := b.runRaw(ctx, nowMs, cmds...)
	if err != nil {
		return nil, err
	}
	return decodeAll(raw)
}

// decodeAll decodes each of raw's replies.
func decodeAll(raw [][]byte) ([]value, error) {
	out := make([]value, len(raw))
	for i, r := range raw {
		v, err := decode(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// runRaw is run, the replies left as RESP bytes.
func (b *backend) runRaw(ctx context.Context, nowMs *int64, cmds ...[]string) ([][]byte, error) {
	return b.runThen(ctx, nowMs, nil, cmds...)
}

// runThen is runRaw, then, when then is not nil, then(sess, raw) under
// the same hold of the server lock: sess runs as the request's user, and
// the keyspace's clock and expiry mode are those its last command set.
// then reads what the engine offers the HTTP side directly (the exported
// series) and keeps the hold short; it never writes.
func (b *backend) runThen(ctx context.Context, nowMs *int64, then func(sess *engine.Session, raw [][]byte), cmds ...[]string) ([][]byte, error) {
	if !b.ready.Load() {
		return nil, errNotReady
	}
	select {
	case b.gate <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	user, _ := ctx.Value(userKey{}).(string)
	raw, err := b.execute(user, nowMs, cmds, then)
	// Large replies (TS.MGET of thousands of series) are not kept between
	// requests.
	if cap(b.w.Buf) > 1<<20 {
		b.w.Buf = nil
	}
	<-b.gate // the replies are copies: decoding needs neither the lock nor the gate
	return raw, err
}

// execute runs cmds under the server lock, as user ("" or "default": the
// default user), and returns copies of their raw replies. Env.Execute
// recovers a handler's panic; the deferred unlock covers anything else,
// so the lock is never left held.
func (b *backend) execute(user string, nowMs *int64, cmds [][]string, then func(*engine.Session, [][]byte)) ([][]byte, error) {
	raw := make([][]byte, len(cmds))
	b.lock.Lock()
	defer b.lock.Unlock()
	b.sess.User, b.sess.ACLUser = "default", nil
	if user != "" && user != "default" {
		u := b.env.ACL.User(user)
		if u == nil || !u.Enabled() {
			return nil, errUserGone
		}
		b.sess.User, b.sess.ACLUser = u.Name, u
	}
	if nowMs != nil {
		*nowMs = b.env.NowMs()
	}
	for i, c := range cmds {
		argv := make([][]byte, len(c))
		for j, a := range c {
			argv[j] = []byte(a)
		}
		b.w.Reset()
		b.sess.DB = 0
		b.env.Execute(b.sess, argv, &b.w)
		raw[i] = append([]byte(nil), b.w.Buf...)
	}
	if then != nil {
		b.sess.DB = 0
		then(b.sess, raw)
	}
	return raw, nil
}

// exportSeries reads the series filter matches for the HTTP exporter
// (metrics.ExportLatest), under the lock execute holds, if sess's user may
// run TS.MGET with that filter; a user who may not gets TS.MGET's own
// refusal, run through the engine so that it is logged as any refusal.
func (b *backend) exportSeries(sess *engine.Session, filter []string, known uint64, x *metrics.SeriesExport) error {
	argv := make([][]byte, 0, 3+len(filter))
	argv = append(argv, []byte("TS.MGET"), []byte("WITHLABELS"), []byte("FILTER"))
	for _, f := range filter {
		argv = append(argv, []byte(f))
	}
	if cmd := engine.Resolve(argv); cmd == nil || !allowed(b.env, sess, cmd, argv) {
		b.w.Reset()
		b.env.Execute(sess, argv, &b.w)
		if v, err := decode(b.w.Buf); err != nil || v.kind == '-' {
			if err == nil {
				err = errors.New(v.str)
			}
			return err
		}
	}
	return metrics.ExportLatest(b.env, sess.DB, filter, known, x)
}

// allowed says whether sess's user may run argv (cmd), without logging.
func allowed(env *engine.Env, sess *engine.Session, cmd *engine.Command, argv [][]byte) bool {
	r, _ := env.ACLDecide(env.UserOf(sess), cmd, argv)
	return r == acl.Allowed
}
