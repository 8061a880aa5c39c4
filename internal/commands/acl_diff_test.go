package commands_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// aclUsers are the users of the differential matrix: SETUSER rules as
// one would write them for a metrics server (a writer of ts:*, a reader,
// an operator), and rules that exercise each part of the grammar.
var aclUsers = map[string][]string{
	"writer":   {"on", ">w", "~ts:*", "+@write", "+@read", "-@dangerous"},
	"reader":   {"on", ">r", "%R~*", "+@read", "-keys"},
	"wonly":    {"on", ">x", "%W~out:*", "%R~in:*", "+@all", "-@admin"},
	"cmds":     {"on", ">c", "allkeys", "-@all", "+get", "+config|get", "+select|0", "+@hash", "-hdel"},
	"selector": {"on", ">s", "~a:*", "+get", "(~b:* +set)", "(%R~c:* +@string)"},
	"none":     {"on", ">n", "resetkeys", "-@all"},
	"off":      {"off", ">o", "allkeys", "+@all"},
}

// aclMatrix are the commands each user tries.
var aclMatrix = [][]string{
	{"GET", "ts:1"}, {"GET", "a:1"}, {"GET", "b:1"}, {"GET", "c:1"}, {"GET", "in:1"}, {"GET", "out:1"},
	{"SET", "ts:1", "v"}, {"SET", "a:1", "v"}, {"SET", "b:1", "v"}, {"SET", "c:1", "v"}, {"SET", "out:1", "v"},
	{"APPEND", "c:1", "x"}, {"STRLEN", "c:1"}, {"EXISTS", "c:1"}, {"EXISTS", "x"},
	{"MGET", "ts:1", "a:1"}, {"MSET", "ts:1", "1", "ts:2", "2"},
	{"HSET", "ts:h", "f", "v"}, {"HGET", "ts:h", "f"}, {"HDEL", "ts:h", "f"},
	{"DEL", "ts:1"}, {"KEYS", "nomatch*"}, {"FLUSHALL"}, {"CONFIG", "GET", "maxmemory"}, {"CONFIG", "SET", "maxmemory", "0"},
	{"SELECT", "0"}, {"SELECT", "1"}, {"PING"}, {"ECHO", "x"}, {"DBSIZE"},
	{"LPUSH", "ts:l", "a"}, {"RPOPLPUSH", "in:l", "out:l"}, {"LMOVE", "in:l", "out:l", "LEFT", "RIGHT"},
	{"ZUNIONSTORE", "out:z", "1", "in:z"}, {"COPY", "in:1", "out:1"},
	{"EVAL", "return redis.call('GET', KEYS[1])", "1", "ts:1"},
	{"EVAL", "return redis.call('SET', KEYS[1], '1')", "1", "a:1"},
	{"ACL", "WHOAMI"}, {"ACL", "LIST"},
	{"MULTI"}, {"GET", "x"}, {"EXEC"},
}

// TestACLMatrixDiff: every user of aclUsers tries every command of
// aclMatrix on Abacus and on redis-server; the replies and what ACL LOG
// recorded must be the same.
func TestACLMatrixDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	admin := servertest.DialDiff(t, inst.Addr, r.Addr)
	names := make([]string, 0, len(aclUsers))
	for n := range aclUsers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		admin.Do(append([]string{"ACL", "SETUSER", n}, aclUsers[n]...)...)
	}
	admin.Do("ACL", "USERS")
	for _, n := range names {
		d := servertest.DialDiff(t, inst.Addr, r.Addr)
		pass := ""
		for _, rule := range aclUsers[n] {
			if strings.HasPrefix(rule, ">") {
				pass = rule[1:]
			}
		}
		d.Do("AUTH", n, "wrong")
		if d.Do("AUTH", n, pass) != "+OK\r\n" {
			continue
		}
		for _, c := range aclMatrix {
			d.Do(c...)
		}
		for _, c := range aclMatrix {
			admin.Do(append([]string{"ACL", "DRYRUN", n}, c...)...)
		}
	}
	// The log: the same entries, in the same order, with the same counts
	// (age and client details differ by nature).
	req := servertest.Encode("ACL", "LOG", "200")
	admin.A.Write(req)
	admin.R.Write(req)
	a := strings.Split(maskACLLog(admin.A.Read()), "\r\n")
	b := strings.Split(maskACLLog(admin.R.Read()), "\r\n")
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			t.Fatalf("ACL LOG differs at line %d:\n abacus: %q\n  redis: %q", i, a[max(0, i-12):min(len(a), i+4)], b[max(0, i-12):min(len(b), i+4)])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("ACL LOG: %d lines, redis %d", len(a), len(b))
	}
	admin.Do("ACL", "LOG", "RESET")
	admin.Do("ACL", "LOG")
}

