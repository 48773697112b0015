#!/usr/bin/env bash
# Prints N synthetic results as vegeta JSON lines on stdout (used by
# report_speed.sh and plot_speed.sh): 10,000 req/s paced timestamps, latencies
# around 1 ms with a 1% tail up to 50 ms and rare 1 s stalls, 0.4% 500s and
# 0.1% connection errors, two URLs.
# Usage: bench/gen_results.sh N [SEED]
# shellcheck disable=SC2034 # `read` fills more fields than each script uses
set -euo pipefail
n=${1:?usage: gen_results.sh N [SEED]}
seed=${2:-1}
exec awk -v n="$n" -v seed="$seed" 'BEGIN {
  srand(seed)
  for (i = 0; i < n; i++) {
    s = int(i / 10000)
    r = rand()
    lat = 800000 + int(rand() * 400000)
    if (r < 0.01) lat += int(rand() * 50000000)
    if (r < 0.0001) lat += 1000000000
    code = 200; err = ""; bin = 5; body = "aGVsbG8="
    if (r > 0.995) { code = 500; bin = 21; body = "aW50ZXJuYWwgc2VydmVyIGVycm9y" }
    if (r > 0.999) { code = 0; bin = 0; body = ""; err = "Get \\\"http://127.0.0.1:8080/\\\": dial tcp 127.0.0.1:8080: connect: connection refused"; lat = 50000 + int(rand() * 10000) }
    url = (i % 4 == 3) ? "http://127.0.0.1:8080/api/items" : "http://127.0.0.1:8080/"
    printf "{\"attack\":\"bench\",\"seq\":%d,\"code\":%d,\"timestamp\":\"2026-01-01T%02d:%02d:%02d.%09dZ\",\"latency\":%d,\"bytes_out\":0,\"bytes_in\":%d,\"error\":\"%s\",\"body\":\"%s\",\"method\":\"GET\",\"url\":\"%s\",\"headers\":{\"Content-Type\":[\"text/plain\"]}}\n", \
      i, code, int(s / 3600), int(s / 60) % 60, s % 60, (i % 10000) * 100000, lat, bin, err, body, url
  }
}'
