package commands_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// The same worker pool on redis-py (Debian's python3-redis): threads
// xreadgroup with a block timeout and xack, one worker dies holding
// entries, and xautoclaim hands them to a survivor. Every event is
// processed exactly once and nothing stays pending.
func TestStreamWorkerPoolRedisPy(t *testing.T) {
	py := testenv.PythonRedis(t)
	inst := servertest.Start(t)
	_, port, _ := strings.Cut(inst.Addr, ":")
	script := `
import sys, threading, redis
r = redis.Redis(port=int(sys.argv[1]), decode_responses=True)
r.xgroup_create("events", "workers", id="$", mkstream=True)
N = 1000
for i in range(N):
    r.xadd("events", {"n": str(i)})
# A worker that reads and dies before acknowledging.
lost = r.xreadgroup("workers", "crashed", {"events": ">"}, count=7)
assert len(lost[0][1]) == 7, lost
done, lock = [], threading.Lock()
def work(name):
    c = redis.Redis(port=int(sys.argv[1]), decode_responses=True)
    while True:
        res = c.xreadgroup("workers", name, {"events": ">"}, count=10, block=100)
        if not res:
            return
        for _, entries in res:
            for eid, fields in entries:
                with lock:
                    done.append(fields["n"])
                assert c.xack("events", "workers", eid) == 1
ts = [threading.Thread(target=work, args=("w%d" % i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
assert len(done) == N - 7, len(done)
summary = r.xpending("events", "workers")
assert summary["pending"] == 7 and summary["consumers"][0]["name"] == "crashed", summary
_, claimed, _ = r.xautoclaim("events", "workers", "reaper", min_idle_time=0, start_id="0-0", count=100)
for eid, fields in claimed:
    done.append(fields["n"])
    r.xack("events", "workers", eid)
assert sorted(done, key=int) == [str(i) for i in range(N)], "lost or doubled"
assert r.xpending("events", "workers")["pending"] == 0
groups = r.xinfo_groups("events")
assert groups[0]["name"] == "workers" and groups[0]["pending"] == 0, groups
print("ok")
`
	out, err := exec.Command(py, "-c", script, port).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py worker pool: %v\n%s", err, out)
	}
}
