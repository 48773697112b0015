#!/usr/bin/env bash
# Origin latency accuracy, two parts, `volley origin` pinned to CPU 0:
# (a) `volley origin -latency 1s -body hello` held by CONNS (10,000) concurrent
#     connections from wrk (-t1, closed loop, CPU 1) for DURATION_A (15s):
#     p50/p99 as wrk measures them, errors, the origin's peak RSS (VmHWM).
#     Goals (issue 3): p99 <= 1.05 s; RSS < 300 MiB.
# (b) `volley origin -latency 100ms` at 1,000 req/s for DURATION_B (10s),
#     measured by `volley attack` (and by wrk2 -R1000 as a cross-check).
#     Goal (issue 3): p50 within 100-102 ms.
# Env: CONNS (10000), DURATION_A (15s), DURATION_B (10s).
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init origin_latency

CONNS=${CONNS:-10000}
DURATION_A=${DURATION_A:-15s}
DURATION_B=${DURATION_B:-10s}
if [ "$CONNS" -gt $((NOFILE - 200)) ]; then
  say "note: open-files limit $NOFILE: connections capped at $((NOFILE - 200)) instead of $CONNS"
  CONNS=$((NOFILE - 200))
fi

need_volley origin || exit 0

# to_ms "1.01s" | "999.5ms" | "800.00us" -> milliseconds
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
    else if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 }
    else if (v ~ /m$/) { sub(/m$/, "", v); print v * 60000 }
    else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 }
    else print "n/a" }'
}
# wrk_pct FILE PCT -> ms, from wrk/wrk2 --latency output ("  99%  1.01s" or "99.000%  1.01s")
wrk_pct() { to_ms "$(awk -v p="$2" '$1 == p "%" || $1 == p ".000%" { print $2; exit }' "$1")"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

hdr() { printf '%-34s %9s %9s %9s %9s %9s\n' "$@" | tee -a "$OUT_FILE"; }
rows=()

# ---- (a) 10,000 connections, 1 s latency
WRK=$(find_wrk) || WRK=
if [ -n "$WRK" ]; then
  port=$(free_port)
  start_volley_origin "$port" -latency 1s -body hello
  secs=${DURATION_A%s}
  timeout $((secs + 30)) "${GEN[@]}" "$WRK" -t1 -c"$CONNS" -d"$DURATION_A" --timeout 10s --latency "http://127.0.0.1:$port/" >"$BENCH_TMP/wrk-a.out" 2>&1 || true
  hwm=$(hwm_kb "$ORIGIN_PID")
  stop_pid "$ORIGIN_PID"
  cat "$BENCH_TMP/wrk-a.out" >>"$OUT_FILE"
  read -r req err non2xx rps < <(parse_wrk "$BENCH_TMP/wrk-a.out")
  p50=$(wrk_pct "$BENCH_TMP/wrk-a.out" 50)
  p99=$(wrk_pct "$BENCH_TMP/wrk-a.out" 99)
  raw "raw a connections=$CONNS requests=$req errors=$err non2xx=$non2xx p50_ms=$p50 p99_ms=$p99 origin_hwm_kb=$hwm"
  rows+=("$(printf '%-34s %9s %9s %9s %9s %9s' "(a) 1s latency, wrk -c$CONNS" "$req" "$((err + non2xx))" "$p50" "$p99" "$((hwm / 1024))")")
  A_P99=$p99 A_RSS=$((hwm / 1024))
else
  skip_line "wrk not found (see ../shared/peers/README.md)"
fi
sleep 1

# ---- (b) 100 ms at 1,000 req/s
port=$(free_port)
start_volley_origin "$port" -latency 100ms -body hello
URL="http://127.0.0.1:$port/"
secs=${DURATION_B%s}
B_P50=n/a
if volley_has attack rate; then
  echo "GET $URL" >"$BENCH_TMP/targets.txt"
  timeout $((secs + 30)) "${GEN[@]}" "$VOLLEY" attack -rate=1000 -duration="$DURATION_B" -targets="$BENCH_TMP/targets.txt" -output="$BENCH_TMP/b.bin" 2>>"$OUT_FILE" || true
  "$VOLLEY" report -type=json "$BENCH_TMP/b.bin" >"$BENCH_TMP/b.json" 2>/dev/null || true
  "$VOLLEY" report "$BENCH_TMP/b.bin" 2>&1 | head -12 >>"$OUT_FILE" || true
  read -r req err succ p50 p99 rate thr < <(parse_vegeta_json "$BENCH_TMP/b.json" 2>/dev/null || echo "0 0 0 n/a n/a 0 0")
  p50=$(fmt 2 "$p50") p99=$(fmt 2 "$p99")
  raw "raw b volley_attack requests=$req errors=$err p50_ms=$p50 p99_ms=$p99"
  rows+=("$(printf '%-34s %9s %9s %9s %9s %9s' "(b) 100ms @1000/s, volley attack" "$req" "$err" "$p50" "$p99" "-")")
  B_P50=$p50
fi
if WRK2=$(find_wrk2); then
  timeout $((secs + 30)) "${GEN[@]}" "$WRK2" -t1 -c200 -d"$DURATION_B" -R1000 --latency "$URL" >"$BENCH_TMP/wrk2-b.out" 2>&1 || true
  cat "$BENCH_TMP/wrk2-b.out" >>"$OUT_FILE"
  read -r req err non2xx rps < <(parse_wrk "$BENCH_TMP/wrk2-b.out")
  p50=$(wrk_pct "$BENCH_TMP/wrk2-b.out" 50)
  p99=$(wrk_pct "$BENCH_TMP/wrk2-b.out" 99)
  raw "raw b wrk2 requests=$req errors=$err non2xx=$non2xx p50_ms=$p50 p99_ms=$p99"
  rows+=("$(printf '%-34s %9s %9s %9s %9s %9s' "(b) 100ms @1000/s, wrk2 -R1000" "$req" "$((err + non2xx))" "$p50" "$p99" "-")")
fi
stop_pid "$ORIGIN_PID"

say ""
hdr case requests errors "p50 ms" "p99 ms" "rss MiB"
for r in "${rows[@]:-}"; do [ -n "$r" ] && say "$r" && note_line "\`$r\`"; done
say ""
[ -n "${A_P99:-}" ] && ratio_line "volley origin p99 seconds, $CONNS connections x 1s latency" "$(fmt 3 "$(calc "$A_P99 / 1000")")" "<= 1.05"
[ -n "${A_RSS:-}" ] && ratio_line "volley origin peak RSS MiB, $CONNS connections" "$A_RSS" "< 300"
if [ "$B_P50" != n/a ]; then
  ratio_line "volley origin 100ms recipe p50 ms (lower bound 100)" "$B_P50" ">= 100"
  ratio_line "volley origin 100ms recipe p50 ms (upper bound 102)" "$B_P50" "<= 102"
fi
exit 0
