package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// The CLUSTER command (cluster.c clusterCommand), with Redis 7.0's
// subcommands, arities, flags and texts.

func init() {
	st := engine.FlagStale
	adm := engine.FlagAdmin | engine.FlagStale
	sub := func(arity int, f engine.Flag, h func(*engine.Ctx, *Cluster), summary string) *engine.Command {
		return &engine.Command{Arity: arity, Flags: f, Summary: summary, Since: "3.0.0", Complexity: "O(1)",
			Handler: func(c *engine.Ctx) {
				cl, ok := c.Env.Cluster().(*Cluster)
				if !ok {
					c.Error("ERR This instance has cluster support disabled")
					return
				}
				h(c, cl)
			}}
	}
	withTips := func(c *engine.Command, tips string) *engine.Command { c.Tips = tips; return c }
	engine.Register(&engine.Command{Name: "cluster", Arity: -2, Group: "cluster",
		Summary: "A container for Redis Cluster commands.", Since: "3.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"info":                  withTips(sub(2, st, cmdInfo, "Returns information about the state of a node."), "nondeterministic_output"),
			"myid":                  sub(2, st, cmdMyID, "Returns the ID of a node."),
			"nodes":                 withTips(sub(2, st, cmdNodes, "Returns the cluster configuration for a node."), "nondeterministic_output"),
			"slots":                 withTips(sub(2, st, cmdSlots, "Returns the mapping of cluster slots to nodes."), "nondeterministic_output"),
			"shards":                withTips(sub(2, st, cmdShards, "Returns the mapping of cluster slots to shards."), "nondeterministic_output"),
			"keyslot":               sub(3, st, cmdKeySlot, "Returns the hash slot for a key."),
			"countkeysinslot":       sub(3, st, cmdCountKeysInSlot, "Returns the number of keys in a hash slot."),
			"getkeysinslot":         withTips(sub(4, st, cmdGetKeysInSlot, "Returns the key names in a hash slot."), "nondeterministic_output"),
			"addslots":              sub(-3, adm|engine.FlagNoAsyncLoading, cmdAddSlots, "Assigns new hash slots to a node."),
			"delslots":              sub(-3, adm|engine.FlagNoAsyncLoading, cmdAddSlots, "Sets hash slots as unbound for a node."),
			"addslotsrange":         sub(-4, adm|engine.FlagNoAsyncLoading, cmdAddSlotsRange, "Assigns new hash slot ranges to a node."),
			"delslotsrange":         sub(-4, adm|engine.FlagNoAsyncLoading, cmdAddSlotsRange, "Sets hash slot ranges as unbound for a node."),
			"flushslots":            sub(2, adm|engine.FlagNoAsyncLoading, cmdFlushSlots, "Deletes all slots information from a node."),
			"setslot":               sub(-4, adm|engine.FlagNoAsyncLoading, cmdSetSlot, "Binds a hash slot to a node."),
			"meet":                  sub(-4, adm|engine.FlagNoAsyncLoading, cmdMeet, "Forces a node to handshake with another node."),
			"forget":                sub(3, adm|engine.FlagNoAsyncLoading, cmdForget, "Removes a node from the nodes table."),
			"replicate":             sub(3, adm|engine.FlagNoAsyncLoading, cmdReplicate, "Configure a node as replica of a master node."),
			"replicas":              withTips(sub(3, adm, cmdReplicas, "Lists the replica nodes of a master node."), "nondeterministic_output"),
			"slaves":                withTips(sub(3, adm, cmdReplicas, "Lists the replica nodes of a master node."), "nondeterministic_output"),
			"failover":              sub(-2, adm|engine.FlagNoAsyncLoading, cmdFailover, "Forces a replica to perform a manual failover of its master."),
			"reset":                 sub(-2, adm|engine.FlagNoScript, cmdReset, "Resets a node."),
			"saveconfig":            sub(2, adm|engine.FlagNoAsyncLoading, cmdSaveConfig, "Forces a node to save the cluster configuration to disk."),
			"bumpepoch":             withTips(sub(2, adm|engine.FlagNoAsyncLoading, cmdBumpEpoch, "Advances the cluster config epoch."), "nondeterministic_output"),
			"set-config-epoch":      sub(3, adm|engine.FlagNoAsyncLoading, cmdSetConfigEpoch, "Sets the configuration epoch for a new node."),
			"count-failure-reports": withTips(sub(3, adm, cmdCountFailureReports, "Returns the number of active failure reports active for a node."), "nondeterministic_output"),
			"links":                 withTips(sub(2, st, cmdLinks, "Returns a list of all TCP links to and from peer nodes."), "nondeterministic_output"),
			"help":                  sub(2, engine.FlagLoading|engine.FlagStale, cmdHelp, "Returns helpful text about the different subcommands."),
		}})
}

