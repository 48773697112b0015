#!/usr/bin/env bash
# Memory of the closed model: volley with USERS users (default 20,000), each
# looping request -> think time 1 s, against nginx (1 process, CPU 0) for
# DURATION; the generator on CPU 1. RSS of the volley process is sampled every
# SAMPLE seconds: max, first (after WARMUP), last, drift = last/first - 1.
# k6 (if installed) runs the same loop with K6_VUS VUs (default 2,000: k6 with
# 20k VUs needs gigabytes) for min(DURATION, 60s), for an RSS-per-user comparison.
# Goals (issue 2): max RSS < 500 MiB with 20,000 users; RSS flat (drift within
# +-10%) over a 10-minute attack: DURATION=600s bench/users_memory.sh
# Env: USERS (20000), THINK (1s), DURATION (60s), SAMPLE (5), WARMUP (10),
#      K6_VUS (2000), TARGET (nginx | origin), TOOLS ("volley k6").
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init users_memory

USERS=${USERS:-20000}
THINK=${THINK:-1s}
DURATION=${DURATION:-60s}
SAMPLE=${SAMPLE:-5}
WARMUP=${WARMUP:-10}
K6_VUS=${K6_VUS:-2000}
TARGET=${TARGET:-nginx}
TOOLS=${TOOLS:-volley k6}
secs=${DURATION%s}

# Every user keeps its connection (as k6's VUs do) while the open-files limit
# allows: generator and target each need one descriptor per connection. Past
# that, -connections caps the connections kept between requests and the other
# users reconnect for each request (k6's noConnectionReuse), so the user count
# is still USERS.
max_kept=$((NOFILE - 2000))
CONN_FLAGS=()
if [ "$USERS" -gt "$max_kept" ]; then
  say "note: open-files limit is $NOFILE (hard $(ulimit -Hn), cannot be raised here): $max_kept of the $USERS users keep their connection between requests, the rest reconnect per request (-connections=$max_kept)"
  CONN_FLAGS=(-connections="$max_kept")
fi

if [ "$TARGET" = origin ] && need_volley origin; then
  TPORT=$(free_port)
  start_volley_origin "$TPORT" -body hello
  TPID=$ORIGIN_PID
else
  start_nginx "$NOFILE"
  TPORT=$NGINX_PORT
  TPID=$NGINX_PID
fi
URL="http://127.0.0.1:$TPORT/"
say "users_memory: target $TARGET pid $TPID on CPU $TARGET_CPU at $URL; generator on CPU $GEN_CPU"

# sample_rss PID SECONDS LABEL: samples RSS every SAMPLE s until PID exits or
# SECONDS + 30 pass (then kills it). Sets S_FIRST S_LAST S_MAX (KiB), S_N, and
# S_GEN_CPU / S_TGT_CPU: CPU % of the generator and of the target over the samples.
sample_rss() {
  local pid=$1 bound=$(($2 + 30)) label=$3 t=0 r c g0 g1 t0 t1
  S_FIRST=0 S_LAST=0 S_MAX=0 S_N=0 S_GEN_CPU=n/a S_TGT_CPU=n/a
  g0=$(cpu_ticks "$pid") t0=$(cpu_ticks "$TPID") g1=$g0 t1=$t0
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$SAMPLE"
    r=$(rss_kb "$pid")
    [ "$r" -gt 0 ] || break
    c=$(cpu_ticks "$pid")
    [ "$c" -gt 0 ] || break
    t=$((t + SAMPLE)) g1=$c t1=$(cpu_ticks "$TPID")
    S_GEN_CPU=$(fmt 0 "$(calc "($g1 - $g0) * 100 / $CLK_TCK / $t")")
    S_TGT_CPU=$(fmt 0 "$(calc "($t1 - $t0) * 100 / $CLK_TCK / $t")")
    raw "rss $label t=${t}s rss_kb=$r cpu_ticks=$c target_cpu_ticks=$t1"
    [ "$r" -gt "$S_MAX" ] && S_MAX=$r
    if [ "$t" -ge "$WARMUP" ]; then
      [ "$S_FIRST" -gt 0 ] || S_FIRST=$r
      S_LAST=$r
      S_N=$((S_N + 1))
    fi
    if [ "$t" -ge "$bound" ]; then
      say "warning: $label still running after ${bound}s; stopping it"
      kill "$pid" 2>/dev/null || true
    fi
  done
  wait "$pid" 2>/dev/null || true
}

hdr() { printf '%-8s %7s %9s %8s %8s %9s %9s %9s %8s %9s %8s %8s\n' "$@" | tee -a "$OUT_FILE"; }
declare -A PER_USER
rows=()

