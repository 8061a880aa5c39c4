package server

import (
	"errors"
	"net"
	"time"

	"github.com/abacusdb/abacus/internal/command"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
)

// client is one connection.
type client struct {
	srv  *Server
	conn net.Conn
	sess *command.Session
	w    resp.Writer
	// argv holds the arguments of every command of the current batch;
	// ends[i] is where command i's arguments end in argv.
	argv [][]byte
	ends []int
}

const (
	readChunk = 16 * 1024
	// maxBatch bounds how many commands run in one lock acquisition, so a
	// client pipelining a million commands does not hold off the others.
	maxBatch = 1024
)

// Redis's text for a connection refused by protected mode.
const deniedText = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

func (s *Server) accept(conn net.Conn) {
	s.Env.Stats.TotalConnections.Add(1)
	if s.closing.Load() {
		conn.Close()
		return
	}
	if s.Cfg.Bool(config.ProtectedMode) && s.Cfg.Str(config.RequirePass) == "" && !isLoopback(conn.RemoteAddr()) {
		s.Env.Stats.RejectedConns.Add(1)
		conn.Write([]byte(deniedText))
		conn.Close()
		return
	}
	s.clientsMu.Lock()
	if int64(len(s.clients)) >= s.Cfg.Int(config.MaxClients) {
		s.clientsMu.Unlock()
		s.Env.Stats.RejectedConns.Add(1)
		conn.Write([]byte("-" + command.ErrMaxClients + "\r\n"))
		conn.Close()
		return
	}
	now := s.Env.Clock.NowMs()
	sess := &command.Session{
		ID: s.nextID.Add(1), Addr: conn.RemoteAddr().String(), LAddr: conn.LocalAddr().String(),
		Proto: 2, Created: now, LastCmdAt: now, User: "default",
	}
	sess.Authed = s.Cfg.Str(config.RequirePass) == ""
	c := &client{srv: s, conn: conn, sess: sess, w: resp.Writer{Proto: 2}}
	s.clients[sess.ID] = c
	s.wg.Add(1)
	s.clientsMu.Unlock()
	if tc, ok := conn.(*net.TCPConn); ok {
		if ka := s.Cfg.Int(config.TCPKeepalive); ka > 0 {
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		}
		tc.SetNoDelay(true)
	}
	go c.serve()
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return true // unix sockets are local
	}
	return ta.IP.IsLoopback()
}

func (c *client) close() {
	c.conn.Close()
	c.srv.clientsMu.Lock()
	delete(c.srv.clients, c.sess.ID)
	c.srv.clientsMu.Unlock()
	c.srv.wg.Done()
}

// serve is the connection's goroutine: read, parse every complete command,
// run them under the lock, write the replies; until the client leaves, a
// protocol error, QUIT, CLIENT KILL or server shutdown.
func (c *client) serve() {
	defer c.close()
	buf := make([]byte, 0, readChunk)
	parser := resp.Parser{}
	for {
		if c.srv.closing.Load() || c.sess.Killed.Load() {
			return
		}
		if cap(buf)-len(buf) < readChunk/2 {
			nb := make([]byte, len(buf), 2*cap(buf)+readChunk)
			copy(nb, buf)
			buf = nb
		}
		if t := c.srv.Cfg.Int(config.Timeout); t > 0 {
			c.conn.SetReadDeadline(time.Now().Add(time.Duration(t) * time.Second))
		} else {
			c.conn.SetReadDeadline(time.Time{})
		}
		n, err := c.conn.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			c.srv.Env.Stats.NetInputBytes.Add(int64(n))
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !c.srv.closing.Load() && !c.sess.Killed.Load() {
				c.srv.Log.Debug("Closing idle client")
			}
			return
		}
		consumed, quit := c.process(buf, &parser)
		if consumed > 0 {
			rest := copy(buf, buf[consumed:])
			buf = buf[:rest]
			if cap(buf) > 4*readChunk && rest < readChunk {
				// A large request has been served: give the memory back.
				nb := make([]byte, rest, readChunk)
				copy(nb, buf)
				buf = nb
			}
		}
		c.sess.QueryBuf.Store(int64(len(buf)))
		if quit {
			return
		}
		if int64(len(buf)) > c.srv.Cfg.Int(config.ClientQueryBufferLimit) {
			c.srv.Log.Warn("Closing client that reached max query buffer length")
			return
		}
	}
}

