#!/usr/bin/env bash
# Runs every bench script in turn (volley built once, in release) and collects
# their ratio and goal lines into bench/out/summary.md.
# Usage: bench/run_all.sh [script...]   (default: all, in the order below)
# Env: as for each script; CARGO_TARGET_DIR is honoured for the build;
#      VOLLEY=/path/to/volley skips the build.
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
source "$(dirname "$0")/lib.sh"

scripts=${*:-attack_cpu max_throughput origin_throughput origin_latency users_memory report_speed plot_speed}

if volley_locate; then
  export VOLLEY
  echo "volley: $VOLLEY"
else
  echo "volley not built yet: running the peer halves only"
fi
export NO_BUILD=1

summary=$OUT_DIR/summary.md
{
  echo "# volley bench summary"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$ROOT_DIR" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Generator on CPU $GEN_CPU, target on CPU $TARGET_CPU; ratios are from the same run of each script."
  echo "Raw figures: bench/out/<script>.txt."
} >"$summary"

for s in $scripts; do
  s=${s%.sh}
  echo
  echo "=== $s"
  rc=0
  rm -f "$OUT_DIR/$s.ratios"
  timeout "${SCRIPT_TIMEOUT:-1200}" "$BENCH_DIR/$s.sh" || rc=$?
  {
    echo
    echo "## $s"
    echo
    if [ -s "$OUT_DIR/$s.ratios" ]; then sed 's/^/- /' "$OUT_DIR/$s.ratios"; fi
    [ "$rc" = 0 ] || echo "- script exited with status $rc"
  } >>"$summary"
done

echo
echo "=== summary ($summary)"
cat "$summary"
