package tlsconf

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"sync"
	"time"
)

// sessionCache gives Go's stateless session tickets the lifetime OpenSSL's
// server session cache gives sessions: a ticket names its session by an
// id, and resumes it only while the id is among the last size ones issued
// (0: no limit) and younger than timeout seconds.
type sessionCache struct {
	mu      sync.Mutex
	size    int
	timeout int64
	live    map[uint64]int64 // id: unix seconds it was issued
	order   []uint64         // ids, oldest first
	next    uint64
	now     func() int64
}

func newSessionCache(size int, timeout int64) *sessionCache {
	return &sessionCache{size: size, timeout: timeout, live: map[uint64]int64{}, now: func() int64 { return time.Now().Unix() }}
}

// ticketTag marks the session data the cache adds to a ticket.
var ticketTag = []byte("abacus-session\x00")

func (s *sessionCache) install(tc *tls.Config) {
	tc.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		id, at := s.issue()
		b := append([]byte(nil), ticketTag...)
		b = binary.BigEndian.AppendUint64(b, id)
		b = binary.BigEndian.AppendUint64(b, uint64(at))
		ss.Extra = append(ss.Extra, b)
		return tc.EncryptTicket(cs, ss)
	}
	tc.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := tc.DecryptTicket(identity, cs)
		if err != nil || ss == nil {
			return nil, err
		}
		for _, x := range ss.Extra {
			if len(x) == len(ticketTag)+16 && bytes.HasPrefix(x, ticketTag) {
				id := binary.BigEndian.Uint64(x[len(ticketTag):])
				at := int64(binary.BigEndian.Uint64(x[len(ticketTag)+8:]))
				if s.valid(id, at) {
					return ss, nil
				}
			}
		}
		return nil, nil // a full handshake
	}
}

func (s *sessionCache) issue() (uint64, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id, at := s.next, s.now()
	s.live[id] = at
	s.order = append(s.order, id)
	// Expired ids go first, then the oldest beyond the size.
	for len(s.order) > 0 {
		old := s.order[0]
		if s.live[old]+s.timeout > at && (s.size == 0 || len(s.order) <= s.size) {
			break
		}
		delete(s.live, old)
		s.order = s.order[1:]
	}
	return id, at
}

func (s *sessionCache) valid(id uint64, at int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	issued, ok := s.live[id]
	return ok && issued == at && s.now()-at < s.timeout
}