// process parses and runs every complete command in buf, writes the
// replies, and returns the bytes consumed and whether to close.
func (c *client) process(buf []byte, parser *resp.Parser) (consumed int, quit bool) {
	for {
		parser.MaxBulk = c.srv.Cfg.Int(config.ProtoMaxBulkLen)
		parser.Authenticated = c.sess.Authed
		c.argv, c.ends = c.argv[:0], c.ends[:0]
		var perr error
		pos := consumed
		for len(c.ends) < maxBatch {
			args, used, err := parser.Parse(buf[pos:], c.argv)
			if err != nil {
				if err != resp.ErrIncomplete {
					perr = err
				}
				break
			}
			pos += used
			c.argv = args
			if len(c.ends) == 0 || c.ends[len(c.ends)-1] != len(c.argv) {
				c.ends = append(c.ends, len(c.argv))
			}
		}
		if len(c.ends) > 0 {
			c.runBatch()
			consumed = pos
			if c.sess.CloseAfterReply || c.sess.Killed.Load() {
				return consumed, true
			}
			if perr != nil || len(c.ends) == maxBatch {
				// Authentication may have changed what is acceptable, or
				// the batch was full: parse again from here.
				continue
			}
		} else {
			consumed = pos
		}
		if perr != nil {
			c.w.Error("ERR " + perr.Error())
			c.flush()
			return consumed, true
		}
		return consumed, false
	}
}

func (c *client) runBatch() {
	s := c.srv
	s.waitPause(c)
	c.w.Proto = c.sess.Proto
	s.mu.Lock()
	start := 0
	for _, end := range c.ends {
		args := c.argv[start:end]
		start = end
		mark := len(c.w.Buf)
		s.Env.Execute(c.sess, args, &c.w)
		c.applyReplyMode(mark)
		if c.sess.CloseAfterReply {
			break
		}
	}
	s.mu.Unlock()
	c.flush()
}

// applyReplyMode drops the reply just written when CLIENT REPLY says so.
func (c *client) applyReplyMode(mark int) {
	switch c.sess.Reply {
	case command.ReplyOff:
		c.w.Buf = c.w.Buf[:mark]
	case command.ReplySkip:
		// The CLIENT REPLY SKIP command itself is answered with nothing;
		// the next command's reply is dropped.
		c.w.Buf = c.w.Buf[:mark]
		c.sess.Reply = command.ReplySkipNext
	case command.ReplySkipNext:
		c.w.Buf = c.w.Buf[:mark]
		c.sess.Reply = command.ReplyOn
	}
}

func (c *client) flush() {
	if len(c.w.Buf) == 0 {
		return
	}
	c.conn.SetWriteDeadline(time.Time{})
	n, _ := c.conn.Write(c.w.Buf)
	c.srv.Env.Stats.NetOutputBytes.Add(int64(n))
	if cap(c.w.Buf) > 1<<20 {
		c.w.Buf = nil
	} else {
		c.w.Reset()
	}
}

// waitPause holds a client while CLIENT PAUSE is in force.
func (s *Server) waitPause(c *client) {
	for {
		until := s.pauseUntil.Load()
		now := s.Env.Clock.NowMs()
		if until == 0 || now >= until || s.closing.Load() {
			return
		}
		if s.pauseWrite.Load() && !c.batchWrites() {
			return
		}
		d := time.Duration(until-now) * time.Millisecond
		if d > 10*time.Millisecond {
			d = 10 * time.Millisecond
		}
		time.Sleep(d)
	}
}

// batchWrites reports whether the batch has a command that may write.
func (c *client) batchWrites() bool {
	start := 0
	for _, end := range c.ends {
		if cmd := c.srv.Env.Cmd(c.argv[start:end]); cmd != nil && cmd.Flags&(command.FlagWrite|command.FlagMayReplicate) != 0 {
			return true
		}
		start = end
	}
	return false
}
