#!/usr/bin/env bash
# make fuzz: builds the libFuzzer harnesses (the `fuzz` preset: clang, ASan + UBSan) and runs
# each for FUZZ_SECONDS (default 60) of CPU, FUZZ_JOBS at a time (default: the core count).
# Usage: run_fuzz.sh [HARNESS...]   (default: all; names as in build/fuzz/fuzz/*.seeds)
# Corpora grow in build/fuzz/corpus/<harness>/ (seeded from sample_data/, shared/data and the
# committed regressions); findings (crashes, sanitizer reports, inputs over the time or memory
# limit) land in build/fuzz/findings/<harness>/. Keep a finding as a regression input by copying
# it into the harness's regressions/ folder once it is fixed: `make test` replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
bash packaging/install-deps.sh >/dev/null
bash packaging/install-deps.sh packaging/debian-packages-fuzz.txt
[ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
cmake --preset fuzz >/dev/null
if [ $# -gt 0 ]; then
  harnesses=("$@")
else
  mapfile -t harnesses < <(ls build/fuzz/fuzz/*.seeds | xargs -n1 basename | sed 's/\.seeds$//')
fi
cmake --build build/fuzz -j "$jobs" --target "${harnesses[@]/#/fuzz_}"

run_one() {
  local h=$1 seconds=$2
  local corpus=build/fuzz/corpus/$h findings=build/fuzz/findings/$h log=build/fuzz/logs/$h.log
  mkdir -p "$corpus" "$findings" build/fuzz/logs
  # Seeds over 64 KiB are cut by -max_len anyway; the corpus keeps what adds coverage.
  while read -r f; do [ -f "$f" ] && cp -n "$f" "$corpus/seed-$(basename "$f")" 2>/dev/null || true; done \
    < "build/fuzz/fuzz/$h.seeds"
  for d in plugins/*/fuzz/regressions/${h#*_} tests/fuzz/regressions/$h; do
    [ -d "$d" ] && cp -n "$d"/* "$corpus/" 2>/dev/null || true
  done
  local rc=0
  build/fuzz/bin/fuzz_"$h" "$corpus" -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$log" 2>&1 || rc=$?
  local runs cov
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  printf '%-22s %8s %12s %8s %8s %s\n' "$h" "$seconds" "$runs" "$cov" "$(ls "$corpus" | wc -l)" \
    "$([ $rc -eq 0 ] && echo none || echo "FOUND (exit $rc): $(ls "$findings" | head -3 | tr '\n' ' ')see $log")"
  return $rc
}
export -f run_one

printf '%-22s %8s %12s %8s %8s %s\n' harness seconds runs coverage corpus findings
status=0
printf '%s\n' "${harnesses[@]}" | xargs -P "$jobs" -I{} bash -c "run_one {} $seconds" || status=1
exit $status
