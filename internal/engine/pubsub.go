package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/resp"
)

// Pub/sub: the server's registry of channel, pattern and shard-channel
// subscriptions, and the delivery of messages to subscribers through
// Session.Push (the connection queues them behind the replies already
// due, or appends them to the replies of the client running now, so a
// client publishing to itself sees the message before PUBLISH's reply, as
// in Redis). Everything here runs under the server lock.
//
// A message published while an all-or-nothing script runs waits for the
// script's end and is dropped if the script rolls back, like the script's
// writes and effects: its subscribers never see what did not happen.

// SubKind is what a subscription names: a channel, a glob pattern of
// channels, or a shard channel.
type SubKind uint8

// Subscription kinds.
const (
	SubChannel SubKind = iota
	SubPattern
	SubShard
)

// subVerbs are each kind's reply names and the start of its message
// frames (messageHead) in RESP2 and RESP3.
var subVerbs = [3]struct {
	sub, unsub string
	head       [2]string
}{
	{"subscribe", "unsubscribe", messageHead("message", 3)},
	{"psubscribe", "punsubscribe", messageHead("pmessage", 4)},
	{"ssubscribe", "sunsubscribe", messageHead("smessage", 3)},
}

// SubVerb is the name of kind's subscribe (or, with unsub, unsubscribe)
// confirmation.
func SubVerb(kind SubKind, unsub bool) string {
	if unsub {
		return subVerbs[kind].unsub
	}
	return subVerbs[kind].sub
}

// sessionSubs is one client's subscriptions: per kind, the name and the
// order it was made in (unsubscribing from all answers in that order).
type sessionSubs struct {
	names [3]map[string]uint64
	seq   uint64
}

type pubsubState struct {
	// subs maps each kind's channel (or pattern) to its subscribers, in
	// the order they subscribed (Redis's list per channel: messages go out
	// in that order). A subscriber is in a list at most once.
	subs [3]map[string][]*Session
	// enc is the encoding buffer deliver reuses: Push copies what it is
	// given.
	enc [2][]byte
	// hold is set while an all-or-nothing script runs: messages wait in
	// held until it ends.
	hold bool
	held []heldMessage
	// notifyText and notifyBits cache notify-keyspace-events, parsed
	// (notify.go).
	notifyText string
	notifyBits int
	// patGen changes whenever a pattern is subscribed to or unsubscribed
	// from; notifyPats caches what notifications need of the patterns
	// for a generation (notify_hooks.go).
	patGen     uint64
	notifyPats notifyPats
}

type heldMessage struct {
	kind    SubKind
	channel []byte
	msg     []byte
}

func (p *pubsubState) init() {
	for i := range p.subs {
		p.subs[i] = map[string][]*Session{}
	}
}

// SubCount is how many kind subscriptions s has.
func (s *Session) SubCount(kind SubKind) int {
	if s.subs == nil {
		return 0
	}
	return len(s.subs.names[kind])
}

// Subscribed reports whether s has any subscription (Redis's
// CLIENT_PUBSUB: RESP2 clients are then limited to the subscription
// commands, and the client's output falls in the pubsub class).
func (s *Session) Subscribed() bool { return s.subs != nil }

// Subscribe subscribes s to name, reporting false if it already was.
func (e *Env) Subscribe(s *Session, kind SubKind, name string) bool {
	if s.subs == nil {
		s.subs = &sessionSubs{}
		s.Flags += "P"
	}
	m := s.subs.names[kind]
	if m == nil {
		m = map[string]uint64{}
		s.subs.names[kind] = m
	}
	if _, ok := m[name]; ok {
		return false
	}
	s.subs.seq++
	m[name] = s.subs.seq
	if kind == SubPattern {
		e.ps.patGen++
	}
	e.ps.subs[kind][name] = append(e.ps.subs[kind][name], s)
	return true
}

// Unsubscribe removes s's subscription to name, reporting false if there
// was none.
func (e *Env) Unsubscribe(s *Session, kind SubKind, name string) bool {
	if s.subs == nil {
		return false
	}
	m := s.subs.names[kind]
	if _, ok := m[name]; !ok {
		return false
	}
	delete(m, name)
	if kind == SubPattern {
		e.ps.patGen++
	}
	if list := e.ps.subs[kind][name]; len(list) > 0 {
		// A linear search, as Redis's listSearchKey.
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(e.ps.subs[kind], name)
		} else {
			e.ps.subs[kind][name] = list
		}
	}
	if len(s.subs.names[0])+len(s.subs.names[1])+len(s.subs.names[2]) == 0 {
		s.subs = nil
		s.Flags = strings.Replace(s.Flags, "P", "", 1)
	}
	return true
}

// Subscriptions lists s's kind subscriptions in the order they were made.
func (s *Session) Subscriptions(kind SubKind) []string {
	if s.subs == nil {
		return nil
	}
	m := s.subs.names[kind]
	out := make([]string, 0, len(m))
	for name := range m {
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b string) int { return int(m[a]) - int(m[b]) })
	return out
}

