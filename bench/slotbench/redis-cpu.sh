#!/bin/bash
# Server CPU per request (ns) of redis-server with cluster mode off and on
# (one node owning every slot), by redis-benchmark: GET and SET, 50
# clients, pipeline 1 and 16, off and on in turn, 5 rounds. Ports 7201
# and 7202 on 127.0.0.1. Abacus's side is the Go benchmark
# BenchmarkClusterRoute (internal/engine); see docs/benchmarks.md.
set -e
dir=$(mktemp -d); cd "$dir"
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
start() { # $1 port, $2 cluster yes/no
  rm -f nodes-$1.conf
  redis-server --port $1 --bind 127.0.0.1 --save '' --appendonly no --cluster-enabled $2 --cluster-config-file nodes-$1.conf --dir "$dir" --daemonize yes --pidfile "$dir"/$1.pid --logfile "$dir"/$1.log
  sleep 0.5
  if [ $2 = yes ]; then redis-cli -p $1 cluster addslotsrange 0 16383 >/dev/null; sleep 1; fi
}
start 7201 no; start 7202 yes
tick=$(getconf CLK_TCK)
for round in 1 2 3 4 5; do
 for mode in off on; do
  port=7201; [ $mode = on ] && port=7202
  pid=$(cat $port.pid)
  for P in 1 16; do
   for t in get set; do
    n=200000; [ $P = 16 ] && n=1000000
    c0=$(cpu $pid)
    redis-benchmark -p $port -t $t -n $n -c 50 -P $P -r 1000 -q >/dev/null 2>&1
    c1=$(cpu $pid)
    echo "$mode P$P $t $(( (c1-c0) * 1000000000 / tick / n ))"
   done
  done
 done
done
redis-cli -p 7201 shutdown nosave || true; redis-cli -p 7202 shutdown nosave || true
rm -rf "$dir"
