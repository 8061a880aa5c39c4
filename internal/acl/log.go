package acl

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count      int64
	Reason     string
	Context    string // toplevel, multi, lua
	Object     string
	Username   string
	Created    int64 // unix ms of the last occurrence
	ClientInfo string
}

// Log is ACL LOG's list, newest first.
type Log struct {
	Entries []*LogEntry
}

// groupingMs is how close in time a repeat must be to join an entry.
const groupingMs = 60000

// Add records a denial as addACLLogEntry does: an entry among the ten
// newest with the same reason, context, object and user, seen within a
// minute, is counted again and moves to the front; otherwise a new one
// goes in front and the list is cut to maxLen.
func (l *Log) Add(e LogEntry, maxLen int) {
	for i := 0; i < len(l.Entries) && i < 10; i++ {
		c := l.Entries[i]
		d := e.Created - c.Created
		if c.Reason == e.Reason && c.Context == e.Context && c.Object == e.Object && c.Username == e.Username && d <= groupingMs && d >= -groupingMs {
			c.Count++
			c.Created, c.ClientInfo = e.Created, e.ClientInfo
			copy(l.Entries[1:i+1], l.Entries[:i])
			l.Entries[0] = c
			return
		}
	}
	e.Count = 1
	l.Entries = append([]*LogEntry{&e}, l.Entries...)
	if len(l.Entries) > maxLen {
		l.Entries = l.Entries[:maxLen]
	}
}

// Reset empties the log.
func (l *Log) Reset() { l.Entries = nil }
