# shellcheck shell=bash disable=SC2034
# Shared helpers for the bench/ scripts. Source it; do not run it.
#
# Conventions:
# - load only ever targets 127.0.0.1; every run is bounded in time;
# - the target is pinned to CPU 0 (TARGET_CPU), the generator to CPU 1 (GEN_CPU);
# - peers are looked up on PATH, in $PEERS_BIN (default /work/peers-build/bin),
#   in $(go env GOPATH)/bin and ~/.cargo/bin; a missing peer is reported as
#   "skipped: <name> not found (see ../shared/peers/README.md)";
# - raw numbers go to bench/out/<name>.txt, ratio and goal lines also to
#   bench/out/<name>.ratios (collected by run_all.sh into summary.md).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$BENCH_DIR/.." && pwd)
OUT_DIR=${OUT_DIR:-$BENCH_DIR/out}
PEERS_BIN=${PEERS_BIN:-/work/peers-build/bin}
TARGET_CPU=${TARGET_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
# The machines are shared (other builds run beside the benches): by default the
# generator and target run at nice -10 when allowed, so they get most of their
# core for the few seconds they run. BENCH_NICE=0 turns that off.
BENCH_NICE=${BENCH_NICE:--10}
if [ "$BENCH_NICE" != 0 ] && nice -n "$BENCH_NICE" true 2>/dev/null && [ "$(nice -n "$BENCH_NICE" nice)" -lt "$(nice)" ]; then
  _PRIO=(nice -n "$BENCH_NICE")
else
  _PRIO=()
fi
# Linux groups CPU time by session (autogroup), so a plain nice does not help
# against builds in other sessions: raise this session's autogroup for the
# bench's lifetime too, and restore it on exit.
_AUTOGROUP_NICE=
if [ ${#_PRIO[@]} -gt 0 ] && [ -w /proc/self/autogroup ]; then
  _AUTOGROUP_NICE=$(awk '{ print $NF }' /proc/self/autogroup 2>/dev/null || true)
  echo "$BENCH_NICE" 2>/dev/null >/proc/self/autogroup || _AUTOGROUP_NICE=
fi
# command prefixes: GEN=(... taskset -c GEN_CPU), TGT=(... taskset -c TARGET_CPU)
GEN=("${_PRIO[@]}" taskset -c "$GEN_CPU")
TGT=("${_PRIO[@]}" taskset -c "$TARGET_CPU")
mkdir -p "$OUT_DIR"

# ---------------------------------------------------------------- bookkeeping

BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/volley-bench.XXXXXX")
_BENCH_PIDS=()
_bench_cleanup() {
  local pid
  for pid in "${_BENCH_PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${_BENCH_PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$BENCH_TMP"
  if [ -n "$_AUTOGROUP_NICE" ]; then echo "$_AUTOGROUP_NICE" 2>/dev/null >/proc/self/autogroup || true; fi
}
trap _bench_cleanup EXIT
trap 'exit 130' INT TERM

# bench_init NAME: starts bench/out/NAME.txt and NAME.ratios afresh.
bench_init() {
  BENCH_NAME=$1
  OUT_FILE=$OUT_DIR/$BENCH_NAME.txt
  RATIO_FILE=$OUT_DIR/$BENCH_NAME.ratios
  : >"$RATIO_FILE"
  {
    echo "# $BENCH_NAME $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc)"
    echo "# generator: ${GEN[*]}  target: ${TGT[*]}  autogroup: $(cat /proc/self/autogroup 2>/dev/null)"
    echo "# kernel=$(uname -r) volley_commit=$(git -C "$ROOT_DIR" rev-parse --short HEAD 2>/dev/null || echo '?') loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$OUT_FILE"
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  NOFILE=$(ulimit -n)
  raw "# open files limit: $NOFILE (hard $(ulimit -Hn))"
}

# raw KEY VALUE...: one raw figure into the out file.
raw() { echo "$*" >>"$OUT_FILE"; }

# say TEXT: to stdout and the out file.
say() { echo "$*" | tee -a "$OUT_FILE"; }

# ratio_line LABEL VALUE GOAL: e.g. ratio_line "volley/wrk2 CPU per request" 0.8 "<= 1.0"
# VALUE may be "n/a". The line is printed, and kept for summary.md.
ratio_line() {
  local label=$1 value=$2 goal=$3 verdict=""
  if [ "$value" != "n/a" ]; then verdict=$(goal_verdict "$value" "$goal"); fi
  local line="$label: $value (goal $goal)${verdict:+ $verdict}"
  say "$line"
  echo "$line" >>"$RATIO_FILE"
}

# goal_verdict VALUE "<= 1.0" -> PASS or FAIL
goal_verdict() {
  local v=$1 op=${2%% *} g=${2#* }
  g=${g%% *}
  awk -v v="$v" -v g="$g" -v op="$op" 'BEGIN {
    ok = 0
    if (op == "<=") ok = (v <= g); else if (op == "<") ok = (v < g);
    else if (op == ">=") ok = (v >= g); else if (op == ">") ok = (v > g);
    print (ok ? "PASS" : "FAIL") }'
}

# skip_line TEXT: a "skipped: ..." line, kept for summary.md too.
skip_line() {
  say "skipped: $*"
  echo "skipped: $*" >>"$RATIO_FILE"
}

# note_line TEXT: a figure kept for summary.md (not printed: the table shows it).
note_line() { echo "$*" >>"$RATIO_FILE"; }

# calc EXPR: floating-point arithmetic via awk ("n/a" in, "n/a" out).
calc() {
  case "$*" in *n/a*) echo n/a; return ;; esac
  awk "BEGIN { x = $*; if (x == int(x)) printf \"%d\n\", x; else printf \"%.3f\n\", x }"
}
# fmt DIGITS VALUE
fmt() { case "$2" in n/a | "") echo n/a ;; *) awk -v v="$2" -v d="$1" 'BEGIN { printf "%.*f\n", d, v }' ;; esac; }

# ---------------------------------------------------------------- tools

# find_tool NAME: prints the path of a peer tool, or nothing (exit 1).
find_tool() {
  local name=$1 p gobin
  gobin=$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin
  for p in "$PEERS_BIN/$name" "$(command -v "$name" 2>/dev/null || true)" "$gobin/$name" "$HOME/.cargo/bin/$name"; do
    if [ -n "$p" ] && [ -x "$p" ]; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# need_tool VAR NAME: sets VAR to the tool's path, or prints the skip line and returns 1.
need_tool() {
  local __var=$1 name=$2 p
  if p=$(find_tool "$name"); then
    printf -v "$__var" '%s' "$p"
    return 0
  fi
  skip_line "$name not found (see ../shared/peers/README.md)"
  return 1
}

# wrk2's binary is also called "wrk"; look for "wrk2" first, then a "wrk"
# whose usage mentions -R (the rate flag wrk lacks).
find_wrk2() {
  local p
  if p=$(find_tool wrk2); then echo "$p"; return 0; fi
  for p in "$PEERS_BIN/wrk" "$(command -v wrk 2>/dev/null || true)"; do
    if [ -n "$p" ] && [ -x "$p" ] && "$p" 2>&1 | grep -q -- '--rate'; then echo "$p"; return 0; fi
  done
  return 1
}
# plain wrk (not wrk2): a wrk without the -R flag.
find_wrk() {
  local p
  for p in "$(command -v wrk 2>/dev/null || true)" "$PEERS_BIN/wrk"; do
    if [ -n "$p" ] && [ -x "$p" ] && ! "$p" 2>&1 | grep -q -- '--rate'; then echo "$p"; return 0; fi
  done
  return 1
}

ensure_gnu_time() {
  [ -x /usr/bin/time ] && return 0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 || true
  [ -x /usr/bin/time ]
}

# ---------------------------------------------------------------- volley

VOLLEY=${VOLLEY:-}
# volley_locate: sets VOLLEY to a built volley binary that has an `attack`
# subcommand, building it (release) unless NO_BUILD=1. Prints
# "volley not built yet" and returns 1 when there is none.
# Set VOLLEY=/path/to/volley to skip the build.
volley_locate() {
  if [ -n "$VOLLEY" ] && [ -x "$VOLLEY" ]; then
    volley_ready && return 0
  fi
  local target=${CARGO_TARGET_DIR:-$ROOT_DIR/target}
  if [ "${NO_BUILD:-0}" != 1 ]; then
    echo "building volley (cargo build --release -p volley, target dir $target) ..." >&2
    if ! (cd "$ROOT_DIR" && timeout "${BUILD_TIMEOUT:-900}" cargo build --release -q -p volley) >"$BENCH_TMP/build.log" 2>&1; then
      echo "volley build failed:" >&2
      tail -5 "$BENCH_TMP/build.log" >&2
    fi
  fi
  VOLLEY=$target/release/volley
  if [ -x "$VOLLEY" ] && volley_ready; then return 0; fi
  VOLLEY=
  return 1
}
volley_ready() {
  local h
  h=$("$VOLLEY" attack -h 2>&1 || true)
  echo "$h" | grep -q -- 'rate'
}
# volley_help SUB: the help text of a subcommand (empty if it has none).
volley_help() { "$VOLLEY" "$1" -h 2>&1 || true; }
# volley_has SUB FLAG: whether `volley SUB -h` mentions -FLAG.
volley_has() { volley_help "$1" | grep -Eq -- "(^|[^a-z-])-{1,2}$2([^a-z-]|$)"; }
# need_volley [SUB]: locates volley (and checks SUB exists), else prints
# "volley not built yet" (kept for summary.md) and returns 1.
need_volley() {
  if ! volley_locate; then
    skip_line "volley not built yet"
    return 1
  fi
  if [ -n "${1:-}" ] && ! volley_help "$1" | grep -q -- '-'; then
    skip_line "volley $1 not available yet"
    return 1
  fi
  say "volley: $VOLLEY ($(git -C "$ROOT_DIR" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  return 0
}

# volley_origin_listen_args PORT: the flags that make `volley origin` listen on
# 127.0.0.1:PORT, whichever spelling the binary has.
volley_origin_listen_args() {
  local port=$1
  if volley_has origin addr; then echo "-addr 127.0.0.1:$port"
  elif volley_has origin listen; then echo "-listen 127.0.0.1:$port"
  elif volley_has origin bind; then echo "-bind 127.0.0.1:$port"
  elif volley_has origin port; then echo "-port $port"
  else echo "-addr 127.0.0.1:$port"; fi
}

# ---------------------------------------------------------------- ports, servers

free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null && return 0
  fi
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

# wait_port PORT [SECONDS]: waits until 127.0.0.1:PORT accepts connections.
wait_port() {
  local port=$1 deadline=$((SECONDS + ${2:-10}))
  while [ $SECONDS -lt "$deadline" ]; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listening on 127.0.0.1:$port after ${2:-10}s" >&2
  return 1
}

# start_bg VAR CMD...: starts CMD in the background (killed on exit), PID in VAR.
start_bg() {
  local __var=$1
  shift
  "$@" &
  local __pid=$!
  _BENCH_PIDS+=("$__pid")
  printf -v "$__var" '%s' "$__pid"
}

# stop_pid PID: stops a process started with start_bg and waits for it.
stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# start_nginx [WORKER_CONNECTIONS]: nginx with one process pinned to
# TARGET_CPU, `return 200 "hello"`, on a free port. Sets NGINX_PORT, NGINX_PID.
start_nginx() {
  local wc=${1:-4096} nginx dir
  nginx=$(find_tool nginx) || { echo "nginx not found (see ../shared/peers/README.md)" >&2; return 1; }
  NGINX_PORT=$(free_port)
  dir=$(mktemp -d "$BENCH_TMP/nginx.XXXXXX")
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile $(ulimit -n);
error_log $dir/logs/error.log warn;
pid $dir/nginx.pid;
events { worker_connections $wc; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$NGINX_PORT backlog=4096;
    location / { return 200 "hello"; }
  }
}
EOF
  start_bg NGINX_PID "${TGT[@]}" "$nginx" -p "$dir" -c "$dir/nginx.conf"
  wait_port "$NGINX_PORT" 10
}
stop_nginx() { [ -n "${NGINX_PID:-}" ] && stop_pid "$NGINX_PID"; NGINX_PID=; }

# start_volley_origin PORT ARGS...: `volley origin ARGS` pinned to TARGET_CPU.
# Sets ORIGIN_PID.
start_volley_origin() {
  local port=$1
  shift
  # shellcheck disable=SC2046
  start_bg ORIGIN_PID "${TGT[@]}" "$VOLLEY" origin $(volley_origin_listen_args "$port") "$@"
  wait_port "$port" 15
}

# ---------------------------------------------------------------- measuring

# timed OUTFILE CMD...: runs CMD under GNU time; OUTFILE gets "user sys maxrss_kb wall".
# The CPU figures are those of the process tree (getrusage of children).
timed() {
  local out=$1
  shift
  ensure_gnu_time || { echo "GNU time missing (apt-get install time)" >&2; return 1; }
  /usr/bin/time -o "$out" -f "%U %S %M %e" "$@"
}
# timed_fields OUTFILE -> "user sys maxrss_kb wall" (the last line; GNU time
# may write "Command exited with non-zero status" before it).
timed_fields() { tail -n 1 "$1"; }

# rss_kb PID: resident set size of PID in KiB (0 if gone).
rss_kb() { awk '/^VmRSS:/ { print $2; f = 1 } END { if (!f) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# cpu_ticks PID: utime+stime of PID and its reaped children, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# gen CMD...: runs CMD pinned to the generator CPU.
gen() { "${GEN[@]}" "$@"; }

# parse_wrk FILE: "requests errors non2xx req_per_s" from wrk/wrk2 output.
parse_wrk() {
  awk '
    / requests in / { req = $1 }
    /^Requests\/sec:/ { rps = $2 }
    /Socket errors:/ { gsub(",", ""); err = $4 + $6 + $8 + $10 }
    /Non-2xx or 3xx responses:/ { non2xx = $5 }
    END { printf "%d %d %d %s\n", req, err, non2xx, (rps == "" ? 0 : rps) }' "$1"
}

# parse_wrk_percentiles FILE: "p50_ms p99_ms" from wrk/wrk2 --latency output
# (values like 850.00us, 1.02ms, 1.20s, 2.00m).
parse_wrk_percentiles() {
  awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /m$/) return v * 60000
      if (v ~ /s$/) return v * 1000
      return v
    }
    $1 == "50.000%" && p50 == "" { p50 = ms($2) }
    $1 == "99.000%" && p99 == "" { p99 = ms($2) }
    END { printf "%s %s\n", (p50 == "" ? "n/a" : p50), (p99 == "" ? "n/a" : p99) }' "$1"
}

