#!/usr/bin/env bash
# CPU cost per request at a fixed rate: nginx (1 process) on CPU 0; wrk2,
# vegeta, k6 and volley on CPU 1, each at RATE req/s for DURATION, one after
# the other in the same run. CPU = user+sys of the generator process (GNU time).
# Goal (issue 2): volley's CPU µs per request <= wrk2's, same run.
# The p50/p99 columns are each tool's own latency report: at a fixed rate
# they are mostly how closely the tool kept its schedule (nginx answers in
# tens of µs), so CPU is compared at a schedule fidelity shown side by side.
# Env: RATE (10000), DURATION (10s), CONNECTIONS (50), TOOLS ("wrk2 vegeta k6 volley").
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init attack_cpu

RATE=${RATE:-10000}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-50}
TOOLS=${TOOLS:-wrk2 vegeta k6 volley}
secs=${DURATION%s}
limit=$((secs + 40)) # hard bound per tool: duration + drain

start_nginx
URL="http://127.0.0.1:$NGINX_PORT/"
say "attack_cpu: nginx pid $NGINX_PID on CPU $TARGET_CPU at $URL; generators on CPU $GEN_CPU; rate $RATE/s for $DURATION, $CONNECTIONS connections"
hdr() { printf '%-8s %10s %10s %9s %9s %9s %10s %9s %8s %8s\n' "$@" | tee -a "$OUT_FILE"; }
hdr tool requests "req/s" errors dropped "cpu s" "cpu us/req" "rss MiB" "p50 ms" "p99 ms"

declare -A US_PER_REQ BYTES_PER_REQ
# results_size TOOL FILE REQUESTS: bytes per request of a real attack's results file.
results_size() {
  local size
  size=$(stat -c %s "$2" 2>/dev/null || echo 0)
  [ "${3:-0}" -gt 0 ] && BYTES_PER_REQ[$1]=$(fmt 2 "$(calc "$size / $3")")
}
# record TOOL REQUESTS ERRORS DROPPED TIMEFILE [P50_MS P99_MS]
record() {
  local tool=$1 req=$2 err=$3 drop=$4 p50=${6:-n/a} p99=${7:-n/a} u s m w cpu us rps
  read -r u s m w < <(timed_fields "$5")
  cpu=$(calc "$u + $s")
  if [ "${req:-0}" -gt 0 ]; then us=$(fmt 2 "$(calc "$cpu * 1000000 / $req")"); else us=n/a; fi
  rps=$(fmt 0 "$(calc "$req / $secs")")
  US_PER_REQ[$tool]=$us
  [ "$p50" != n/a ] && p50=$(fmt 2 "$p50")
  [ "$p99" != n/a ] && p99=$(fmt 2 "$p99")
  note_line "$tool: $us µs CPU/request, $req requests ($rps/s), $err errors, $drop dropped, max RSS $((m / 1024)) MiB, latency p50 $p50 ms p99 $p99 ms"
  hdr "$tool" "$req" "$rps" "$err" "$drop" "$cpu" "$us" "$((m / 1024))" "$p50" "$p99"
  raw "raw $tool requests=$req errors=$err dropped=$drop user_s=$u sys_s=$s maxrss_kb=$m wall_s=$w cpu_us_per_req=$us p50_ms=$p50 p99_ms=$p99"
}

run_wrk2() {
  local wrk2
  wrk2=$(find_wrk2) || { skip_line "wrk2 not found (see ../shared/peers/README.md)"; return 0; }
  timed "$BENCH_TMP/wrk2.time" timeout "$limit" "${GEN[@]}" "$wrk2" -t1 -c"$CONNECTIONS" -d"$DURATION" -R"$RATE" --latency "$URL" >"$BENCH_TMP/wrk2.out" 2>&1 || true
  sed -n '1,/Detailed Percentile spectrum/p' "$BENCH_TMP/wrk2.out" >>"$OUT_FILE"
  local req err non2xx rps p50 p99
  read -r req err non2xx rps < <(parse_wrk "$BENCH_TMP/wrk2.out")
  read -r p50 p99 < <(parse_wrk_percentiles "$BENCH_TMP/wrk2.out")
  record wrk2 "$req" "$((err + non2xx))" 0 "$BENCH_TMP/wrk2.time" "$p50" "$p99"
}

run_vegeta() {
  local vegeta
  need_tool vegeta vegeta || return 0
  echo "GET $URL" >"$BENCH_TMP/targets.txt"
  timed "$BENCH_TMP/vegeta.time" timeout "$limit" "${GEN[@]}" "$vegeta" attack -rate="$RATE" -duration="$DURATION" \
    -targets="$BENCH_TMP/targets.txt" -output="$BENCH_TMP/vegeta.bin" 2>>"$OUT_FILE" || true
  "$vegeta" report -type=json "$BENCH_TMP/vegeta.bin" >"$BENCH_TMP/vegeta.json"
  "$vegeta" report "$BENCH_TMP/vegeta.bin" | head -12 >>"$OUT_FILE"
  local req err succ p50 p99 rate thr
  read -r req err succ p50 p99 rate thr < <(parse_vegeta_json "$BENCH_TMP/vegeta.json")
  raw "raw vegeta rate=$rate throughput=$thr p50_ms=$p50 p99_ms=$p99 success=$succ results_bytes=$(stat -c %s "$BENCH_TMP/vegeta.bin")"
  results_size vegeta "$BENCH_TMP/vegeta.bin" "$req"
  record vegeta "$req" "$err" 0 "$BENCH_TMP/vegeta.time" "$p50" "$p99"
}

