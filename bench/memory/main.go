// Command memory loads the same data sets into Abacus and redis-server,
// each into a freshly started pair of servers, and prints the RSS each
// needs to hold them; for the "also follows" sets it also times SINTERCARD
// and SINTERSTORE side by side.
//
//	go run ./bench/memory                       # every data set
//	go run ./bench/memory -sets zset,alsofollows
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

type dataset struct {
	name string
	load func(c *harness.Conn)
	// verify holds commands whose replies must be the same on both
	// servers: counts of every key the data set loads and a sample value,
	// so that a partly refused or partly lost load is not reported.
	verify [][]string
}

var datasets = []dataset{
	{"zset: 1,000,000 members in one key", func(c *harness.Conn) {
		r := rand.New(rand.NewPCG(1, 2))
		args := []string{"ZADD", "z"}
		for i := 0; i < 1000000; i++ {
			args = append(args, strconv.FormatFloat(r.Float64()*1e9, 'f', 3, 64), "member:"+strconv.Itoa(i))
			if len(args) >= 1002 {
				c.Send(args...)
				args = args[:2]
			}
		}
		if len(args) > 2 {
			c.Send(args...)
		}
	}, [][]string{{"DBSIZE"}, {"ZCARD", "z"}, {"ZSCORE", "z", "member:999999"}, {"ZRANK", "z", "member:500000"}}},
	{"hash: 100,000 keys of 100 fields", func(c *harness.Conn) {
		for i := 0; i < 100000; i++ {
			args := []string{"HSET", "h:" + strconv.Itoa(i)}
			for j := 0; j < 100; j++ {
				args = append(args, "field:"+strconv.Itoa(j), "value:"+strconv.Itoa(i+j))
			}
			c.Send(args...)
		}
	}, [][]string{{"DBSIZE"}, {"HLEN", "h:0"}, {"HLEN", "h:99999"}, {"HGET", "h:54321", "field:99"}}},
	{"hash: 1,000,000 keys of 5 fields", func(c *harness.Conn) {
		for i := 0; i < 1000000; i++ {
			args := []string{"HSET", "h:" + strconv.Itoa(i)}
			for j := 0; j < 5; j++ {
				args = append(args, "field:"+strconv.Itoa(j), "value:"+strconv.Itoa(i+j))
			}
			c.Send(args...)
		}
	}, [][]string{{"DBSIZE"}, {"HLEN", "h:0"}, {"HLEN", "h:999999"}, {"HGET", "h:654321", "field:4"}}},
	{"alsofollows: sets of 5,000,000 and 7,500,000 ids sharing 2,000,000", loadAlsoFollows, [][]string{
		{"DBSIZE"}, {"SCARD", "follows:a"}, {"SCARD", "follows:b"},
		{"SISMEMBER", "follows:a", "1000000"}, {"SISMEMBER", "follows:b", "1000007"}, {"SISMEMBER", "follows:a", strconv.Itoa(5000000*7 + 1000000)}, {"SISMEMBER", "follows:b", strconv.Itoa(10499999*7 + 1000000)},
	}},
}

// loadAlsoFollows builds two sets of user ids, in random order: A holds
// 5,000,000 ids, B 7,500,000, and 2,000,000 ids are in both.
func loadAlsoFollows(c *harness.Conn) {
	r := rand.New(rand.NewPCG(3, 4))
	// Ids 0..2M-1 are shared; A adds 3M more, B 5.5M more, from disjoint ranges.
	add := func(key string, ids []int) {
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		args := []string{"SADD", key}
		for _, id := range ids {
			args = append(args, strconv.Itoa(id*7+1000000))
			if len(args) >= 1002 {
				c.Send(args...)
				args = args[:2]
			}
		}
		if len(args) > 2 {
			c.Send(args...)
		}
	}
	a := make([]int, 0, 5000000)
	b := make([]int, 0, 7500000)
	for i := 0; i < 2000000; i++ {
		a = append(a, i)
		b = append(b, i)
	}
	for i := 0; i < 3000000; i++ {
		a = append(a, 2000000+i)
	}
	for i := 0; i < 5500000; i++ {
		b = append(b, 5000000+i)
	}
	add("follows:a", a)
	add("follows:b", b)
}

func main() {
	only := flag.String("sets", "", "comma-separated data set prefixes (zset, hash, alsofollows); default all")
	reps := flag.Int("reps", 5, "alsofollows: timed repetitions of each command")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()

	harness.Header("RSS growth after loading, each data set into freshly started servers.")
	fmt.Println("| data set | abacus MiB | redis MiB | abacus/redis |")
	fmt.Println("|---|---|---|---|")
	var timings []string
	for _, ds := range datasets {
		if *only != "" && !matches(ds.name, *only) {
			continue
		}
		servers := harness.StartBoth(bin)
		var grown [2]float64
		var check [2][]string
		for i, s := range servers {
			base := s.RSS()
			c := s.Dial()
			start := time.Now()
			ds.load(c)
			for _, v := range ds.verify {
				check[i] = append(check[i], c.Do(v...))
			}
			c.Close()
			fmt.Fprintf(os.Stderr, "%s: %s loaded in %v\n", s.Name, ds.name, time.Since(start).Round(time.Millisecond))
			grown[i] = float64(s.RSS()-base) / (1 << 20)
		}
		for j := range ds.verify {
			if check[0][j] != check[1][j] {
				harness.Fatal("%s: %v replied %q on abacus, %q on redis", ds.name, ds.verify[j], check[0][j], check[1][j])
			}
		}
		fmt.Fprintf(os.Stderr, "verified %v -> %q\n", ds.verify, check[0])
		fmt.Printf("| %s | %.1f | %.1f | %.2f |\n", ds.name, grown[0], grown[1], grown[0]/grown[1])
		if strings.HasPrefix(ds.name, "alsofollows") {
			timings = append(timings, timeIntersections(servers, *reps)...)
		}
		for _, s := range servers {
			s.Stop()
		}
	}
	if len(timings) > 0 {
		fmt.Printf("\nAlso follows, median of %d runs each:\n\n", *reps)
		fmt.Println("| command | abacus ms | redis ms | speedup |")
		fmt.Println("|---|---|---|---|")
		for _, t := range timings {
			fmt.Println(t)
		}
	}
}

func matches(name, only string) bool {
	for _, w := range strings.Split(only, ",") {
		if strings.HasPrefix(name, w) {
			return true
		}
	}
	return false
}

// timeIntersections times SINTERCARD and SINTERSTORE on both servers,
// alternating, and returns table rows.
func timeIntersections(servers []*harness.Server, reps int) []string {
	cmds := [][]string{
		{"SINTERCARD", "2", "follows:a", "follows:b"},
		{"SINTERSTORE", "follows:both", "follows:a", "follows:b"},
	}
	var rows []string
	for _, cmd := range cmds {
		ms := map[string][]float64{}
		var replies [2]string
		for r := 0; r < reps; r++ {
			for i, s := range servers {
				c := s.Dial()
				start := time.Now()
				replies[i] = c.Do(cmd...)
				ms[s.Name] = append(ms[s.Name], float64(time.Since(start).Microseconds())/1000)
				c.Close()
			}
		}
		if replies[0] != replies[1] {
			harness.Fatal("%s: abacus replied %q, redis %q", cmd[0], replies[0], replies[1])
		}
		a, b := harness.Median(ms["abacus"]), harness.Median(ms["redis"])
		rows = append(rows, fmt.Sprintf("| %s (reply %s) | %.2f | %.1f | %.0fx |", cmd[0], replies[0], a, b, b/a))
	}
	return rows
}
