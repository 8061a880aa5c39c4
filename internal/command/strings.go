package command

import "github.com/abacusdb/abacus/internal/keyspace"

func init() {
	register(
		&Command{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, First: 1, Last: 1, ACL: "@string", Group: "string",
			Summary: "Returns the string value of a key.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdGet},
		&Command{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyOOM, First: 1, Last: 1, ACL: "@string", Group: "string",
			Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdSet},
	)
}

func cmdGet(c *Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Null()
		return
	}
	var tmp [24]byte
	c.W.Bulk(o.Bytes(tmp[:0]))
}

func cmdSet(c *Ctx) {
	if len(c.Args) != 3 {
		c.Error(ErrSyntax)
		return
	}
	c.DB.Set(c.Key(1), keyspace.NewString(c.Args[2]), false)
	c.Dirty(1)
	c.W.OK()
}