run_k6() {
  local k6
  need_tool k6 k6 || return 0
  cat >"$BENCH_TMP/k6.js" <<JS
import http from 'k6/http';
export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['med', 'p(99)'],
  scenarios: {
    fixed: {
      executor: 'constant-arrival-rate',
      rate: $RATE, timeUnit: '1s', duration: '$DURATION',
      preAllocatedVUs: $CONNECTIONS, maxVUs: 500,
    },
  },
};
export default function () { http.get('$URL'); }
export function handleSummary(data) { return { '$BENCH_TMP/k6-summary.json': JSON.stringify(data) }; }
JS
  timed "$BENCH_TMP/k6.time" timeout "$limit" "${GEN[@]}" "$k6" run --quiet --no-usage-report "$BENCH_TMP/k6.js" >"$BENCH_TMP/k6.out" 2>&1 || true
  local req err drop p50 p99
  req=$(jq -r '.metrics.http_reqs.values.count // 0' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo 0)
  p50=$(jq -r '.metrics.http_req_duration.values.med // "n/a"' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo n/a)
  p99=$(jq -r '.metrics.http_req_duration.values["p(99)"] // "n/a"' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo n/a)
  err=$(jq -r '.metrics.http_req_failed.values.passes // 0' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo 0)
  drop=$(jq -r '.metrics.dropped_iterations.values.count // 0' "$BENCH_TMP/k6-summary.json" 2>/dev/null || echo 0)
  tail -5 "$BENCH_TMP/k6.out" >>"$OUT_FILE"
  record k6 "$req" "$err" "$drop" "$BENCH_TMP/k6.time" "$p50" "$p99"
}

run_volley() {
  need_volley attack || return 0
  echo "GET $URL" >"$BENCH_TMP/targets.txt"
  local args=(attack -rate="$RATE" -duration="$DURATION" -targets="$BENCH_TMP/targets.txt" -output="$BENCH_TMP/volley.bin")
  volley_has attack connections && args+=(-connections="$CONNECTIONS")
  volley_has attack max-connections && args+=(-max-connections="$CONNECTIONS")
  # shellcheck disable=SC2206
  args+=(${VOLLEY_ATTACK_FLAGS:-})
  raw "cmd volley ${args[*]}"
  timed "$BENCH_TMP/volley.time" timeout "$limit" "${GEN[@]}" "$VOLLEY" "${args[@]}" 2>>"$OUT_FILE" || true
  "$VOLLEY" report -type=json "$BENCH_TMP/volley.bin" >"$BENCH_TMP/volley.json" || true
  "$VOLLEY" report "$BENCH_TMP/volley.bin" 2>&1 | head -20 >>"$OUT_FILE" || true
  local req err succ p50 p99 rate thr drop
  read -r req err succ p50 p99 rate thr < <(parse_vegeta_json "$BENCH_TMP/volley.json" 2>/dev/null || echo "0 0 0 0 0 0 0")
  drop=$(jq -r '.dropped // .volley.dropped // 0' "$BENCH_TMP/volley.json" 2>/dev/null || echo 0)
  raw "raw volley rate=$rate throughput=$thr p50_ms=$p50 p99_ms=$p99 success=$succ results_bytes=$(stat -c %s "$BENCH_TMP/volley.bin" 2>/dev/null || echo 0)"
  results_size volley "$BENCH_TMP/volley.bin" "$req"
  record volley "$req" "$err" "$drop" "$BENCH_TMP/volley.time" "$p50" "$p99"
}

for t in $TOOLS; do
  "run_$t"
  sleep 1
done

say ""
for t in vegeta volley; do
  [ -n "${BYTES_PER_REQ[$t]:-}" ] && say "$t results file: ${BYTES_PER_REQ[$t]} bytes per request" && note_line "$t results file (real attack): ${BYTES_PER_REQ[$t]} bytes per request"
done
[ -n "${BYTES_PER_REQ[volley]:-}" ] && ratio_line "volley results bytes per request (real attack, $RATE/s)" "${BYTES_PER_REQ[volley]}" "< 16"
v=${US_PER_REQ[volley]:-n/a}
for peer in wrk2 vegeta k6; do
  p=${US_PER_REQ[$peer]:-n/a}
  if [ "$v" != n/a ] && [ "$p" != n/a ]; then r=$(fmt 2 "$(calc "$v / $p")"); else r=n/a; fi
  case $peer in wrk2) goal="<= 1.0" ;; *) goal="< 1.0" ;; esac
  ratio_line "volley/$peer CPU per request @${RATE}/s" "$r" "$goal"
done
