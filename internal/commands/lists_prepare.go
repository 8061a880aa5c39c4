package commands

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// A push of very many values is packed into list nodes ahead, without the
// server lock (engine.Prepare): Peek takes the state of the end pushed
// to, Build packs the values for that state, and listPush splices the
// nodes when the list's end is still in that state (list.PushPrepared),
// else pushes as usual. A key of another type, or a missing key for
// LPUSHX/RPUSHX, prepares nothing: the handler answers as usual.
var (
	prepFront  = prepPush(true, false)
	prepBack   = prepPush(false, false)
	prepFrontX = prepPush(true, true)
	prepBackX  = prepPush(false, true)
)

// prepPush is the Prepare of LPUSH (front), RPUSH, and with onlyExisting
// LPUSHX and RPUSHX.
func prepPush(front, onlyExisting bool) *engine.Prepare {
	return &engine.Prepare{
		Peek: func(e *engine.Env, db *keyspace.DB, args engine.Args) any {
			return peekPush(e, db, args, front, onlyExisting)
		},
		Build: buildPush,
	}
}

type pushState struct {
	end   list.EndState
	front bool
}

func peekPush(e *engine.Env, db *keyspace.DB, args engine.Args, front, onlyExisting bool) any {
	var key [1][]byte
	o := db.Peek(string(args.AppendRange(key[:0], 1, 2)[0]))
	if o == nil && onlyExisting {
		return nil
	}
	if o == nil {
		return pushState{list.NewEnd(int(e.Cfg.Int(config.ListMaxListpackSize))), front}
	}
	l, ok := o.Val().(*list.List)
	if !ok {
		return nil
	}
	return pushState{l.End(front), front}
}

func buildPush(state any, args engine.Args) any {
	st := state.(pushState)
	if p := list.Prepare(st.end, st.front, pushValues{args}); p != nil {
		return p
	}
	return nil
}

// pushValues is the values of a push: its arguments after the key.
type pushValues struct{ args engine.Args }

func (v pushValues) Len() int { return v.args.Len() - 2 }

func (v pushValues) AppendRange(dst [][]byte, from, to int) [][]byte {
	return v.args.AppendRange(dst, from+2, to+2)
}
