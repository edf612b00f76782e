#!/usr/bin/env bash
# make fuzz: builds the libFuzzer harnesses (the `fuzz` preset: clang, ASan + UBSan) and runs
# each for FUZZ_SECONDS (default 60) of wall-clock time (libFuzzer's -max_total_time), FUZZ_JOBS
# at a time (default: the core count).
# Usage: run_fuzz.sh [HARNESS...]   (default: all; names as in build/fuzz/fuzz/*.seeds)
#        run_fuzz.sh --fold         (adds build/fuzz/cpu.tsv's new runs to tests/fuzz/cpu_ledger.tsv)
#        run_fuzz.sh --totals       (CPU per harness over every round, a Markdown table)
# FUZZ_TIMEOUT: seconds of wall time one input may take before it counts as a hang (default 2).
# The CPU time each run used (user + system) is printed and added to build/fuzz/cpu.tsv, one line
# per run, so that the CPU a harness has had is known on a shared or loaded machine, where it is
# far below the wall time. FUZZ_CPU_GOAL=S turns the script into a rotation: one harness at a time
# (the one with the least CPU in cpu.tsv), FUZZ_SECONDS each (or what the harness still lacks of S,
# plus 2 % and 5 s for the CPU a run gets below its wall time), until every harness has S seconds of
# CPU, or until the file build/fuzz/STOP exists; it can be stopped and started again (e.g. under
# `nice -n 19` in the background). Rotations may run side by side, one per core: each locks the
# harness it runs (build/fuzz/locks/), so they never run one harness twice at once.
# Earlier rounds count from tests/fuzz/cpu_ledger.tsv; `run_fuzz.sh --fold` adds this checkout's
# runs to it (see that file). Corpora grow in build/fuzz/corpus/<harness>/ (seeded from
# sample_data/, shared/data and the committed regressions); findings (crashes, sanitizer reports,
# inputs over the time or memory limit) land in build/fuzz/findings/<harness>/. Keep a finding as a regression input by copying
# it into the harness's regressions/ folder once it is fixed: `make test` replays it.
set -euo pipefail
# A niced rotation started in a session of its own (setsid, nohup from another terminal) sits in
# a scheduler autogroup of its own, where nice ranks it only against itself and a build beside it
# gets no more than an equal share. Give the autogroup the same nice value.
if [ "$(nice)" -gt 0 ] && [ -w /proc/self/autogroup ]; then echo "$(nice)" >/proc/self/autogroup 2>/dev/null || true; fi
cd "$(dirname "$0")/../.."
ledger=tests/fuzz/cpu_ledger.tsv
ledger_end=$(grep -v '^#' "$ledger" | cut -f1 | sort | tail -1)
# --fold: append the runs of build/fuzz/cpu.tsv after the ledger's newest line to the ledger, one
# line per harness (summed; stamped with the newest run), to be committed at the end of a round.
if [ "${1:-}" = --fold ]; then
  [ -f build/fuzz/cpu.tsv ] || { echo "run_fuzz.sh --fold: no build/fuzz/cpu.tsv"; exit 1; }
  awk -F'\t' -v OFS='\t' -v since="$ledger_end" '
    $1 > since { n[$2]++; w[$2] += $3; c[$2] += $4; if ($5 ~ /^[0-9]+$/) r[$2] += $5
                 if ($6 + 0 > cov[$2]) cov[$2] = $6; if ($7 != "none") f[$2] = $7
                 if ($1 > end) end = $1 }
    END { for (h in n) print end, h, w[h], c[h], r[h] + 0, cov[h] + 0, (h in f) ? f[h] : "none" }' \
    build/fuzz/cpu.tsv | sort -k2 | tee -a "$ledger"
  exit 0
fi
# CPU seconds and executions of each harness over every round: the committed ledger of earlier
# rounds and the runs of build/fuzz/cpu.tsv after its newest line. One line per harness:
# harness, CPU seconds, executions (tab-separated).
totals() {
  local runs=build/fuzz/cpu.tsv
  [ -f "$runs" ] || runs=/dev/null
  awk -F'\t' -v OFS='\t' -v since="$ledger_end" '
    FNR == NR { c[$2] += $4; if ($5 ~ /^[0-9]+$/) r[$2] += $5; next }
    $1 > since { c[$2] += $4; if ($5 ~ /^[0-9]+$/) r[$2] += $5 }
    END { for (h in c) print h, c[h], r[h] + 0 }' <(grep -v '^#' "$ledger") "$runs"
}
# --totals: those figures as a Markdown table against FUZZ_CPU_GOAL (default 3600 s).
if [ "${1:-}" = --totals ]; then
  goal=${FUZZ_CPU_GOAL:-3600}
  echo "| harness | CPU s | executions | of ${goal} s |"
  echo "|---|---:|---:|---:|"
  totals | LC_ALL=C sort | awk -F'\t' -v goal="$goal" '
    { printf "| `%s` | %.0f | %.0f | %.0f %% |\n", $1, $2, $3, 100 * $2 / goal; t += $2; tr += $3; n++ }
    END { if (n) printf "| all %d | %.0f | %.0f | %.0f %% |\n", n, t, tr, 100 * t / (goal * n) }'
  exit 0
