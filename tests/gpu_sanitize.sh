#!/usr/bin/env bash
# compute-sanitizer over every GPU test binary (*_gpu_tests) of a build or bundle bin folder, one
# run per binary and tool, within one time budget; prints a summary table (docs/reliability.md).
#
#   tests/gpu_sanitize.sh BIN_DIR [TOOL...]        (default tools: racecheck synccheck memcheck)
#
# Environment:
#   GPU_SANITIZE_BUDGET  seconds for everything (default 450: the whole script stays under 8
#                        minutes with the start-up of each run); each run gets its share of the
#                        budget still left (a racecheck run counts twice: it is the slowest tool
#                        and the one this script is mostly for), so time a quick run leaves goes
#                        to the later ones. A run stopped by its limit is reported as `timeout` with the
#                        tests it finished and the one it was in: its reports so far still count.
#   GPU_SANITIZE_LOGS    folder for the full logs (default gpu-sanitize-logs)
#   GPU_SANITIZE_PER_TEST  seconds: run each test on its own (--gtest_filter=ONE) with at most
#                        this limit, so that one test at a size the tool cannot finish costs
#                        only its own limit and the others are still covered (racecheck slows
#                        shared-memory kernels by orders of magnitude); the row then counts the
#                        tests that timed out, and their names follow the table
#   GPU_SANITIZE_LAUNCH_COUNT  N: check only the first N kernel launches of each run (the tool's
#                        --launch-count; with GPU_SANITIZE_PER_TEST, of each test); the later
#                        launches run uninstrumented, at full speed. For racecheck on suites
#                        whose tests launch the same kernels hundreds of times (iterative
#                        solvers, MD steps), where the first launches cover every kernel.
#   GPU_SANITIZE_ONLY    an extended regex: with GPU_SANITIZE_PER_TEST, run only the tests
#                        (Suite.Name) it matches, e.g. the ones an earlier run could not finish
#   GPU_SANITIZE_JOBS    J: with GPU_SANITIZE_PER_TEST, run J tests of a binary side by side on
#                        the one card (default 1), each under the same per-test limit, so that a
#                        budget covers more tests where the host has cores to spare (an H100 host
#                        with 16 cores ran eleven tool runs at once on 2026-12-07)
#   GPU_SANITIZE_ARGS    more options for every run of the tool, split at spaces, e.g.
#                        '--kernel-name-exclude kns=potrf_tiled_kernel' to check the other
#                        kernels of tests where one kernel stops the tool (docs/reliability.md)
#   COMPUTE_SANITIZER    the tool (default: compute-sanitizer on PATH, else /usr/local/cuda/bin)
# Binaries are run from the current folder (as ctest runs them from the build folder), with the
# bundle's env.sh sourced when BIN_DIR/../env.sh exists (../shared/gpu/bundle.sh). Tests that
# read sample_data/ (the 2KPU embedding) find it at the source path compiled into them
# (GEMFLOW_SOURCE_DIR): on another machine, link the checkout to that path first.
# Output: one table row per run as soon as it ends (so that a run cut by an outer limit still
# leaves the rows before it), then, for each run with reports or failures, its first lines.
# Exit status: 0 when no run reported an error or hazard, every test that ran passed and each
# binary ran at least one test (all skipped: no device seen), else 1 (a timeout alone is not a
# failure: the row says how far the run got); 2 when nothing could run.
set -uo pipefail
bin=${1:?usage: gpu_sanitize.sh BIN_DIR [TOOL...]}
shift
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(racecheck synccheck memcheck)
budget=${GPU_SANITIZE_BUDGET:-450}
jobs=${GPU_SANITIZE_JOBS:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "gpu_sanitize: GPU_SANITIZE_JOBS must be a positive integer, not '$jobs'"; exit 2; }
logs=${GPU_SANITIZE_LOGS:-gpu-sanitize-logs}
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$cs" ] || { echo "gpu_sanitize: compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 2; }
[ -f "$bin/../env.sh" ] && . "$bin/../env.sh"
mkdir -p "$logs"

# Fastest binaries first, so that a budget cut falls on the long Cholesky suite.
order=(gemflow_cuda_helpers_gpu_tests gemflow_flame_gpu_tests gemflow_semicrf_gpu_tests
  gemflow_circlepack_gpu_tests gemflow_distgeom_gpu_tests gemflow_linalg_gpu_tests)