run_volley() {
  need_volley attack || return 0
  volley_has attack users || { skip_line "volley attack has no -users flag yet"; return 0; }
  echo "GET $URL" >"$BENCH_TMP/targets.txt"
  local args=(attack -users="$USERS" -think="$THINK" -duration="$DURATION" -targets="$BENCH_TMP/targets.txt" -output="$BENCH_TMP/volley.bin" "${CONN_FLAGS[@]}")
  # shellcheck disable=SC2206
  args+=(${VOLLEY_ATTACK_FLAGS:-})
  raw "cmd volley ${args[*]}"
  local pid
  start_bg pid "${GEN[@]}" "$VOLLEY" "${args[@]}" 2>>"$OUT_FILE"
  sample_rss "$pid" "$secs" volley
  "$VOLLEY" report -type=json "$BENCH_TMP/volley.bin" >"$BENCH_TMP/volley.json" 2>/dev/null || true
  "$VOLLEY" report "$BENCH_TMP/volley.bin" 2>&1 | head -20 >>"$OUT_FILE" || true
  local req err succ p50 p99 rate thr
  read -r req err succ p50 p99 rate thr < <(parse_vegeta_json "$BENCH_TMP/volley.json" 2>/dev/null || echo "0 0 0 0 0 0 0")
  rm -f "$BENCH_TMP/volley.bin"
  finish volley "$USERS" "$secs" "$req" "$err"
}

run_k6() {
  local k6
  need_tool k6 k6 || return 0
  local ksecs=$((secs < 60 ? secs : 60))
  cat >"$BENCH_TMP/k6.js" <<JS
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  discardResponseBodies: true,
  scenarios: { users: { executor: 'constant-vus', vus: $K6_VUS, duration: '${ksecs}s' } },
};
export default function () { http.get('$URL'); sleep(${THINK%s}); }
export function handleSummary(data) { return { '$BENCH_TMP/k6-summary.json': JSON.stringify(data) }; }
JS
  local pid
  start_bg pid "${GEN[@]}" "$k6" run --quiet --no-usage-report "$BENCH_TMP/k6.js" >"$BENCH_TMP/k6.out" 2>&1
  sample_rss "$pid" "$ksecs" k6
  local req err
  req=$(jq -r '.metrics.http_reqs.values.count // 0' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo 0)
  err=$(jq -r '.metrics.http_req_failed.values.passes // 0' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo 0)
  finish k6 "$K6_VUS" "$ksecs" "$req" "$err"
}

# finish TOOL USERS SECS REQUESTS ERRORS
finish() {
  local tool=$1 users=$2 s=$3 req=$4 err=$5 drift per
  if [ "$S_FIRST" -gt 0 ]; then drift=$(fmt 1 "$(calc "($S_LAST - $S_FIRST) * 100 / $S_FIRST")"); else drift=n/a; fi
  per=$(fmt 1 "$(calc "$S_MAX / $users")")
  PER_USER[$tool]=$per
  note_line "$tool: $users users for ${s}s: $req requests, $err errors, RSS first/last/max $((S_FIRST / 1024))/$((S_LAST / 1024))/$((S_MAX / 1024)) MiB, drift $drift%, $per KiB/user, CPU generator $S_GEN_CPU% target $S_TGT_CPU%"
  rows+=("$(printf '%-8s %7s %9s %8s %8s %9s %9s %9s %8s %9s %8s %8s' "$tool" "$users" "$req" "$(fmt 0 "$(calc "$req / $s")")" "$err" \
    "$((S_FIRST / 1024))" "$((S_LAST / 1024))" "$((S_MAX / 1024))" "$drift" "$per" "$S_GEN_CPU" "$S_TGT_CPU")")
  raw "raw $tool users=$users seconds=$s requests=$req errors=$err rss_first_kb=$S_FIRST rss_last_kb=$S_LAST rss_max_kb=$S_MAX drift_pct=$drift samples=$S_N kib_per_user=$per gen_cpu_pct=$S_GEN_CPU target_cpu_pct=$S_TGT_CPU"
  if [ "$tool" = volley ]; then
    ratio_line "volley max RSS MiB, $users users think $THINK" "$((S_MAX / 1024))" "< 500"
    if [ "$drift" != n/a ]; then
      local absd=${drift#-}
      ratio_line "volley RSS drift % over ${s}s (first sample after ${WARMUP}s vs last)" "$absd" "<= 10"
    fi
  fi
}

for t in $TOOLS; do
  "run_$t"
  sleep 2
done

say ""
hdr tool users requests "req/s" errors "first MiB" "last MiB" "max MiB" "drift %" "KiB/user" "gen cpu%" "tgt cpu%"
for r in "${rows[@]:-}"; do [ -n "$r" ] && say "$r"; done
v=${PER_USER[volley]:-n/a}
k=${PER_USER[k6]:-n/a}
if [ "$v" != n/a ] && [ "$k" != n/a ]; then r=$(fmt 3 "$(calc "$v / $k")"); else r=n/a; fi
ratio_line "volley/k6 RSS per user" "$r" "< 1.0"
