#!/usr/bin/env bash
# Tests of tests/fuzz/run_fuzz.sh (make fuzz) without clang: the script runs from a scratch tree
# with stand-in harnesses that record the options they were given, and the limits every run must
# carry (the per-input timeout above all: without it a hang is not a finding), the per-run record
# in cpu.tsv and the exit status are checked, in the parallel path and in the rotation.
#   run_fuzz_test.sh PATH/TO/run_fuzz.sh
set -uo pipefail
script=$(realpath "${1:?usage: run_fuzz_test.sh PATH/TO/run_fuzz.sh}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir -p "$work/tests/fuzz" "$work/build/fuzz/fuzz" "$work/build/fuzz/bin" "$work/args"
cp "$script" "$work/tests/fuzz/run_fuzz.sh"
printf '# ledger\n2026-01-01T00:00:00Z\tgood\t60\t30.0\t100\t5\tnone\n2026-01-01T00:00:00Z\tstopper\t60\t20.0\t100\t5\tnone\n' \
  >"$work/tests/fuzz/cpu_ledger.tsv"
# A stand-in harness: writes its arguments to args/NAME, prints libFuzzer's final statistics;
# `crashy` leaves a crash input and fails as libFuzzer does; `stopper` asks a rotation to stop.
for h in good other crashy stopper; do
  : >"$work/build/fuzz/fuzz/$h.seeds"
  cat >"$work/build/fuzz/bin/fuzz_$h" <<FAKE
#!/usr/bin/env bash
printf '%s\n' "\$@" >"$work/args/$h"
echo "#100 DONE cov: 42 ft: 50 corp: 3/30b"
echo "stat::number_of_executed_units: 1234"
case $h in
  crashy) for a in "\$@"; do [[ \$a == -artifact_prefix=* ]] && touch "\${a#-artifact_prefix=}crash-0"; done; exit 77 ;;
  stopper) touch build/fuzz/STOP ;;
esac
exit 0
FAKE
  chmod +x "$work/build/fuzz/bin/fuzz_$h"
done
run() { (cd "$work" && env FUZZ_SKIP_BUILD=1 "$@" bash tests/fuzz/run_fuzz.sh "${run_args[@]}") >"$work/out" 2>&1; }
has_arg() { grep -qxF -- "$2" "$work/args/$1" || fail "$1 was not given $2: $(tr '\n' ' ' <"$work/args/$1")"; }

# The parallel path (make fuzz): each harness in a fresh bash, with every limit.
run_args=(good other); rm -f "$work/args/"*
run FUZZ_SECONDS=3 FUZZ_TIMEOUT=7 FUZZ_JOBS=2 || fail "parallel run exited $?: $(cat "$work/out")"
for h in good other; do
  [ -f "$work/args/$h" ] || { fail "$h did not run"; continue; }
  has_arg "$h" -timeout=7; has_arg "$h" -max_total_time=3; has_arg "$h" -rss_limit_mb=2048
  has_arg "$h" -malloc_limit_mb=2048
done
[ "$(grep -c $'\tnone$' "$work/build/fuzz/cpu.tsv")" = 2 ] || fail "cpu.tsv: $(cat "$work/build/fuzz/cpu.tsv")"
grep -q $'\tgood\t3\t[0-9.]*\t1234\t42\tnone' "$work/build/fuzz/cpu.tsv" || fail "no run record of good"

# The default per-input limit (2 s) when FUZZ_TIMEOUT is not set.
run_args=(good); rm -f "$work/args/"*
run FUZZ_SECONDS=1 || fail "default run exited $?"
has_arg good -timeout=2

# A finding: the script fails and the record names it.
run_args=(crashy good); rm -f "$work/args/"*
run FUZZ_SECONDS=1 FUZZ_TIMEOUT=5 FUZZ_JOBS=1 && fail "a run with a finding exited 0"
grep -q $'\tcrashy\t.*FOUND (exit 77): crash-0' "$work/build/fuzz/cpu.tsv" || fail "no FOUND record: $(tail -2 "$work/build/fuzz/cpu.tsv")"
has_arg good -timeout=5

# The rotation: the harness with the least CPU runs, with the same limits, until STOP.
run_args=(stopper good); rm -f "$work/args/"* "$work/build/fuzz/STOP"
run FUZZ_CPU_GOAL=3600 FUZZ_SECONDS=4 FUZZ_TIMEOUT=9 || fail "rotation exited $?: $(cat "$work/out")"
[ -f "$work/args/good" ] && fail "the rotation ran good (30 s in the ledger) before stopper (20 s)"
has_arg stopper -timeout=9; has_arg stopper -max_total_time=4

# Near its goal a harness runs only what it lacks (plus 2 % and 5 s): 100 − 20 s → 86 s, not 600.
run_args=(stopper); rm -f "$work/args/"* "$work/build/fuzz/STOP"
run FUZZ_CPU_GOAL=100 FUZZ_SECONDS=600 || fail "rotation near its goal exited $?: $(cat "$work/out")"
has_arg stopper -max_total_time=86

[ "$failures" -eq 0 ] && echo "run_fuzz.sh: all checks passed"
exit $((failures > 0))
