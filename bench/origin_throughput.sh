#!/usr/bin/env bash
# Origin throughput on one core: nginx `return 200 "hello"` (1 process) and
# `volley origin -body hello`, each pinned to CPU 0 in turn, driven by the same
# wrk (-t1 -c50) on CPU 1, in the same run.
# Goal (issue 3): volley origin req/s >= 0.9 x nginx req/s.
# Env: DURATION (10s), CONNECTIONS (50), ROUNDS (1: alternate nginx/volley N times, best of each).
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init origin_throughput

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-50}
ROUNDS=${ROUNDS:-1}
secs=${DURATION%s}
limit=$((secs + 30))

WRK=$(find_wrk) || { skip_line "wrk not found (see ../shared/peers/README.md)"; exit 0; }
have_volley=0
need_volley origin && have_volley=1

say "origin_throughput: servers on CPU $TARGET_CPU, wrk -t1 -c$CONNECTIONS -d$DURATION on CPU $GEN_CPU"
hdr() { printf '%-14s %6s %10s %11s %8s %10s %10s %9s\n' "$@" | tee -a "$OUT_FILE"; }
hdr server round requests "req/s" errors "srv cpu%" "wrk cpu%" "srv MiB"

declare -A BEST
# drive NAME ROUND PORT PID
drive() {
  local name=$1 round=$2 port=$3 pid=$4 n0 n1 u s m w req err non2xx rps
  n0=$(cpu_ticks "$pid")
  timed "$BENCH_TMP/wrk.time" timeout "$limit" "${GEN[@]}" "$WRK" -t1 -c"$CONNECTIONS" -d"$DURATION" "http://127.0.0.1:$port/" >"$BENCH_TMP/wrk.out" 2>&1 || true
  n1=$(cpu_ticks "$pid")
  cat "$BENCH_TMP/wrk.out" >>"$OUT_FILE"
  read -r req err non2xx rps < <(parse_wrk "$BENCH_TMP/wrk.out")
  read -r u s m w < <(timed_fields "$BENCH_TMP/wrk.time")
  local rss=$(($(rss_kb "$pid") / 1024))
  hdr "$name" "$round" "$req" "$(fmt 0 "$rps")" "$((err + non2xx))" \
    "$(fmt 0 "$(calc "($n1 - $n0) * 100 / $CLK_TCK / $w")")" "$(fmt 0 "$(calc "($u + $s) * 100 / $w")")" "$rss"
  raw "raw $name round=$round requests=$req req_per_s=$rps errors=$err non2xx=$non2xx server_rss_kb=$(rss_kb "$pid")"
  if [ "$((err + non2xx))" -gt 0 ] && [ "$req" -gt 0 ]; then
    say "warning: $name answered $((err + non2xx)) of $req requests with errors or non-2xx"
  fi
  note_line "$name (round $round): $(fmt 0 "$rps") req/s, $((err + non2xx)) errors, server RSS $rss MiB"
  local prev=${BEST[$name]:-0}
  if awk -v a="$rps" -v b="$prev" 'BEGIN { exit !(a > b) }'; then BEST[$name]=$rps; fi
}

for round in $(seq 1 "$ROUNDS"); do
  start_nginx
  drive nginx "$round" "$NGINX_PORT" "$NGINX_PID"
  stop_nginx
  sleep 1
  if [ "$have_volley" = 1 ]; then
    port=$(free_port)
    start_volley_origin "$port" -body hello
    # the answer must be "hello", or the comparison is moot
    body=$(curl -s --max-time 5 "http://127.0.0.1:$port/" || true)
    [ "$body" = hello ] || say "warning: volley origin answered '$body' (expected 'hello')"
    drive "volley origin" "$round" "$port" "$ORIGIN_PID"
    stop_pid "$ORIGIN_PID"
    sleep 1
  fi
done

say ""
v=${BEST["volley origin"]:-n/a}
n=${BEST[nginx]:-n/a}
if [ "$v" != n/a ] && [ "$n" != n/a ]; then r=$(fmt 2 "$(calc "$v / $n")"); else r=n/a; fi
ratio_line "volley origin/nginx req/s, 1 core, wrk -c$CONNECTIONS" "$r" ">= 0.9"