# parse_vegeta_json FILE: "requests errors success_ratio p50_ms p99_ms rate
# throughput" from a vegeta/volley `report -type=json`.
parse_vegeta_json() {
  jq -r '[.requests,
          (.requests - ((.status_codes // {})["200"] // 0)),
          .success,
          ((.latencies["50th"] // 0) / 1e6),
          ((.latencies["99th"] // 0) / 1e6),
          .rate, .throughput] | map(tostring) | join(" ")' "$1"
}

# table helpers
row() { printf '%-10s %12s %10s %10s %14s %12s\n' "$@" | tee -a "$OUT_FILE"; }

# ---------------------------------------------------------------- big results files

# volley_results_file N: prints the path of a volley binary results file with
# N synthetic records (gen_results.sh | volley encode -to=binary), cached in
# bench/out/cache and rebuilt when the volley binary is newer. Needs VOLLEY.
# The encode's GNU time fields ("user sys maxrss_kb wall") go to FILE.encode-time.
volley_results_file() {
  local n=$1 f
  mkdir -p "$OUT_DIR/cache"
  f=$OUT_DIR/cache/results-$n.volley
  if [ -s "$f" ] && [ "$f" -nt "$VOLLEY" ]; then echo "$f"; return 0; fi
  echo "generating $n records (gen_results.sh | volley encode -to=binary) ..." >&2
  rm -f "$f"
  if ! timed "$BENCH_TMP/encode.time" bash -c 'set -o pipefail; "$1" "$2" | "$3" encode -to=binary -output="$4"' _ \
    "$BENCH_DIR/gen_results.sh" "$n" "$VOLLEY" "$f.tmp" 2>"$BENCH_TMP/encode.err"; then
    echo "volley encode failed: $(tail -3 "$BENCH_TMP/encode.err")" >&2
    rm -f "$f.tmp"
    return 1
  fi
  timed_fields "$BENCH_TMP/encode.time" >"$f.encode-time"
  mv "$f.tmp" "$f"
  echo "$f"
}

# vegeta_results_file N: the same N records in vegeta's gob format (cached).
vegeta_results_file() {
  local n=$1 vegeta=$2 f
  mkdir -p "$OUT_DIR/cache"
  f=$OUT_DIR/cache/results-$n.gob
  if [ -s "$f" ]; then echo "$f"; return 0; fi
  echo "generating $n records (gen_results.sh | vegeta encode -to=gob) ..." >&2
  "$BENCH_DIR/gen_results.sh" "$n" | "$vegeta" encode -to=gob -output="$f.tmp" && mv "$f.tmp" "$f" && echo "$f"
}
