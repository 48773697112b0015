#!/usr/bin/env bash
# Plot speed: `volley plot` over RECORDS (10 million) synthetic results (the
# file report_speed.sh makes, cached in bench/out/cache): wall time, max RSS,
# HTML size; plus whether the page is self-contained (no http(s) script or
# stylesheet). vegeta plot over VEGETA_RECORDS (1 million) of the same records
# for comparison (not extrapolated: its output size and memory are not linear).
# Goals (issue 4): < 10 s, < 300 MiB RSS, HTML < 2 MB.
# Env: RECORDS (10000000), VEGETA_RECORDS (1000000), TIMEOUT (120 s).
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_init plot_speed

RECORDS=${RECORDS:-10000000}
VEGETA_RECORDS=${VEGETA_RECORDS:-1000000}
TIMEOUT=${TIMEOUT:-120}

hdr() { printf '%-14s %10s %9s %9s %9s %10s %s\n' "$@" | tee -a "$OUT_FILE"; }
rows=()

# plot_run NAME RECORDS CMD...: CMD writes HTML on stdout.
plot_run() {
  local name=$1 n=$2 u s m w size ext
  shift 2
  if ! timed "$BENCH_TMP/$name.time" timeout "$TIMEOUT" "${GEN[@]}" "$@" >"$BENCH_TMP/$name.html" 2>"$BENCH_TMP/$name.err"; then
    say "warning: $name failed or timed out after ${TIMEOUT}s: $(tail -2 "$BENCH_TMP/$name.err")"
  fi
  read -r u s m w < <(timed_fields "$BENCH_TMP/$name.time")
  size=$(stat -c %s "$BENCH_TMP/$name.html")
  ext=$(grep -Eic '<(script|link)[^>]+(src|href)="https?:' "$BENCH_TMP/$name.html" || true)
  rows+=("$(printf '%-14s %10s %9s %9s %9s %10s %s' "$name" "$n" "$(fmt 2 "$w")" "$(calc "$u + $s")" "$((m / 1024))" "$(fmt 2 "$(calc "$size / 1000000")")" "$ext")")
  raw "raw $name records=$n wall_s=$w user_s=$u sys_s=$s maxrss_kb=$m html_bytes=$size external_refs=$ext"
  P_WALL=$w P_RSS=$((m / 1024)) P_MB=$(fmt 2 "$(calc "$size / 1000000")")
}

have=0
if need_volley plot && volley_has encode to; then
  if f=$(volley_results_file "$RECORDS"); then
    plot_run "volley plot" "$RECORDS" "$VOLLEY" plot "$f"
    have=1
    V_WALL=$P_WALL V_RSS=$P_RSS V_MB=$P_MB
  fi
fi
if need_tool vegeta vegeta; then
  if g=$(vegeta_results_file "$VEGETA_RECORDS" "$vegeta"); then
    plot_run "vegeta plot" "$VEGETA_RECORDS" "$vegeta" plot "$g"
  fi
fi

say ""
hdr plot records "wall s" "cpu s" "rss MiB" "html MB" "external refs"
for r in "${rows[@]:-}"; do [ -n "$r" ] && say "$r" && note_line "\`$r\`"; done
say ""
if [ "$have" = 1 ]; then
  ratio_line "volley plot seconds, $RECORDS results" "$(fmt 2 "$V_WALL")" "< 10"
  ratio_line "volley plot max RSS MiB" "$V_RSS" "< 300"
  ratio_line "volley plot HTML MB" "$V_MB" "< 2"
fi