fi
seconds=${FUZZ_SECONDS:-60}
# libFuzzer's -timeout is wall-clock time: on a loaded machine (a niced rotation beside builds) an
# input that takes 0.05 s alone can exceed 2 s, so such runs want a larger FUZZ_TIMEOUT.
unit_timeout=${FUZZ_TIMEOUT:-2}
jobs=${FUZZ_JOBS:-$(nproc)}
# FUZZ_SKIP_BUILD=1 runs the harnesses already in build/fuzz/bin (the script's own test,
# tests/fuzz/run_fuzz_test.sh, runs stand-ins there).
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  bash packaging/install-deps.sh >/dev/null
  bash packaging/install-deps.sh packaging/debian-packages-fuzz.txt
  [ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
  cmake --preset fuzz >/dev/null
fi
if [ $# -gt 0 ]; then
  harnesses=("$@")
else
  mapfile -t harnesses < <(ls build/fuzz/fuzz/*.seeds | xargs -n1 basename | sed 's/\.seeds$//')
fi
[ "${FUZZ_SKIP_BUILD:-0}" = 1 ] || cmake --build build/fuzz -j "$jobs" --target "${harnesses[@]/#/fuzz_}"

# run_one HARNESS SECONDS TIMEOUT: every limit is an argument, because the parallel path runs it
# in a fresh bash (xargs), which sees only exported functions and variables.
run_one() {
  local h=$1 seconds=$2 unit_timeout=$3
  local corpus=build/fuzz/corpus/$h findings=build/fuzz/findings/$h log=build/fuzz/logs/$h.log
  mkdir -p "$corpus" "$findings" build/fuzz/logs
  # Seeds over 64 KiB are cut by -max_len anyway; the corpus keeps what adds coverage.
  while read -r f; do [ -f "$f" ] && cp -n "$f" "$corpus/seed-$(basename "$f")" 2>/dev/null || true; done \
    < "build/fuzz/fuzz/$h.seeds"
  for d in plugins/*/fuzz/regressions/${h#*_} tests/fuzz/regressions/$h; do
    [ -d "$d" ] && cp -n "$d"/* "$corpus/" 2>/dev/null || true
  done
  local rc=0 cpu TIMEFORMAT='%U %S'
  # bash's `time` gives the fuzzer's user and system CPU seconds (no /usr/bin/time needed).
  cpu=$({ time build/fuzz/bin/fuzz_"$h" "$corpus" -max_total_time="$seconds" -timeout="$unit_timeout" \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || echo "rc=$?" >"$log.rc"; } 2>&1 | awk '{printf "%.1f", $1 + $2}')
  [ -f "$log.rc" ] && { rc=$(cut -d= -f2 "$log.rc"); rm -f "$log.rc"; }
  local runs cov result
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  result=$([ "$rc" -eq 0 ] && echo none || echo "FOUND (exit $rc): $(ls "$findings" | head -3 | tr '\n' ' ')see $log")
  runs=${runs:-?} cov=${cov:-?}
  printf '%-22s %8s %8s %12s %8s %8s %s\n' "$h" "$seconds" "$cpu" "$runs" "$cov" "$(ls "$corpus" | wc -l)" "$result"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$h" "$seconds" "$cpu" "$runs" "$cov" "$result" \
    >>build/fuzz/cpu.tsv
  return "$rc"
}
export -f run_one

# CPU seconds each harness has had so far, all rounds (totals above).
touch build/fuzz/cpu.tsv
cpu_so_far() { totals | awk -F'\t' -v h="$1" '$1 == h { s = $2 } END { printf "%d", s }'; }
# A harness that found something leaves the rotation (libFuzzer stops at its first finding): the
# finding is triaged, and the next rotation takes the harness up again.

printf '%-22s %8s %8s %12s %8s %8s %s\n' harness wall_s cpu_s runs coverage corpus findings
status=0
if [ -n "${FUZZ_CPU_GOAL:-}" ]; then
  rm -f build/fuzz/STOP
  mkdir -p build/fuzz/locks
  found=()
  while [ ! -e build/fuzz/STOP ]; do
    # The harness with the least CPU so far that no other rotation is running (one rotation per
    # core can share build/fuzz: each holds a lock on the harness it runs).
    next="" next_cpu=0 waiting=0
    while read -r c h; do
      exec {lock}>"build/fuzz/locks/$h.lock"
      if flock -n "$lock"; then next=$h next_cpu=$c; break; fi
      exec {lock}>&-
      waiting=1
    done < <(for h in "${harnesses[@]}"; do
      [[ " ${found[*]} " == *" $h "* ]] && continue
      c=$(cpu_so_far "$h")
      [ "$c" -lt "$FUZZ_CPU_GOAL" ] && echo "$c $h"
    done | sort -n)
    if [ -z "$next" ]; then
      [ "$waiting" -eq 1 ] && { sleep 30; continue; }  # the rest are running elsewhere
      break
    fi
    run_s=$(( (FUZZ_CPU_GOAL - next_cpu) * 102 / 100 + 5 ))
    [ "$run_s" -lt "$seconds" ] || run_s=$seconds
    run_one "$next" "$run_s" "$unit_timeout" || { status=1; found+=("$next"); }
    exec {lock}>&-
  done
  for h in "${harnesses[@]}"; do printf '%-22s %8s s of CPU in all\n' "$h" "$(cpu_so_far "$h")"; done
else
  printf '%s\n' "${harnesses[@]}" |
    xargs -P "$jobs" -I{} bash -c 'run_one "$@"' run_one {} "$seconds" "$unit_timeout" || status=1
fi
exit $status