binaries=()
for b in "${order[@]}"; do [ -x "$bin/$b" ] && binaries+=("$b"); done
for f in "$bin"/*_gpu_tests; do
  b=$(basename "$f")
  [ -x "$f" ] && [[ " ${binaries[*]} " != *" $b "* ]] && binaries+=("$b")
done
[ ${#binaries[@]} -gt 0 ] || { echo "gpu_sanitize: no *_gpu_tests in $bin"; exit 2; }

# Tests left out, and why: LaunchCheckNamesTheKernel launches a 4096-thread block on purpose to
# check the error message, which every tool reports as an API error. Tests at benchmark sizes
# (the batched smoothing sweep, Cholesky at large n) would take the whole budget under the tools;
# each kernel they run is also run at small sizes by the other tests.
exclude() {
  case $1 in
    gemflow_cuda_helpers_gpu_tests) echo 'CudaHelpersGpu.LaunchCheckNamesTheKernel' ;;
    gemflow_distgeom_gpu_tests) echo 'GpuSmoothing.BatchedMatchesReferenceAndSingleMatrixPath' ;;
    gemflow_linalg_gpu_tests) echo '*AtLargeN*:*WithMoreStripsThanSms*:*MoreTriangularBlocksThanSms*' ;;
    *) echo '' ;;
  esac
}

weight() { [ "$1" = racecheck ] && echo 2 || echo 1; }

# The binary's tests as Suite.Name, less the excluded ones (a ':'-separated gtest pattern list).
list_tests() {
  "$1" --gtest_list_tests 2>/dev/null | awk -v ex="$2" '
    BEGIN { n = split(ex, pat, ":") }
    /^[^ ]/ { suite = $1; next }
    /^  / { t = suite $1; keep = 1
            for (k = 1; k <= n; ++k) { p = pat[k]; gsub(/\./, "\\.", p); gsub(/\*/, ".*", p)
                                       if (p != "" && t ~ ("^" p "$")) keep = 0 }
            if (keep) print t }'
}
timed_out=()
shares=0
for tool in "${tools[@]}"; do shares=$((shares + ${#binaries[@]} * $(weight "$tool"))); done
start=$SECONDS
status=0
flagged=()
row() { printf '%-32s %-10s %7s %7s %7s %8s %6s  %s\n' "$@"; }
row binary tool passed failed skipped reports s result
for tool in "${tools[@]}"; do
  for b in "${binaries[@]}"; do
    left=$((budget - (SECONDS - start)))
    w=$(weight "$tool")
    limit=$((left * w / shares))
    shares=$((shares - w))
    log="$logs/$b.$tool.log"
    if [ "$limit" -lt 5 ]; then
      row "$b" "$tool" - - - - 0 "not run: its share of the budget left is $limit s (under 5 s)"
      continue
    fi
    filter=$(exclude "$b")
    # A test that fails before its first CUDA call (an argument refused on the host) is not an
    # error of the tool's kind: without --require-cuda-init=no it would be reported as one.
    extra=(--require-cuda-init=no)
    [ "$tool" = racecheck ] && extra+=(--racecheck-report hazard)
    [ -n "${GPU_SANITIZE_LAUNCH_COUNT:-}" ] && extra+=(--launch-count "$GPU_SANITIZE_LAUNCH_COUNT")
    read -r -a more <<<"${GPU_SANITIZE_ARGS:-}"  # split at spaces, no glob expansion
    extra+=("${more[@]}")
    t0=$SECONDS
    timeouts=0
    if [ -n "${GPU_SANITIZE_PER_TEST:-}" ]; then
      mapfile -t tests < <(list_tests "$bin/$b" "$filter" | grep -E "${GPU_SANITIZE_ONLY:-.}")
      # Worker k runs tests k, k + J, ... into $log.wk; the tests it could not finish go to
      # $log.wk.cut and the last failing exit status to $log.wk.rc.
      worker() {
        local k=$1 i t tl r
        : >"$log.w$k"
        : >"$log.w$k.cut"
        echo 0 >"$log.w$k.rc"
        for ((i = k; i < ${#tests[@]}; i += jobs)); do
          t=${tests[i]}
          tl=$((limit - (SECONDS - t0)))
          [ "$tl" -gt "$GPU_SANITIZE_PER_TEST" ] && tl=$GPU_SANITIZE_PER_TEST
          if [ "$tl" -lt 2 ]; then
            echo "[ NOT RUN  ] $t (the binary's share of the budget is spent)" >>"$log.w$k"
            echo "$b $tool $t: not run, budget spent" >>"$log.w$k.cut"
            continue
          fi
          timeout -s INT -k 10 "$tl" "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 86 \
            --print-limit 100 "$bin/$b" --gtest_filter="$t" >>"$log.w$k" 2>&1
          r=$?
          if [ "$r" -eq 124 ] || [ "$r" -eq 130 ] || [ "$r" -eq 137 ]; then
            echo "$b $tool $t: timeout after $tl s" >>"$log.w$k.cut"
          elif [ "$r" -ne 0 ]; then
            echo "$r" >"$log.w$k.rc"
          fi
        done
      }
      for ((k = 0; k < jobs; ++k)); do worker "$k" & done
      wait
      : >"$log"
      rc=0
      for ((k = 0; k < jobs; ++k)); do
        cat "$log.w$k" >>"$log"
        while IFS= read -r line; do
          timed_out+=("$line")
          [[ $line == *": timeout after "* ]] && timeouts=$((timeouts + 1))
        done <"$log.w$k.cut"
        r=$(cat "$log.w$k.rc")
        [ "$r" -ne 0 ] && rc=$r
        rm -f "$log.w$k" "$log.w$k.cut" "$log.w$k.rc"
      done
    else
      timeout -s INT -k 10 "$limit" "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 86 \
        --print-limit 100 "$bin/$b" ${filter:+--gtest_filter=-$filter} >"$log" 2>&1
      rc=$?
    fi
    secs=$((SECONDS - t0))
    ok=$(grep -c '^\[       OK \]' "$log")
    failed=$(grep -c '^\[  FAILED  \] [A-Za-z0-9_/]*\.[A-Za-z0-9_/]* (' "$log")
    skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z0-9_/]*\.[A-Za-z0-9_/]* (' "$log")
    # The tool's summary when the run ended by itself; the reports printed so far when it was cut
    # (the larger of the two, so that a report is never hidden).
    summary=$(grep -oE '^========= (ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | grep -oE '[0-9]+$' |
      awk '{s += $1} END {print s + 0}')
    # (initcheck reports a copy of never-written memory as "Host API memory access error"; the
    # "Internal Sanitizer Error" of a kernel the tool could not follow counts too.)
    printed=$(grep -cE '^========= (Error|Warning|Invalid|Program hit|Barrier|Race|Uninitialized|Leaked|Host API|Internal Sanitizer Error)' "$log")
    reports=$(( ${summary:-0} > printed ? ${summary:-0} : printed ))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 130 ] || [ "$rc" -eq 137 ]; then
      current=$(grep -oE '^\[ RUN      \] .*' "$log" | tail -1 | cut -c14-)
      result="timeout after $secs s, in ${current:-start-up}"
      [ "$reports" -gt 0 ] && result="REPORTS before a $result (see $log)"
    elif [ "$reports" -gt 0 ]; then
      result="REPORTS (see $log)"
    elif [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
      result="TEST FAILED, exit $rc (see $log)"
    elif [ "$timeouts" -gt 0 ]; then
      result="clean in the tests that finished; $timeouts timed out (listed below)"
    elif [ "$ok" -eq 0 ]; then
      result="NO TEST RAN ($skipped skipped: no CUDA device seen?)"
    else
      result=clean
    fi
    [ "$reports" -gt 0 ] || [ "$failed" -gt 0 ] && status=1
    [[ $result == TEST* || $result == NO* ]] && status=1
    [[ $result == clean* || $result == timeout* ]] && [ "$reports" -eq 0 ] || flagged+=("$log")
    row "$b" "$tool" "$ok" "$failed" "$skipped" "$reports" "$secs" "$result"
  done
done

[ -n "${GPU_SANITIZE_ARGS:-}" ] && echo "tool options added to every run: $GPU_SANITIZE_ARGS"
echo "total $((SECONDS - start)) s (budget $budget s); logs in $logs/; left out of every run:"
for b in "${binaries[@]}"; do f=$(exclude "$b"); [ -n "$f" ] && echo "  $b: $f"; done
for t in "${timed_out[@]}"; do echo "  per test: $t"; done
# The first lines of each flagged run: the tool's reports and the failed tests' messages.
for log in "${flagged[@]}"; do
  echo "--- $log"
  grep -E '^========= [A-Z][a-z]|^\[  (FAILED|SKIPPED) \] .*\(|Failure$|^Expected|^  Actual|Which is' "$log" | head -12
done
exit $status