// maskACLLog keeps the count, reason, context, object and username of
// each ACL LOG entry.
func maskACLLog(s string) string {
	var out []string
	lines := strings.Split(s, "\r\n")
	for i := 0; i < len(lines); i++ {
		switch lines[i] {
		case "age-seconds", "client-info":
			i += 2 // the field's value: a length line and the bytes
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\r\n")
}

// TestACLSetUserDiff: SETUSER sequences, good and bad, and what GETUSER,
// LIST and the errors say. The single commands of a description come in
// Redis's command dictionary order, random per process, so they are
// compared as a set.
func TestACLSetUserDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	d := servertest.DialDiff(t, inst.Addr, r.Addr)
	d.Mask = sortSingleRules
	d.Lines(`ACL CAT hash string
ACL GENPASS 8 8
acl log 1 2
ACL SETUSER u1 on >p1 ~a* %R~r* &ch* +get +config|get +@hash -hset (+set ~s*)
ACL GETUSER u1
ACL LIST
ACL SETUSER u1 <p1 >p2 #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
ACL GETUSER u1
ACL SETUSER u1 !5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 nopass
ACL GETUSER u1
ACL SETUSER u1 resetpass resetkeys resetchannels clearselectors
ACL GETUSER u1
ACL SETUSER u2 %RW~x %W~y %R~z ~z allchannels
ACL GETUSER u2
ACL SETUSER u2 ~*
ACL SETUSER u2 ~more
ACL SETUSER u2 &more
ACL SETUSER u3 +@all -@admin +select|0 +select|1
ACL GETUSER u3
ACL SETUSER u3 reset
ACL GETUSER u3
ACL SETUSER u4 %~x
ACL SETUSER u4 %RWR~x
ACL SETUSER u4 bogus
ACL SETUSER u4 #abc
ACL SETUSER u4 <nope
ACL SETUSER u4 +@nope
ACL SETUSER u4 +nosuch
ACL SETUSER u4 -config|foo
ACL SETUSER u4 +config|get|x
ACL SETUSER u4 +debug|
ACL SETUSER u4 (+get ~x
ACL SETUSER u4 ( )
ACL GETUSER u4
ACL USERS
ACL DELUSER u1 u2 nosuch
ACL DELUSER default
ACL USERS
ACL WHOAMI
ACL CAT nosuch
ACL GENPASS 0
ACL GENPASS x
ACL DRYRUN nosuch get x
ACL DRYRUN u3 nosuch
ACL DRYRUN u3 get
ACL SAVE
ACL LOAD
ACL FOO
ACL LOG x`)
}

// sortSingleRules sorts the words of each bulk string that holds
// command rules, after the leading +@all/-@all and categories.
func sortSingleRules(s string) string {
	lines := strings.Split(s, "\r\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || (f[0] != "+@all" && f[0] != "-@all" && !strings.HasPrefix(l, "user ")) {
			continue
		}
		var head, singles []string
		for _, w := range f {
			if strings.HasPrefix(w, "+") || strings.HasPrefix(w, "-") {
				if strings.HasPrefix(w[1:], "@") {
					head = append(head, w)
				} else {
					singles = append(singles, w)
				}
				continue
			}
			head = append(head, w)
		}
		sort.Strings(singles)
		lines[i] = strings.Join(append(head, singles...), " ")
	}
	return strings.Join(lines, "\r\n")
}
