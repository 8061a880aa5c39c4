#!/bin/bash
# AOF load time side by side: redis-server 7.0 writes an AOF (redis-benchmark
# -t set,incr,lpush,hset,sadd,zadd -n 200000 -r 100000 -P 32, appendfsync no),
# then abacus and redis-server each start on a copy with appendonly yes;
# prints seconds from exec to the first PONG. Usage: ABACUS=./abacus bench/aof/load.sh
W=${WORK:-/tmp/aofload}; rm -rf $W; mkdir -p $W/src
redis-server --port 23797 --save "" --daemonize yes --bind 127.0.0.1 --dir $W/src --appendonly yes --appendfsync no --logfile $W/src/log; sleep 0.3
redis-benchmark -p 23797 -t set,incr,lpush,hset,sadd,zadd -n 200000 -r 100000 -P 32 -q >/dev/null 2>&1
redis-cli -p 23797 shutdown nosave || true
load() {
  who=$1; d=$W/$who; rm -rf $d; mkdir -p $d; cp -r $W/src/appendonlydir $d/
  s=$(date +%s.%N)
  if [ $who = abacus ]; then ${ABACUS:-./abacus} --port 23796 --bind 127.0.0.1 --dir $d --save "" --appendonly yes > $d/log 2>&1 & else redis-server --port 23796 --bind 127.0.0.1 --dir $d --save "" --appendonly yes --logfile $d/log & fi
  pid=$!
  until redis-cli -p 23796 ping 2>/dev/null | grep -q PONG; do sleep 0.01; done
  e=$(date +%s.%N)
  n=$(redis-cli -p 23796 dbsize)
  kill $pid; wait $pid 2>/dev/null
  echo "$who $(echo "$e - $s" | bc) s keys=$n"
}
for i in 1 2 3; do load abacus; load redis; done
