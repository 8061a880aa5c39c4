#!/bin/bash
# usage: run.sh fsync
# Side-by-side SET throughput with appendonly yes: abacus and redis-server in
# turn (A B A B A B), redis-benchmark -t set -n 100000 -c 50 -r 100000, pipeline
# 1 and 16. Build first: go build -o abacus ./cmd/abacus; then
#   ABACUS=./abacus bench/aof/run.sh always|everysec|no
fs=$1
mkdir -p ${WORK:-/tmp/bench_aof}
res=""
for round in 1 2 3; do
  for who in abacus redis; do
    d=${WORK:-/tmp/bench_aof}/$who; rm -rf $d; mkdir -p $d
    if [ $who = abacus ]; then
      ${ABACUS:-./abacus} --port 23811 --bind 127.0.0.1 --dir $d --save "" --appendonly yes --appendfsync $fs > $d/log 2>&1 &
    else
      redis-server --port 23811 --bind 127.0.0.1 --dir $d --save "" --appendonly yes --appendfsync $fs --logfile $d/log &
    fi
    pid=$!
    sleep 0.5
    for P in 1 16; do
      r=$(redis-benchmark -p 23811 -t set -n 100000 -c 50 -P $P -r 100000 -q 2>/dev/null | grep -o '[0-9.]* requests' | head -1)
      echo "$fs $who P=$P round=$round $r"
    done
    kill $pid; wait $pid 2>/dev/null
  done
done
