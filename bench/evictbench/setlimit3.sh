#!/bin/bash
# SET at the limit, three servers in the same rounds: CPU µs per request.
# usage: setlimit3.sh BEFORE_BINARY AFTER_BINARY [rounds] [requests] [pipeline] [value bytes]
# (two abacus builds and redis-server on ports 17931-17933, maxmemory 32mb,
# allkeys-lru, each filled with 1M SETs of random keys of 10M first).
BEFORE=$1; AFTER=$2; R=${3:-3}; N=${4:-300000}; P=${5:-16}; D=${6:-3}
declare -A PORT PID
PORT[before]=17931; PORT[after]=17932; PORT[redis]=17933
"$BEFORE" --port 17931 --bind 127.0.0.1 --save '' --appendonly no --loglevel warning --maxmemory 32mb --maxmemory-policy allkeys-lru & PID[before]=$!
"$AFTER" --port 17932 --bind 127.0.0.1 --save '' --appendonly no --loglevel warning --maxmemory 32mb --maxmemory-policy allkeys-lru & PID[after]=$!
redis-server --port 17933 --bind 127.0.0.1 --save '' --appendonly no --loglevel warning --maxmemory 32mb --maxmemory-policy allkeys-lru & PID[redis]=$!
sleep 1
for s in before after redis; do redis-benchmark -p ${PORT[$s]} -t set -P 16 -n 1000000 -c 50 -r 10000000 -d $D -q >/dev/null 2>&1; done
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for r in $(seq $R); do
  line="round $r:"
  for s in before after redis; do
    t0=$(cpu ${PID[$s]}); w0=$(date +%s.%N)
    redis-benchmark -p ${PORT[$s]} -t set -P $P -n $N -c 50 -r 10000000 -d $D -q >/dev/null 2>&1
    t1=$(cpu ${PID[$s]}); w1=$(date +%s.%N)
    line="$line $s $(echo "($t1-$t0)*10000/$N" | bc -l | cut -c1-5)us $(echo "$N/($w1-$w0)" | bc -l | cut -d. -f1)rps;"
  done
  echo "$line"
done
for s in before after redis; do echo "$s: $(redis-cli -p ${PORT[$s]} info stats | grep evicted_keys | tr -d '\r') $(redis-cli -p ${PORT[$s]} info memory | grep '^used_memory:' | tr -d '\r') rss_kb=$(grep VmRSS /proc/${PID[$s]}/status | awk '{print $2}')"; done
kill ${PID[before]} ${PID[after]} ${PID[redis]}
