#!/usr/bin/env bash
# Side-by-side "hello" bench on one core: nginx `return 200 "hello"` vs
# volley-origin (fast path) vs volley-origin (hyper only). Servers pinned to
# core 0, wrk (1 thread, 50 connections) on core 1, 127.0.0.1 only, bounded.
# Reports requests/s and requests per server CPU-second (robust when the
# machine is busy). Usage: crates/origin/bench.sh [rounds] [seconds]
set -euo pipefail
ROUNDS=${1:-3}; SECS=${2:-5}
BIN=${CARGO_TARGET_DIR:-target}/release/examples/serve
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
DIR=$(mktemp -d)
cat > "$DIR/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off;
error_log $DIR/error.log warn; pid $DIR/nginx.pid;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  client_body_temp_path $DIR; proxy_temp_path $DIR; fastcgi_temp_path $DIR;
  uwsgi_temp_path $DIR; scgi_temp_path $DIR;
  server { listen 127.0.0.1:18080; location / { return 200 "hello"; } } }
CONF
LIMIT=$(( ROUNDS * 3 * (SECS + 2) + 30 ))
taskset -c 0 timeout $LIMIT "$NGINX" -c "$DIR/nginx.conf" -p "$DIR" & P1=$!
taskset -c 0 timeout $LIMIT "$BIN" 127.0.0.1:18081 & P2=$!
taskset -c 0 timeout $LIMIT "$BIN" 127.0.0.1:18082 hyper & P3=$!
trap 'kill $P1 $P2 $P3 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 1
cpu() { # utime+stime in ticks of the process listening on the port
  local pid; pid=$(ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '{print $14+$15}' /proc/$pid/stat
}
HZ=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
  for p in 18080 18081 18082; do
    name=$([ $p = 18080 ] && echo nginx || ([ $p = 18081 ] && echo volley-fast || echo volley-hyper))
    c0=$(cpu $p)
    out=$(taskset -c 1 wrk -t1 -c50 -d${SECS}s http://127.0.0.1:$p/)
    c1=$(cpu $p)
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    awk -v n="$name" -v r="$r" -v rps="$rps" -v q="$reqs" -v c=$((c1-c0)) -v hz="$HZ" \
      'BEGIN { printf "round %d %-13s %10.0f req/s  %10.0f req per CPU-second\n", r, n, rps, (c>0 ? q/(c/hz) : 0) }'
  done
done
