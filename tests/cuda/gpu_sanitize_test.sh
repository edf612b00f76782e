#!/usr/bin/env bash
# Tests of tests/gpu_sanitize.sh without a GPU: a stand-in for compute-sanitizer plays the tool's
# output for named fake tests (clean, a race, a report and then a hang, a hang, the tool's own
# internal error), and the summary table, the list of tests cut, and the exit status are checked.
#   gpu_sanitize_test.sh PATH/TO/gpu_sanitize.sh
set -uo pipefail
script=$(realpath "${1:?usage: gpu_sanitize_test.sh PATH/TO/gpu_sanitize.sh}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Fake test binaries: only --gtest_list_tests is asked of them (the stand-in tool plays the runs).
mkdir -p "$work/bin"
fake_binary() {  # name test...
  local f="$work/bin/$1"
  shift
  { echo '#!/usr/bin/env bash'
    echo 'echo "Fake."'
    for t in "$@"; do echo "echo '  $t'"; done; } >"$f"
  chmod +x "$f"
}
fake_binary gemflow_good_gpu_tests Clean Hangs
fake_binary gemflow_bad_gpu_tests Clean Race ReportThenHang InternalError

# The stand-in tool: compute-sanitizer --tool T [options] BINARY [--gtest_filter=F]. With a filter
# of one test it plays that test; without one (or with a negative filter) every test in turn.
cat >"$work/tool" <<'TOOL'
#!/usr/bin/env bash
filter='' binary='' exclude=''
prev=''
for a in "$@"; do
  [ "$prev" = --kernel-name-exclude ] && exclude=$a
  prev=$a
  case $a in
    --gtest_filter=*) filter=${a#--gtest_filter=} ;;
    */*_gpu_tests) binary=$a ;;
  esac
done
play() {
  echo "[ RUN      ] Fake.$1"
  case $1 in
    Clean) echo "[       OK ] Fake.Clean (1 ms)" ;;
    Race) echo "========= Error: Race reported between Write access at 0x10 in kernel()"
          echo "[       OK ] Fake.Race (1 ms)"; echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"; exit 86 ;;
    ReportThenHang) echo "========= Host API memory access error at host access to 0x7f00 of size 8 bytes"
                    echo "========= Uninitialized access to 0x7f00 on access by cudaMemcpy source"; exec sleep 60 ;;
    Hangs) exec sleep 60 ;;
    # stops the tool unless its kernel is left out of the checks
    InternalError) [ "$exclude" = kns=bad_kernel ] && { echo "[       OK ] Fake.InternalError (1 ms)"; return; }
                   echo "========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception."
                   echo "[  FAILED  ] Fake.InternalError (1 ms)"; exit 1 ;;
    # A pair that passes only when both run at once: each leaves a mark, then waits for the other's.
    PairA | PairB) touch "$FAKE_MARKS/$1"; other=PairA; [ "$1" = PairA ] && other=PairB
                   until [ -e "$FAKE_MARKS/$other" ]; do sleep 0.1; done
                   echo "[       OK ] Fake.$1 (1 ms)" ;;
  esac
}
if [[ $filter == Fake.* ]]; then
  play "${filter#Fake.}"
else
  "$binary" --gtest_list_tests | sed -n 's/^  //p' | while read -r t; do play "$t"; done
fi
echo "========= ERROR SUMMARY: 0 errors"
TOOL
chmod +x "$work/tool"

# run NAME BINARIES [VAR=VALUE...] -- TOOL: runs the script on a folder with the given binaries.
run() {
  local name=$1 bins=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  rm -rf "$work/$name"
  mkdir -p "$work/$name/bin"
  for b in $bins; do cp "$work/bin/$b" "$work/$name/bin/"; done
  mkdir -p "$work/$name/marks"
  (cd "$work" && env COMPUTE_SANITIZER="$work/tool" GPU_SANITIZE_LOGS="$work/$name/logs" FAKE_MARKS="$work/$name/marks" "${envs[@]}" \
    bash "$script" "$work/$name/bin" "$@") >"$work/$name.out" 2>&1
  echo $? >"$work/$name.rc"
}
row() { grep -E "^$2 +$3 " "$work/$1.out"; }
expect_rc() { [ "$(cat "$work/$1.rc")" = "$2" ] || fail "$1: exit $(cat "$work/$1.rc"), expected $2"; }
expect_row() {  # name binary tool passed failed reports result-pattern
  local r
  r=$(row "$1" "$2" "$3")
  [ -n "$r" ] || { fail "$1: no row for $2 $3"; return; }
  read -r _ _ p f _ rep _ <<<"$r"
  [ "$p" = "$4" ] || fail "$1: $2 $3 passed $p, expected $4"
  [ "$f" = "$5" ] || fail "$1: $2 $3 failed $f, expected $5"
  [ "$rep" = "$6" ] || fail "$1: $2 $3 reports $rep, expected $6"
  [[ $r =~ $7 ]] || fail "$1: $2 $3 result '$r' does not match '$7'"
}
expect_line() { grep -qE "$2" "$work/$1.out" || fail "$1: no line matching '$2'"; }

# One test at a time: a hang costs its own limit and is listed; reports printed before a hang count.
for jobs in 1 3; do
  n=per_test_j$jobs
  run $n "gemflow_good_gpu_tests gemflow_bad_gpu_tests" GPU_SANITIZE_PER_TEST=4 GPU_SANITIZE_BUDGET=60 \
    GPU_SANITIZE_JOBS=$jobs -- racecheck
  expect_rc $n 1
  expect_row $n gemflow_good_gpu_tests racecheck 1 0 0 'clean in the tests that finished; 1 timed out'
  # Reports counted from the printed lines (more than the tools' summaries give): the race, the
  # two before the hang, the internal error; the internal error's test failed.
  expect_row $n gemflow_bad_gpu_tests racecheck 2 1 4 'REPORTS \(see '
  expect_line $n 'per test: gemflow_good_gpu_tests racecheck Fake\.Hangs: timeout after 4 s'
  expect_line $n 'per test: gemflow_bad_gpu_tests racecheck Fake\.ReportThenHang: timeout after 4 s'
  expect_line $n 'Internal Sanitizer Error'
done

# GPU_SANITIZE_JOBS=2 runs two tests at once: the pair passes; one at a time, the first waits in vain.
fake_binary gemflow_pair_gpu_tests PairA PairB
run pair_j2 "gemflow_pair_gpu_tests" GPU_SANITIZE_PER_TEST=8 GPU_SANITIZE_JOBS=2 -- memcheck
expect_rc pair_j2 0
expect_row pair_j2 gemflow_pair_gpu_tests memcheck 2 0 0 ' clean$'
run pair_j1 "gemflow_pair_gpu_tests" GPU_SANITIZE_PER_TEST=4 -- memcheck
expect_row pair_j1 gemflow_pair_gpu_tests memcheck 1 0 0 'clean in the tests that finished; 1 timed out'
expect_line pair_j1 'per test: gemflow_pair_gpu_tests memcheck Fake\.PairA: timeout after 4 s'

# Only the tests a regex matches.
run only "gemflow_bad_gpu_tests" GPU_SANITIZE_PER_TEST=4 GPU_SANITIZE_ONLY='Clean$' -- memcheck
expect_rc only 0
expect_row only gemflow_bad_gpu_tests memcheck 1 0 0 '^.* clean$'

# GPU_SANITIZE_ARGS reaches the tool: leaving out the kernel that stops it lets the test pass.
run args "gemflow_bad_gpu_tests" GPU_SANITIZE_PER_TEST=4 GPU_SANITIZE_ONLY='InternalError$' \
  GPU_SANITIZE_ARGS='--kernel-name-exclude kns=bad_kernel' -- racecheck
expect_rc args 0
expect_row args gemflow_bad_gpu_tests racecheck 1 0 0 ' clean$'
expect_line args 'tool options added to every run: --kernel-name-exclude kns=bad_kernel'

# A whole-binary run cut by its share of the budget names the test it was in (12 s: a run whose
# share is under 5 s is not started, and a loaded machine takes seconds to get there).
run whole "gemflow_good_gpu_tests" GPU_SANITIZE_BUDGET=12 -- synccheck
expect_rc whole 0
expect_row whole gemflow_good_gpu_tests synccheck 1 0 0 'timeout after [0-9]+ s, in Fake\.Hangs'

# A whole-binary run cut after a report: the report is not hidden by the cut.
fake_binary gemflow_cut_gpu_tests Clean ReportThenHang
run cut "gemflow_cut_gpu_tests" GPU_SANITIZE_BUDGET=12 -- initcheck
expect_rc cut 1
expect_row cut gemflow_cut_gpu_tests initcheck 1 0 2 'REPORTS before a timeout after [0-9]+ s, in Fake\.ReportThenHang'

# Bad arguments.
run badjobs "gemflow_good_gpu_tests" GPU_SANITIZE_JOBS=0 GPU_SANITIZE_PER_TEST=4 -- memcheck
expect_rc badjobs 2
expect_line badjobs 'GPU_SANITIZE_JOBS must be a positive integer'

if [ "$failures" -gt 0 ]; then
  for f in "$work"/*.out; do echo "--- $(basename "$f")"; cat "$f"; done
  echo "$failures failure(s)"
  exit 1
fi
echo "gpu_sanitize.sh: all cases pass"
