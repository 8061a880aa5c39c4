package engine_test

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// What the ACL check adds to a command through Execute: GET and SET as the
// default user (no check) and as a user with ten key patterns, the one
// that matches last (bench/secbench's user, without the network).
func BenchmarkACLExecute(b *testing.B) {
	env, _, _ := txBenchEnv()
	rules := []string{"on", "nopass", "+@all"}
	for i := 0; i < 9; i++ {
		rules = append(rules, fmt.Sprintf("~nomatch%d:*", i))
	}
	rules = append(rules, "~key:*")
	if err := env.ACL.SetUser("bench", rules, false); err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i*7919))
	}
	// Every key exists before the first run, so that GET does the same
	// work for both users.
	setup := &engine.Session{ID: 2, Proto: 2, Authed: true, User: "default"}
	var w resp.Writer
	for _, k := range keys {
		env.Execute(setup, [][]byte{[]byte("SET"), k, []byte("value")}, &w)
		w.Reset()
	}
	for _, user := range []string{"default", "10patterns"} {
		s := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
		if user != "default" {
			s.ACLUser, s.User = env.ACL.User("bench"), "bench"
		}
		for _, cmd := range []string{"GET", "SET"} {
			b.Run(user+"/"+cmd, func(b *testing.B) {
				w := resp.Writer{Proto: 2}
				args := [][]byte{[]byte(cmd), nil, []byte("value")}
				if cmd == "GET" {
					args = args[:2]
				}
				b.ReportAllocs()
				defer reportCPU(b)()
				for i := 0; i < b.N; i++ {
					args[1] = keys[i&1023]
					env.Execute(s, args, &w)
					if w.Buf[0] == '-' {
						b.Fatal(string(w.Buf))
					}
					w.Reset()
				}
			})
		}
	}
}

// The check alone (ACL DRYRUN's decision, which commands take too), for
// the same users and commands: what BenchmarkACLExecute's difference is
// made of, measurable on a loaded machine where Execute's noise hides it.
func BenchmarkACLDecide(b *testing.B) {
	env, _, _ := txBenchEnv()
	rules := []string{"on", "nopass", "+@all"}
	for i := 0; i < 9; i++ {
		rules = append(rules, fmt.Sprintf("~nomatch%d:*", i))
	}
	rules = append(rules, "~key:*")
	if err := env.ACL.SetUser("bench", rules, false); err != nil {
		b.Fatal(err)
	}
	for _, user := range []string{"default", "10patterns"} {
		u := env.ACL.Default
		if user != "default" {
			u = env.ACL.User("bench")
		}
		for _, args := range [][][]byte{
			{[]byte("GET"), []byte("key:123456")},
			{[]byte("SET"), []byte("key:123456"), []byte("value")},
		} {
			cmd := engine.Resolve(args)
			b.Run(user+"/"+string(args[0]), func(b *testing.B) {
				defer reportCPU(b)()
				for i := 0; i < b.N; i++ {
					if u.Open() {
						continue // aclCheck's first step
					}
					if r, _ := env.ACLDecide(u, cmd, args); r != 0 {
						b.Fatal(r)
					}
				}
			})
		}
	}
}

// reportCPU adds the process's CPU time per operation to the benchmark's
// results ("cpu-ns/op"): on a machine shared with other jobs the wall
// time per operation grows with the load, the CPU time much less.
func reportCPU(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	b.ResetTimer()
	start := cpu()
	return func() {
		b.StopTimer()
		b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
	}
}
