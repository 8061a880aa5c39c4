package conn_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Messages a batch of PUBLISHes pushes to a subscriber are gathered until
// the batch ends (pushround.go): the subscriber still receives them in
// publishing order, before the reply to any command it sends once the
// publisher has its replies, and its own PUBLISH's message before that
// PUBLISH's reply; with the AOF on as well, and with the event loop and a
// goroutine per client.
func TestGatheredPushesOrder(t *testing.T) {
	for _, mode := range pushModes {
		t.Run(mode.name, func(t *testing.T) {
			inst, resp2, resp3 := twoSubscribers(t, mode)
			pub := inst.Raw(t)
			const n = 16
			for round := 0; round < 3; round++ {
				var cmds [][]string
				for i := 0; i < n; i++ {
					cmds = append(cmds, []string{"PUBLISH", "ch", strconv.Itoa(round*n + i)})
				}
				pub.Write(servertest.Cat(cmds...))
				for i := 0; i < n; i++ {
					servertest.ExpectReply(t, pub.Read(), ":2\r\n")
				}
				// The RESP3 subscriber asks something of its own, then
				// publishes to itself in the same pipeline.
				resp3.Write(servertest.Cat([]string{"PING"}, []string{"PUBLISH", "ch", "self"}))
				for i := 0; i < n; i++ {
					m := strconv.Itoa(round*n + i)
					servertest.ExpectReply(t, resp2.Read(), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$"+strconv.Itoa(len(m))+"\r\n"+m+"\r\n")
					servertest.ExpectReply(t, resp3.Read(), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$"+strconv.Itoa(len(m))+"\r\n"+m+"\r\n")
				}
				servertest.ExpectReply(t, resp3.Read(), "+PONG\r\n")
				servertest.ExpectReply(t, resp3.Read(), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nself\r\n")
				servertest.ExpectReply(t, resp3.Read(), ":2\r\n")
				servertest.ExpectReply(t, resp2.Read(), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nself\r\n")
			}
		})
	}
}

// A subscriber is closed by its pubsub limit while one batch (an EXEC of
// PUBLISHes) pushes five times the limit to it: the limit is checked as
// the batch's messages are gathered, so its unread output (INFO's recent
// peak) stops near the limit rather than at the batch's size.
func TestGatheredPushesLimit(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("client-output-buffer-limit", "pubsub 1mb 0 0"))
	slow := inst.Raw(t)
	slow.Do("SUBSCRIBE", "feed")
	const msgs, size = 100, 50 << 10
	payload := []byte(strings.Repeat("x", size))
	cmds := [][]string{{"MULTI"}}
	for i := 0; i < msgs; i++ {
		copy(payload, msgTag(i))
		cmds = append(cmds, []string{"PUBLISH", "feed", string(payload)})
	}
	pub := inst.Raw(t)
	pub.Write(servertest.Cat(append(cmds, []string{"EXEC"})...))
	for i := 0; i <= msgs; i++ {
		pub.Read() // +OK, +QUEUED
	}
	if r := pub.Read(); !strings.HasPrefix(r, "*100\r\n:1\r\n") {
		t.Fatalf("EXEC: %.40q", r)
	}
	slow.ExpectClosed()
	info := pub.Do("INFO", "everything")
	if v := servertest.InfoField(info, "client_output_buffer_limit_disconnections"); v != "1" {
		t.Errorf("disconnections %s, want 1", v)
	}
	peak, _ := strconv.Atoi(servertest.InfoField(info, "client_recent_max_output_buffer"))
	// The limit, Redis's uncounted 16 KB, and the message that passed it.
	if peak > 1<<20+16<<10+size+1024 {
		t.Errorf("recent peak output %d: the limit was not checked as messages were gathered", peak)
	}
}

// A message published in the batch that then starts a busy script is in
// the subscriber's output before the BUSY error its next command gets
// while the script runs, as in Redis, where it was appended first.
func TestGatheredPushesBeforeBusy(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", "10"))
	sub := inst.Raw(t)
	sub.Do("HELLO", "3")
	sub.Do("SUBSCRIBE", "ch")
	pub := inst.Raw(t)
	pub.Write(servertest.Cat([]string{"PUBLISH", "ch", "a"}, []string{"EVAL", "while true do end", "0"}))
	other := inst.Raw(t)
	for !strings.HasPrefix(other.Do("PING"), "-BUSY") {
	}
	sub.Write(servertest.Encode("PING"))
	servertest.ExpectReply(t, sub.Read(), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\na\r\n")
	if r := sub.Read(); !strings.HasPrefix(r, "-BUSY") {
		t.Errorf("PING during the script: %q", r)
	}
	servertest.ExpectReply(t, other.Do("SCRIPT", "KILL"), "+OK\r\n")
	servertest.ExpectReply(t, pub.Read(), ":1\r\n")
}
