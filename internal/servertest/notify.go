package servertest

import (
	"strings"
	"testing"
	"time"
)

// Notifications subscribes a new connection to every keyspace and
// keyevent channel of an instance and sets notify-keyspace-events to
// events there.
func (i *Instance) Notifications(t testing.TB, events string) *Conn {
	t.Helper()
	sub := i.Raw(t)
	if r := sub.Do("PSUBSCRIBE", "__key*@*__:*"); !strings.Contains(r, "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q", r)
	}
	if r := i.Raw(t).Do("CONFIG", "SET", "notify-keyspace-events", events); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET notify-keyspace-events %s: %q", events, r)
	}
	return sub
}

// ExpectEvents reads len(want) notifications from a Notifications
// connection, each as "channel payload", compares them with want in
// order, and then checks that nothing more arrives within 50 ms.
func ExpectEvents(t testing.TB, sub *Conn, want ...string) {
	t.Helper()
	var got []string
	for range want {
		v := MustStrings(t, sub.Read())
		if len(v) != 4 || v[0] != "pmessage" {
			t.Fatalf("unexpected frame %q", v)
		}
		got = append(got, v[2]+" "+v[3])
	}
	if r, err := sub.ReadErr(50 * time.Millisecond); err == nil {
		got = append(got, "(more) "+r)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n got: %q\nwant: %q", got, want)
	}
}

// KeyEvents is the two notifications of one event with K and E on: the
// keyspace one, then the keyevent one (database 0).
func KeyEvents(event, key string) []string {
	return []string{"__keyspace@0__:" + key + " " + event, "__keyevent@0__:" + event + " " + key}
}

// EventList concatenates KeyEvents of (event, key) pairs.
func EventList(pairs ...string) []string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, KeyEvents(pairs[i], pairs[i+1])...)
	}
	return out
}