var helpLines = []string{
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
}

// cmdHelp is CLUSTER HELP; its last line says "Prints", not the
// "Print" of the other commands' help (cluster.c has its own).
func cmdHelp(c *engine.Ctx, _ *Cluster) {
	c.W.Array(len(helpLines) + 3)
	c.W.Simple("CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range helpLines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}

func (c *Cluster) sortedNodes() []*Node {
	out := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// slotArg parses a slot or replies Redis's error.
func slotArg(c *engine.Ctx, i int) (int, bool) {
	n, err := strconv.ParseInt(string(c.Args[i]), 10, 64)
	if err != nil || n < 0 || n >= NumSlots {
		c.Error("ERR Invalid or out of range slot")
		return 0, false
	}
	return int(n), true
}

func cmdInfo(c *engine.Ctx, cl *Cluster) { c.W.Verbatim("txt", cl.infoText()) }

func (cl *Cluster) infoText() string {
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for j := 0; j < NumSlots; j++ {
		n := cl.slots[j]
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.failed():
			fail++
		case n.timedOut():
			pfail++
		default:
			ok++
		}
	}
	state := "fail"
	if cl.stateOK {
		state = "ok"
	}
	myEpoch := cl.myself.masterOf().configEpoch
	var b strings.Builder
	fmt.Fprintf(&b, "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n",
		state, assigned, ok, pfail, fail, len(cl.nodes), cl.size, cl.currentEpoch, myEpoch)
	var tot int64
	for i, v := range cl.statsSent {
		if v != 0 {
			tot += v
			fmt.Fprintf(&b, "cluster_stats_messages_%s_sent:%d\r\n", msgTypeNames[i], v)
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_sent:%d\r\n", tot)
	tot = 0
	for i, v := range cl.statsRecv {
		if v != 0 {
			tot += v
			fmt.Fprintf(&b, "cluster_stats_messages_%s_received:%d\r\n", msgTypeNames[i], v)
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_received:%d\r\n", tot)
	fmt.Fprintf(&b, "total_cluster_links_buffer_limit_exceeded:%d\r\n", cl.linksOverLimit)
	return b.String()
}

func cmdMyID(c *engine.Ctx, cl *Cluster) { c.W.BulkString(cl.myself.name) }

func cmdNodes(c *engine.Ctx, cl *Cluster) { c.W.Verbatim("txt", cl.nodesText(0, cl.usePPort(c.S))) }

// endpoint writes a node's preferred endpoint (cluster-preferred-endpoint-type).
func (cl *Cluster) endpoint(w *resp.Writer, n *Node) {
	switch cl.e.Cfg.Str(config.ClusterPreferredEndpointType) {
	case "hostname":
		if n.hostname != "" {
			w.BulkString(n.hostname)
		} else {
			w.BulkString("?")
		}
	case "unknown-endpoint":
		w.Null()
	default:
		w.BulkString(n.ip)
	}
}

func (cl *Cluster) nodeReply(w *resp.Writer, n *Node, usePPort bool) {
	w.Array(4)
	cl.endpoint(w, n)
	if usePPort && n.pport != 0 {
		w.Int(int64(n.pport))
	} else {
		w.Int(int64(n.port))
	}
	w.BulkString(n.name)
	typ := cl.e.Cfg.Str(config.ClusterPreferredEndpointType)
	l := 0
	if typ != "ip" {
		l++
	}
	if typ != "hostname" && n.hostname != "" {
		l++
	}
	w.Map(l)
	if typ != "ip" {
		w.BulkString("ip")
		w.BulkString(n.ip)
	}
	if typ != "hostname" && n.hostname != "" {
		w.BulkString("hostname")
		w.BulkString(n.hostname)
	}
}

func (cl *Cluster) replicaAvailable(n *Node) bool {
	if n.failed() {
		return false
	}
	off := n.replOffset
	if n == cl.myself {
		off = cl.repl.Offset()
	}
	return off != 0
}

func cmdSlots(c *engine.Ctx, cl *Cluster) {
	type rng struct {
		n          *Node
		start, end int
	}
	var rs []rng
	for j := 0; j < NumSlots; j++ {
		n := cl.slots[j]
		if n == nil {
			continue
		}
		if len(rs) > 0 && rs[len(rs)-1].n == n && rs[len(rs)-1].end == j-1 {
			rs[len(rs)-1].end = j
			continue
		}
		rs = append(rs, rng{n, j, j})
	}
	pp := cl.usePPort(c.S)
	c.W.Array(len(rs))
	for _, r := range rs {
		var reps []*Node
		for _, s := range r.n.replicas {
			if cl.replicaAvailable(s) {
				reps = append(reps, s)
			}
		}
		c.W.Array(3 + len(reps))
		c.W.Int(int64(r.start))
		c.W.Int(int64(r.end))
		cl.nodeReply(c.W, r.n, pp)
		for _, s := range reps {
			cl.nodeReply(c.W, s, pp)
		}
	}
}

func cmdShards(c *engine.Ctx, cl *Cluster) {
	var masters []*Node
	for _, n := range cl.sortedNodes() {
		if n.isMaster() {
			masters = append(masters, n)
		}
	}
	c.W.Array(len(masters))
	for _, m := range masters {
		c.W.Map(2)
		c.W.BulkString("slots")
		rs := slotRanges(&m.slots)
		c.W.Array(2 * len(rs))
		for _, r := range rs {
			c.W.Int(int64(r[0]))
			c.W.Int(int64(r[1]))
		}
		c.W.BulkString("nodes")
		nodes := append([]*Node{m}, m.replicas...)
		c.W.Array(len(nodes))
		for _, n := range nodes {
			cl.shardNode(c.W, n)
		}
	}
}

func (cl *Cluster) shardNode(w *resp.Writer, n *Node) {
	// With a TLS bus a node's port is its TLS port and pport its
	// plaintext one: both are shown, each only when known.
	port, tlsPort := n.port, 0
	if cl.tlsOn() {
		port, tlsPort = n.pport, n.port
	}
	pairs := 6
	if port != 0 {
		pairs++
	}
	if tlsPort != 0 {
		pairs++
	}
	if n.hostname != "" {
		pairs++
	}
	w.Map(pairs)
	w.BulkString("id")
	w.BulkString(n.name)
	if port != 0 {
		w.BulkString("port")
		w.Int(int64(port))
	}
	if tlsPort != 0 {
		w.BulkString("tls-port")
		w.Int(int64(tlsPort))
	}
	w.BulkString("ip")
	w.BulkString(n.ip)
	w.BulkString("endpoint")
	switch cl.e.Cfg.Str(config.ClusterPreferredEndpointType) {
	case "hostname":
		if n.hostname != "" {
			w.BulkString(n.hostname)
		} else {
			w.BulkString("?")
		}
	case "unknown-endpoint":
		w.BulkString("?")
	default:
		w.BulkString(n.ip)
	}
	if n.hostname != "" {
		w.BulkString("hostname")
		w.BulkString(n.hostname)
	}
	off := n.replOffset
	if n == cl.myself {
		off = cl.repl.Offset()
	}
	w.BulkString("role")
	if n.isSlave() {
		w.BulkString("replica")
	} else {
		w.BulkString("master")
	}
	w.BulkString("replication-offset")
	w.Int(off)
	w.BulkString("health")
	switch {
	case n.failed():
		w.BulkString("fail")
	case n.isSlave() && off == 0:
		w.BulkString("loading")
	default:
		w.BulkString("online")
	}
}

func cmdKeySlot(c *engine.Ctx, _ *Cluster) { c.W.Int(int64(keySlot(c.Args[2]))) }

func cmdCountKeysInSlot(c *engine.Ctx, cl *Cluster) {
	n, ok := c.Int(2)
	if !ok {
		return
	}
	if n < 0 || n >= NumSlots {
		c.Error("ERR Invalid slot")
		return
	}
	c.W.Int(int64(cl.keysInSlot(int(n))))
}

func cmdGetKeysInSlot(c *engine.Ctx, cl *Cluster) {
	slot, ok := c.Int(2)
	if !ok {
		return
	}
	count, ok := c.Int(3)
	if !ok {
		return
	}
	if slot < 0 || slot >= NumSlots || count < 0 {
		c.Error("ERR Invalid slot or number of keys")
		return
	}
	keys := cl.getKeysInSlot(int(slot), int(min(count, 1<<40)))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

// checkSlots validates slots to add or delete (checkSlotAssignmentsOrReply).
func (cl *Cluster) checkSlots(c *engine.Ctx, seen []bool, del bool, lo, hi int) bool {
	for j := lo; j <= hi; j++ {
		if del && cl.slots[j] == nil {
			c.Errorf("ERR Slot %d is already unassigned", j)
			return false
		}
		if !del && cl.slots[j] != nil {
			c.Errorf("ERR Slot %d is already busy", j)
			return false
		}
		if seen[j] {
			c.Errorf("ERR Slot %d specified multiple times", j)
			return false
		}
		seen[j] = true
	}
	return true
}

func (cl *Cluster) applySlots(seen []bool, del bool) {
	for j, s := range seen {
		if !s {
			continue
		}
		cl.setOpen(&cl.importing, j, nil)
		if del {
			cl.delSlot(j)
		} else {
			cl.addSlot(cl.myself, j)
		}
	}
	cl.updateState()
	cl.todoSave = true
	cl.saveConfigIfNeeded()
}

func cmdAddSlots(c *engine.Ctx, cl *Cluster) {
	del := ascii.EqualFold(c.Args[1], "delslots")
	for i := 2; i < len(c.Args); i++ {
		if _, ok := slotArg(c, i); !ok {
			return
		}
	}
	seen := make([]bool, NumSlots)
	for i := 2; i < len(c.Args); i++ {
		j, _ := slotArg(c, i)
		if !cl.checkSlots(c, seen, del, j, j) {
			return
		}
	}
	cl.applySlots(seen, del)
	c.W.OK()
}

func cmdAddSlotsRange(c *engine.Ctx, cl *Cluster) {
	if len(c.Args)%2 == 1 {
		c.Errorf("ERR wrong number of arguments for '%s' command", strings.ToLower("cluster|"+string(c.Args[1])))
		return
	}
	del := ascii.EqualFold(c.Args[1], "delslotsrange")
	seen := make([]bool, NumSlots)
	for i := 2; i < len(c.Args); i += 2 {
		lo, ok := slotArg(c, i)
		if !ok {
			return
		}
		hi, ok := slotArg(c, i+1)
		if !ok {
			return
		}
		if lo > hi {
			c.Errorf("ERR start slot number %d is greater than end slot number %d", lo, hi)
			return
		}
		if !cl.checkSlots(c, seen, del, lo, hi) {
			return
		}
	}
	cl.applySlots(seen, del)
	c.W.OK()
}

func cmdFlushSlots(c *engine.Ctx, cl *Cluster) {
	if cl.e.KS.DBs[0].Len() != 0 {
		c.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	cl.delNodeSlots(cl.myself)
	cl.updateState()
	cl.todoSave = true
	cl.saveConfigIfNeeded()
	c.W.OK()
}

func cmdSetSlot(c *engine.Ctx, cl *Cluster) {
	if cl.myself.isSlave() {
		c.Error("ERR Please use SETSLOT only with masters.")
		return
	}
	slot, ok := slotArg(c, 2)
	if !ok {
		return
	}
	action := strings.ToLower(string(c.Args[3]))
	switch {
	case action == "migrating" && len(c.Args) == 5:
		if cl.slots[slot] != cl.myself {
			c.Errorf("ERR I'm not the owner of hash slot %d", slot)
			return
		}
		n := masterArg(c, cl, 4)
		if n == nil {
			return
		}
		cl.setOpen(&cl.migrating, slot, n)
	case action == "importing" && len(c.Args) == 5:
		if cl.slots[slot] == cl.myself {
			c.Errorf("ERR I'm already the owner of hash slot %d", slot)
			return
		}
		n := masterArg(c, cl, 4)
		if n == nil {
			return
		}
		cl.setOpen(&cl.importing, slot, n)
	case action == "stable" && len(c.Args) == 4:
		cl.setOpen(&cl.importing, slot, nil)
		cl.setOpen(&cl.migrating, slot, nil)
	case action == "node" && len(c.Args) == 5:
		n := cl.lookup(string(c.Args[4]))
		if n == nil {
			c.Errorf("ERR Unknown node %s", c.Args[4])
			return
		}
		if n.isSlave() {
			c.Error("ERR Target node is not a master")
			return
		}
		keys := -1
		count := func() int {
			if keys < 0 {
				keys = cl.keysInSlot(slot)
			}
			return keys
		}
		if cl.slots[slot] == cl.myself && n != cl.myself && count() != 0 {
			c.Errorf("ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
			return
		}
		if cl.migrating[slot] != nil && count() == 0 {
			cl.setOpen(&cl.migrating, slot, nil)
		}
		wasMine := cl.slots[slot] == cl.myself
		cl.delSlot(slot)
		cl.addSlot(n, slot)
		if wasMine && n != cl.myself && cl.myself.numSlots == 0 && cl.e.Cfg.Bool(config.ClusterAllowReplicaMigration) {
			cl.e.Log.Warn("Configuration change detected. Reconfiguring myself as a replica of " + n.name)
			cl.setMyMaster(n)
		}
		if n == cl.myself && cl.importing[slot] != nil {
			if cl.bumpEpochWithoutConsensus() {
				cl.e.Log.Warn(fmt.Sprintf("configEpoch updated after importing slot %d", slot))
			}
			cl.setOpen(&cl.importing, slot, nil)
			cl.broadcastPong(false)
		}
	default:
		c.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		return
	}
	cl.todoSave = true
	cl.saveConfigIfNeeded()
	cl.updateState()
	c.W.OK()
}

func cmdMeet(c *engine.Ctx, cl *Cluster) {
	if len(c.Args) > 5 {
		c.Error("ERR Unknown subcommand or wrong number of arguments for 'meet'. Try CLUSTER HELP.")
		return
	}
	port, err := strconv.ParseInt(string(c.Args[3]), 10, 64)
	if err != nil {
		c.Errorf("ERR Invalid TCP base port specified: %s", c.Args[3])
		return
	}
	cport := port + 10000
	if len(c.Args) == 5 {
		cport, err = strconv.ParseInt(string(c.Args[4]), 10, 64)
		if err != nil {
			c.Errorf("ERR Invalid TCP bus port specified: %s", c.Args[4])
			return
		}
	}
	if !cl.startHandshake(string(c.Args[2]), int(port), int(cport)) {
		c.Errorf("ERR Invalid node address specified: %s:%s", c.Args[2], c.Args[3])
		return
	}
	c.W.OK()
}

// startHandshake adds a node in handshake with a random name that the
// cron will MEET (clusterStartHandshake); false for a bad address.
func (cl *Cluster) startHandshake(ip string, port, cport int) bool {
	addr := parseIP(ip)
	if addr == "" || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return false
	}
	for _, n := range cl.nodes {
		if n.inHandshake() && n.ip == addr && n.port == port && n.cport == cport {
			return true // already in progress
		}
	}
	n := cl.newNode("", flagHandshake|flagMeet)
	n.ip, n.port, n.cport = addr, port, cport
	cl.addNode(n)
	return true
}

func cmdForget(c *engine.Ctx, cl *Cluster) {
	n := cl.lookup(string(c.Args[2]))
	switch {
	case n == nil:
		c.Errorf("ERR Unknown node %s", c.Args[2])
		return
	case n == cl.myself:
		c.Error("ERR I tried hard but I can't forget myself...")
		return
	case cl.myself.isSlave() && cl.myself.master == n:
		c.Error("ERR Can't forget my master!")
		return
	}
	cl.blacklist[n.name] = cl.now() + 60_000
	cl.delNode(n)
	cl.updateState()
	cl.saveConfigIfNeeded()
	c.W.OK()
}

func cmdReplicate(c *engine.Ctx, cl *Cluster) {
	n := cl.lookup(string(c.Args[2]))
	switch {
	case n == nil:
		c.Errorf("ERR Unknown node %s", c.Args[2])
		return
	case n == cl.myself:
		c.Error("ERR Can't replicate myself")
		return
	case n.isSlave():
		c.Error("ERR I can only replicate a master, not a replica.")
		return
	case cl.myself.isMaster() && (cl.myself.numSlots != 0 || cl.e.KS.DBs[0].Len() != 0):
		c.Error("ERR To set a master the node must be empty and without assigned slots.")
		return
	}
	cl.setMyMaster(n)
	cl.updateState()
	cl.saveConfigIfNeeded()
	c.W.OK()
}

func cmdReplicas(c *engine.Ctx, cl *Cluster) {
	n := cl.lookup(string(c.Args[2]))
	if n == nil {
		c.Errorf("ERR Unknown node %s", c.Args[2])
		return
	}
	if n.isSlave() {
		c.Error("ERR The specified node is not a master")
		return
	}
	c.W.Array(len(n.replicas))
	for _, r := range n.replicas {
		c.W.BulkString(cl.describe(r, cl.usePPort(c.S)))
	}
}

func cmdCountFailureReports(c *engine.Ctx, cl *Cluster) {
	n := cl.lookup(string(c.Args[2]))
	if n == nil {
		c.Errorf("ERR Unknown node %s", c.Args[2])
		return
	}
	c.W.Int(int64(cl.failureReports(n)))
}

func cmdFailover(c *engine.Ctx, cl *Cluster) {
	force, takeover := false, false
	if len(c.Args) > 3 {
		c.Error("ERR Unknown subcommand or wrong number of arguments for 'failover'. Try CLUSTER HELP.")
		return
	}
	if len(c.Args) == 3 {
		switch {
		case c.ArgIs(2, "force"):
			force = true
		case c.ArgIs(2, "takeover"):
			force, takeover = true, true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	me := cl.myself
	switch {
	case me.isMaster():
		c.Error("ERR You should send CLUSTER FAILOVER to a replica")
		return
	case me.master == nil:
		c.Error("ERR I'm a replica but my master is unknown to me")
		return
	case !force && (me.master.failed() || me.master.link == nil):
		c.Error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
		return
	}
	cl.resetManualFailover()
	cl.mfEnd = cl.now() + mfTimeout
	switch {
	case takeover:
		cl.e.Log.Warn("Taking over the master (user request).")
		cl.bumpEpochWithoutConsensus()
		cl.replaceMyMaster()
	case force:
		cl.e.Log.Warn("Forced failover user request accepted.")
		cl.mfCanStart = true
	default:
		cl.e.Log.Warn("Manual failover user request accepted.")
		if l := me.master.link; l != nil {
			l.send(encodeHeader(cl.header(msgMFStart), hdrLen))
		}
	}
	c.W.OK()
}

func cmdReset(c *engine.Ctx, cl *Cluster) {
	hard := false
	if len(c.Args) > 3 {
		c.Error("ERR Unknown subcommand or wrong number of arguments for 'reset'. Try CLUSTER HELP.")
		return
	}
	if len(c.Args) == 3 {
		switch {
		case c.ArgIs(2, "hard"):
			hard = true
		case c.ArgIs(2, "soft"):
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if cl.myself.isMaster() && cl.e.KS.DBs[0].Len() != 0 {
		c.Error("ERR CLUSTER RESET can't be called with master nodes containing keys")
		return
	}
	cl.reset(hard)
	c.W.OK()
}

func (cl *Cluster) reset(hard bool) {
	me := cl.myself
	if me.isSlave() {
		cl.setAsMaster(me)
		cl.repl.Promote()
		for _, db := range cl.e.KS.DBs {
			db.Flush()
		}
	}
	for j := 0; j < NumSlots; j++ {
		cl.setOpen(&cl.migrating, j, nil)
		cl.setOpen(&cl.importing, j, nil)
		cl.delSlot(j)
	}
	cl.resetManualFailover()
	for _, n := range cl.nodes {
		if n != me {
			cl.delNode(n)
		}
	}
	if hard {
		cl.currentEpoch, cl.lastVoteEpoch = 0, 0
		me.configEpoch = 0
		cl.e.Log.Warn("configEpoch set to 0 via CLUSTER RESET HARD")
		delete(cl.nodes, me.name)
		me.name = randomName()
		cl.nodes[me.name] = me
		cl.e.Log.Info("Node hard reset, now I'm " + me.name)
	}
	cl.todoSave = true
	cl.saveConfigIfNeeded()
	cl.updateState()
}

func cmdSaveConfig(c *engine.Ctx, cl *Cluster) {
	if err := cl.saveConfigSync(); err != nil {
		c.Errorf("ERR error saving the cluster node config: %s", config.ErrnoText(err))
		return
	}
	c.W.OK()
}

func cmdBumpEpoch(c *engine.Ctx, cl *Cluster) {
	word := "STILL"
	if cl.bumpEpochWithoutConsensus() {
		word = "BUMPED"
		cl.saveConfigIfNeeded()
	}
	c.W.Simple(fmt.Sprintf("%s %d", word, cl.myself.configEpoch))
}

func cmdSetConfigEpoch(c *engine.Ctx, cl *Cluster) {
	epoch, ok := c.Int(2)
	if !ok {
		return
	}
	switch {
	case epoch < 0:
		c.Errorf("ERR Invalid config epoch specified: %d", epoch)
	case len(cl.nodes) > 1:
		c.Error("ERR The user can assign a config epoch only when the node does not know any other node.")
	case cl.myself.configEpoch != 0:
		c.Error("ERR Node config epoch is already non-zero")
	default:
		cl.myself.configEpoch = uint64(epoch)
		cl.e.Log.Warn(fmt.Sprintf("configEpoch set to %d via CLUSTER SET-CONFIG-EPOCH", epoch))
		if cl.currentEpoch < uint64(epoch) {
			cl.currentEpoch = uint64(epoch)
		}
		cl.todoSave = true
		cl.saveConfigIfNeeded()
		cl.updateState()
		c.W.OK()
	}
}

func cmdLinks(c *engine.Ctx, cl *Cluster) {
	var ls []*link
	for _, n := range cl.sortedNodes() {
		if n.link != nil {
			ls = append(ls, n.link)
		}
		if n.inbound != nil {
			ls = append(ls, n.inbound)
		}
	}
	c.W.Array(len(ls))
	for _, l := range ls {
		c.W.Map(6)
		c.W.BulkString("direction")
		if l.inbound {
			c.W.BulkString("from")
		} else {
			c.W.BulkString("to")
		}
		c.W.BulkString("node")
		c.W.BulkString(l.node.name)
		c.W.BulkString("create-time")
		c.W.Int(l.ctime)
		c.W.BulkString("events")
		c.W.BulkString(linkEvents(l))
		c.W.BulkString("send-buffer-allocated")
		c.W.Int(l.allocated.Load())
		c.W.BulkString("send-buffer-used")
		c.W.Int(l.pending.Load())
	}
}

// masterArg is the known primary node named by argument i, or nil after
// answering Redis's error for an unknown node or a replica.
func masterArg(c *engine.Ctx, cl *Cluster, i int) *Node {
	n := cl.lookup(string(c.Args[i]))
	switch {
	case n == nil:
		c.Errorf("ERR I don't know about node %s", c.Args[i])
		return nil
	case n.isSlave():
		c.Error("ERR Target node is not a master")
		return nil
	}
	return n
}
