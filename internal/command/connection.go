package command

func init() {
	register(
		&Command{Name: "ping", Arity: -1, Flags: FlagFast | FlagStale | FlagLoading, ACL: "@connection", Group: "connection",
			Summary: "Returns the server's liveliness response.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdPing},
		&Command{Name: "echo", Arity: 2, Flags: FlagFast | FlagStale | FlagLoading, ACL: "@connection", Group: "connection",
			Summary: "Returns the given string.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdEcho},
		&Command{Name: "quit", Arity: -1, Flags: FlagNoScript | FlagStale | FlagLoading | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: "@connection", Group: "connection",
			Summary: "Closes the connection.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdQuit},
		&Command{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@connection", Group: "connection",
			Summary: "Changes the selected database.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdSelect},
	)
}

func cmdPing(c *Ctx) {
	if len(c.Args) > 2 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	if len(c.Args) == 2 {
		c.W.Bulk(c.Args[1])
		return
	}
	c.W.Simple("PONG")
}

func cmdEcho(c *Ctx) { c.W.Bulk(c.Args[1]) }

func cmdQuit(c *Ctx) {
	c.W.OK()
	c.S.CloseAfterReply = true
}

func cmdSelect(c *Ctx) {
	id, ok := parseInt(c.Args[1])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if id < 0 || id >= int64(len(c.Env.KS.DBs)) {
		c.Error(ErrDBIndex)
		return
	}
	c.S.DB = int(id)
	c.DB = c.Env.KS.DBs[id]
	c.W.OK()
}
