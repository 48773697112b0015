#!/usr/bin/env bash
# Maximum throughput on one core with 50 connections: nginx (1 process) on
# CPU 0; wrk (-t1 -c50), oha (if installed) and volley (as fast as possible,
# 50 connections) on CPU 1, one after the other in the same run. Also shows
# how busy each side was (CPU % of generator and of nginx) so a target-bound
# run is visible.
# Goal (issue 2): volley req/s >= wrk req/s, same run.
# Env: DURATION (10s), CONNECTIONS (50), TOOLS ("wrk oha volley").
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init max_throughput

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-50}
TOOLS=${TOOLS:-wrk oha volley}
secs=${DURATION%s}
limit=$((secs + 30))

start_nginx
URL="http://127.0.0.1:$NGINX_PORT/"
say "max_throughput: nginx pid $NGINX_PID on CPU $TARGET_CPU at $URL; generators on CPU $GEN_CPU; $DURATION, $CONNECTIONS connections"
hdr() { printf '%-8s %10s %11s %9s %10s %10s\n' "$@" | tee -a "$OUT_FILE"; }
hdr tool requests "req/s" errors "gen cpu%" "nginx cpu%"

declare -A RPS
# measure TOOL RUNNER: runs RUNNER (which sets REQ ERR RPS_VAL) and records CPU of both sides.
measure() {
  local tool=$1 runner=$2 n0 n1 u s m w
  n0=$(cpu_ticks "$NGINX_PID")
  REQ=0 ERR=0 RPS_VAL=0
  "$runner" || return 0
  n1=$(cpu_ticks "$NGINX_PID")
  read -r u s m w < <(timed_fields "$BENCH_TMP/$tool.time")
  local gen_pct nginx_pct
  gen_pct=$(fmt 0 "$(calc "($u + $s) * 100 / $w")")
  nginx_pct=$(fmt 0 "$(calc "($n1 - $n0) * 100 / $CLK_TCK / $w")")
  RPS[$tool]=$RPS_VAL
  note_line "$tool: $(fmt 0 "$RPS_VAL") req/s, $ERR errors (generator CPU $gen_pct%, nginx CPU $nginx_pct%)"
  hdr "$tool" "$REQ" "$(fmt 0 "$RPS_VAL")" "$ERR" "$gen_pct" "$nginx_pct"
  raw "raw $tool requests=$REQ req_per_s=$RPS_VAL errors=$ERR user_s=$u sys_s=$s maxrss_kb=$m wall_s=$w"
}

wrk_runner() {
  local wrk
  wrk=$(find_wrk) || { skip_line "wrk not found (see ../shared/peers/README.md)"; return 1; }
  timed "$BENCH_TMP/wrk.time" timeout "$limit" "${GEN[@]}" "$wrk" -t1 -c"$CONNECTIONS" -d"$DURATION" "$URL" >"$BENCH_TMP/wrk.out" 2>&1 || true
  cat "$BENCH_TMP/wrk.out" >>"$OUT_FILE"
  local non2xx
  read -r REQ ERR non2xx RPS_VAL < <(parse_wrk "$BENCH_TMP/wrk.out")
  ERR=$((ERR + non2xx))
}

oha_runner() {
  local oha
  need_tool oha oha || return 1
  timed "$BENCH_TMP/oha.time" timeout "$limit" "${GEN[@]}" "$oha" --no-tui -z "$DURATION" -c "$CONNECTIONS" "$URL" >"$BENCH_TMP/oha.out" 2>&1 || true
  head -30 "$BENCH_TMP/oha.out" >>"$OUT_FILE"
  RPS_VAL=$(awk '/Requests\/sec:/ { print $2; exit }' "$BENCH_TMP/oha.out")
  RPS_VAL=${RPS_VAL:-0}
  REQ=$(awk '/\[200\] / { gsub(/[^0-9]/, "", $2); print $2; exit }' "$BENCH_TMP/oha.out")
  REQ=${REQ:-$(fmt 0 "$(calc "$RPS_VAL * $secs")")}
  ERR=$(awk '/Error distribution/ { f = 1; next } f && /\[[0-9]+\]/ { gsub(/[^0-9]/, "", $1); n += $1 } END { print n + 0 }' "$BENCH_TMP/oha.out")
}

volley_runner() {
  need_volley attack || return 1
  echo "GET $URL" >"$BENCH_TMP/targets.txt"
  local args=(attack -rate=0 -duration="$DURATION" -targets="$BENCH_TMP/targets.txt" -output="$BENCH_TMP/volley.bin")
  volley_has attack max-workers && args+=(-max-workers="$CONNECTIONS")
  volley_has attack workers && args+=(-workers="$CONNECTIONS")
  volley_has attack connections && args+=(-connections="$CONNECTIONS")
  volley_has attack max-connections && args+=(-max-connections="$CONNECTIONS")
  # shellcheck disable=SC2206
  args+=(${VOLLEY_ATTACK_FLAGS:-})
  raw "cmd volley ${args[*]}"
  timed "$BENCH_TMP/volley.time" timeout "$limit" "${GEN[@]}" "$VOLLEY" "${args[@]}" 2>>"$OUT_FILE" || true
  "$VOLLEY" report -type=json "$BENCH_TMP/volley.bin" >"$BENCH_TMP/volley.json" || true
  "$VOLLEY" report "$BENCH_TMP/volley.bin" 2>&1 | head -20 >>"$OUT_FILE" || true
  local succ p50 p99 rate thr
  read -r REQ ERR succ p50 p99 rate thr < <(parse_vegeta_json "$BENCH_TMP/volley.json" 2>/dev/null || echo "0 0 0 0 0 0 0")
  # requests over the attack's own duration, as wrk counts them
  RPS_VAL=$(fmt 0 "$(calc "$REQ / $secs")")
}

for t in $TOOLS; do
  measure "$t" "${t}_runner"
  sleep 1
done

say ""
v=${RPS[volley]:-n/a}
for peer in wrk oha; do
  p=${RPS[$peer]:-n/a}
  if [ "$v" != n/a ] && [ "$p" != n/a ]; then r=$(fmt 2 "$(calc "$v / $p")"); else r=n/a; fi
  ratio_line "volley/$peer req/s, 1 core, $CONNECTIONS connections" "$r" ">= 1.0"
done
