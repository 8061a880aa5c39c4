package engine

// Ext is a slot of per-engine state for a package above the engine (the
// metrics commands' label indexes): every Env holds its own value of each
// slot, so two servers in one process share nothing and a dropped
// server's state goes with it. Slots are declared with NewExt from package
// variables (at init), before any Env is made.
type Ext[T any] struct{ id int }

// extMakers make each slot's value for a new Env; appended to only at init.
var extMakers []func(*Env) any

// NewExt declares a slot whose value make builds for each Env, when the
// Env is made. It must be called at package initialization.
func NewExt[T any](make func(*Env) *T) Ext[T] {
	extMakers = append(extMakers, func(e *Env) any { return make(e) })
	return Ext[T]{id: len(extMakers) - 1}
}

// Of is e's value of the slot.
func (x Ext[T]) Of(e *Env) *T { return e.exts[x.id].(*T) }

// makeExts builds e's value of every slot.
func (e *Env) makeExts() {
	e.exts = make([]any, len(extMakers))
	for i, make := range extMakers {
		e.exts[i] = make(e)
	}
}
