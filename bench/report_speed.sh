#!/usr/bin/env bash
# Report speed and results size: RECORDS (10 million) synthetic results
# (gen_results.sh: vegeta JSON lines -> `volley encode -to=binary`), then
# `volley report` (text and json) over them: wall time, CPU, max RSS; file
# size / RECORDS = bytes per request. vegeta: the same records in its gob
# format, VEGETA_RECORDS (1 million) of them — `vegeta report` on 10 million
# takes minutes — timed and extrapolated linearly to RECORDS (said so).
# Goals (issue 2): volley report over 10M results < 5 s; < 16 bytes per request.
# Env: RECORDS (10000000), VEGETA_RECORDS (1000000), TIMEOUT (120 s per report).
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init report_speed

RECORDS=${RECORDS:-10000000}
VEGETA_RECORDS=${VEGETA_RECORDS:-1000000}
TIMEOUT=${TIMEOUT:-120}

hdr() { printf '%-22s %10s %10s %9s %9s %9s %11s\n' "$@" | tee -a "$OUT_FILE"; }
rows=()
row_add() { rows+=("$(printf '%-22s %10s %10s %9s %9s %9s %11s' "$@")"); }

# time_report NAME FILE CMD...: times CMD (stdout kept in $BENCH_TMP/NAME.out); sets T_WALL T_CPU T_RSS_MIB.
time_report() {
  local name=$1 u s m w
  shift
  if ! timed "$BENCH_TMP/$name.time" timeout "$TIMEOUT" "${GEN[@]}" "$@" >"$BENCH_TMP/$name.out" 2>"$BENCH_TMP/$name.err"; then
    say "warning: $name failed or timed out after ${TIMEOUT}s: $(tail -2 "$BENCH_TMP/$name.err")"
  fi
  read -r u s m w < <(timed_fields "$BENCH_TMP/$name.time")
  T_WALL=$w T_CPU=$(calc "$u + $s") T_RSS_MIB=$((m / 1024))
  raw "raw $name wall_s=$w user_s=$u sys_s=$s maxrss_kb=$m"
}

volley_wall=n/a
bpr=n/a
if need_volley report && volley_has encode to; then
  if f=$(volley_results_file "$RECORDS"); then
    [ -s "$f.encode-time" ] && raw "raw volley_encode_${RECORDS} (when the file was made) user_s sys_s maxrss_kb wall_s = $(cat "$f.encode-time")"
    size=$(stat -c %s "$f")
    bpr=$(fmt 2 "$(calc "$size / $RECORDS")")
    raw "raw volley_file records=$RECORDS bytes=$size bytes_per_request=$bpr"
    time_report volley_report_text "$VOLLEY" report "$f"
    head -12 "$BENCH_TMP/volley_report_text.out" | tee -a "$OUT_FILE"
    n=$(grep -Eo 'Requests *\[total, rate, throughput\] *[0-9]+' "$BENCH_TMP/volley_report_text.out" | grep -Eo '[0-9]+$' || echo '?')
    [ "$n" = "$RECORDS" ] || say "warning: volley report counted $n requests, expected $RECORDS"
    volley_wall=$T_WALL
    row_add "volley report text" "$RECORDS" "$(fmt 2 "$T_WALL")" "$T_CPU" "$T_RSS_MIB" "$bpr" "$((size / 1048576))"
    time_report volley_report_json "$VOLLEY" report -type=json "$f"
    row_add "volley report json" "$RECORDS" "$(fmt 2 "$T_WALL")" "$T_CPU" "$T_RSS_MIB" "$bpr" "$((size / 1048576))"
  fi
elif [ -n "$VOLLEY" ]; then
  skip_line "volley encode -to not available yet"
fi

volley_bpr=${bpr:-n/a}
vegeta_wall=n/a
if need_tool vegeta vegeta; then
  if g=$(vegeta_results_file "$VEGETA_RECORDS" "$vegeta"); then
    size=$(stat -c %s "$g")
    bpr=$(fmt 2 "$(calc "$size / $VEGETA_RECORDS")")
    raw "raw vegeta_file records=$VEGETA_RECORDS bytes=$size bytes_per_request=$bpr"
    time_report vegeta_report_text "$vegeta" report "$g"
    row_add "vegeta report text" "$VEGETA_RECORDS" "$(fmt 2 "$T_WALL")" "$T_CPU" "$T_RSS_MIB" "$bpr" "$((size / 1048576))"
    vegeta_wall=$(calc "$T_WALL * $RECORDS / $VEGETA_RECORDS")
    if [ "$VEGETA_RECORDS" != "$RECORDS" ]; then
      row_add "vegeta (extrapolated)" "$RECORDS" "$(fmt 2 "$vegeta_wall")" "-" "-" "$bpr" "$(calc "int($size * $RECORDS / $VEGETA_RECORDS / 1048576)")"
      say "note: vegeta timed on $VEGETA_RECORDS records and extrapolated linearly to $RECORDS"
    fi
  fi
fi

say ""
hdr "report" records "wall s" "cpu s" "rss MiB" "bytes/req" "file MiB"
for r in "${rows[@]:-}"; do [ -n "$r" ] && say "$r" && note_line "\`$r\`"; done
say ""
if [ "$volley_wall" != n/a ]; then
  ratio_line "volley report seconds for $RECORDS results" "$(fmt 2 "$volley_wall")" "< 5"
  ratio_line "volley results bytes per request" "$volley_bpr" "< 16"
fi
if [ "$volley_wall" != n/a ] && [ "$vegeta_wall" != n/a ]; then
  r=$(fmt 3 "$(calc "$volley_wall / $vegeta_wall")")
else
  r=n/a
fi
ratio_line "volley/vegeta report time (vegeta extrapolated from $VEGETA_RECORDS)" "$r" "< 1.0"