// unsubscribeAll drops every subscription of s without a reply (RESET,
// disconnection).
func (e *Env) unsubscribeAll(s *Session) {
	for s.subs != nil {
		for kind := range s.subs.names {
			for name := range s.subs.names[kind] {
				e.Unsubscribe(s, SubKind(kind), name)
				if s.subs == nil {
					return
				}
			}
		}
	}
}

// Publish sends msg to channel's subscribers (and, for a channel, to
// clients whose patterns match it) and returns how many deliveries that
// made, counting a client once per matching subscription, as Redis does.
// The channel is looked up and framed as it is: a PUBLISH allocates
// nothing on its way to the subscribers' Push.
func (e *Env) Publish(kind SubKind, channel, msg []byte) int {
	if e.ps.hold {
		e.ps.held = append(e.ps.held, heldMessage{kind, append([]byte(nil), channel...), append([]byte(nil), msg...)})
		return e.receivers(kind, channel)
	}
	return e.deliver(kind, channel, msg)
}

// receivers counts the deliveries a message to channel would make.
func (e *Env) receivers(kind SubKind, channel []byte) int {
	n := len(e.ps.subs[kind][string(channel)])
	if kind == SubChannel && len(e.ps.subs[SubPattern]) > 0 {
		matching(e.patternList(), channel, func(pat string) {
			n += len(e.ps.subs[SubPattern][pat])
		})
	}
	return n
}

func (e *Env) deliver(kind SubKind, channel, msg []byte) int {
	n := 0
	if list := e.ps.subs[kind][string(channel)]; len(list) > 0 {
		n += e.pushMessage(list, &subVerbs[kind].head, "", channel, msg)
	}
	if kind != SubChannel || len(e.ps.subs[SubPattern]) == 0 {
		return n
	}
	matching(e.patternList(), channel, func(pat string) {
		n += e.pushMessage(e.ps.subs[SubPattern][pat], &subVerbs[SubPattern].head, pat, channel, msg)
	})
	return n
}

// pushMessage pushes a message frame to each subscriber in list, encoded
// once per protocol in e.ps.enc, and returns len(list). CLIENT REPLY OFF
// does not silence messages, as in Redis (CLIENT_PUSHING).
func (e *Env) pushMessage(list []*Session, head *[2]string, pattern string, channel, msg []byte) int {
	made := [2]bool{}
	for _, s := range list {
		if s.Push == nil {
			continue
		}
		i := 0
		if s.Proto == 3 {
			i = 1
		}
		if !made[i] {
			e.ps.enc[i] = appendMessage(e.ps.enc[i][:0], head[i], pattern, channel, msg)
			made[i] = true
		}
		s.Push(e.ps.enc[i])
	}
	if cap(e.ps.enc[0]) > 64<<10 || cap(e.ps.enc[1]) > 64<<10 {
		// A large message's buffer is not kept.
		e.ps.enc = [2][]byte{}
	}
	return len(list)
}

// messageHead is the start of a message frame up to its verb: the
// header of an array (RESP2) or push (RESP3) of n elements and the verb
// as a bulk string.
func messageHead(verb string, n int) [2]string {
	tail := strconv.Itoa(n) + "\r\n$" + strconv.Itoa(len(verb)) + "\r\n" + verb + "\r\n"
	return [2]string{"*" + tail, ">" + tail}
}

// appendMessage appends a message frame: [verb, pattern (if any),
// channel, msg], head being its start up to the verb (messageHead).
func appendMessage(b []byte, head, pattern string, channel, msg []byte) []byte {
	b = append(b, head...)
	if pattern != "" {
		b = resp.AppendBulk(b, pattern)
	}
	b = resp.AppendBulk(b, channel)
	return resp.AppendBulk(b, msg)
}

// pubsubHold and pubsubRelease bracket an all-or-nothing script: what it
// published is delivered when it succeeds and dropped when it rolls back.
func (e *Env) pubsubHold() { e.ps.hold = true }

func (e *Env) pubsubRelease(deliver bool) {
	held := e.ps.held
	e.ps.hold, e.ps.held = false, nil
	if !deliver {
		return
	}
	for _, m := range held {
		e.deliver(m.kind, m.channel, m.msg)
	}
}

// Channels lists the kind channels (not patterns) that have subscribers
// and match pattern ("" matches all), sorted.
func (e *Env) Channels(kind SubKind, pattern string) []string {
	var out []string
	for name := range e.ps.subs[kind] {
		if pattern == "" || glob.Match(pattern, name, false) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// NumSub is how many clients subscribe to kind channel name.
func (e *Env) NumSub(kind SubKind, name string) int { return len(e.ps.subs[kind][name]) }

// NumPatterns is how many distinct patterns have subscribers.
func (e *Env) NumPatterns() int { return len(e.ps.subs[SubPattern]) }

// NumChannels is how many distinct kind channels have subscribers (INFO
// pubsub_channels, pubsubshard_channels).
func (e *Env) NumChannels(kind SubKind) int { return len(e.ps.subs[kind]) }
