#!/usr/bin/env bash
# make test-asan-ci (and .ci/run): the part of the tests that CI runs under AddressSanitizer +
# UndefinedBehaviorSanitizer (the asan preset, build/asan), chosen to fit CI's time limit
# (docs/reliability.md gives the measured cost of each part). `make test-asan` runs everything.
# Parts (ASAN_PARTS, default "core io plugins cli python workflows sweep"):
#   core     the engine and the workflow loader (gemflow_core_tests)
#   io       every io reader (gemflow_io_tests) and the replay of their fuzz corpora and regression
#            inputs (fuzz_replay_io_*)
#   plugins  the CPU algorithms and nodes of the other plugins (gemflow_<plugin>_tests of linalg,
#            distgeom, flame, semicrf, circlepack) and the replay of the flame and circle-packing
#            readers' fuzz inputs
#   cli      the `gemflow` command end to end (gemflow_cli_tests: it builds the command and every
#            plugin, in-tree and test)
#   python   the Python module and its example (python_module, python_example: python3 with the
#            ASan runtime preloaded, tests/python/CMakeLists.txt); skipped, saying so, where the
#            module is not configured
#   workflows  the shipped workflows end to end (gemflow_workflow_tests, gemflow_flame_workflow_tests:
#              minutes of CPU for the NMR and reconstruction workflows at full size)
#   sweep      sweeps end to end (gemflow_sweep_cli_tests)
# Not in any part: the scale-out tests (Slurm, MPI), CUDA and Studio.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
read -r -a parts <<<"${ASAN_PARTS:-core io plugins cli python workflows sweep}"
[ -f build/asan/build.ninja ] || cmake --preset asan >/dev/null
binaries=() # tests are chosen by the binary their command runs ...
names=()    # ... or by name (the Python tests run python3)
targets=()  # built besides the binaries
for part in "${parts[@]}"; do
  case $part in
    core) binaries+=(gemflow_core_tests) ;;
    io)
      mapfile -t replays < <(ninja -C build/asan -t targets all | grep -oE '^fuzz_replay_io_[a-z_]+' | sort -u)
      binaries+=(gemflow_io_tests "${replays[@]}")
      ;;
    plugins)
      binaries+=(gemflow_linalg_tests gemflow_distgeom_tests gemflow_flame_tests gemflow_semicrf_tests
        gemflow_circlepack_tests fuzz_replay_flame_reader fuzz_replay_circlepack_mesh)
      ;;
    cli) binaries+=(gemflow_cli_tests) ;;
    workflows) binaries+=(gemflow_workflow_tests gemflow_flame_workflow_tests) ;;
    sweep) binaries+=(gemflow_sweep_cli_tests) ;;
    python)
      if ! ninja -C build/asan -t targets all | grep '^gemflow_python:' >/dev/null; then  # not -q: pipefail
        echo "asan_subset: python part skipped: the Python module is not configured (python3-dev, pybind11-dev)"
        continue
      fi
      names+=(python_module python_example)
      targets+=(gemflow_python gemflow_test_plugins gemflow_plugin_io gemflow_plugin_distgeom)
      ;;
    *) echo "asan_subset: unknown part '$part' (core, io, plugins, cli, workflows, sweep, python)" >&2; exit 2 ;;
  esac
done
[ ${#binaries[@]} -gt 0 ] || [ ${#targets[@]} -gt 0 ] || { echo "asan_subset: nothing to run"; exit 0; }
cmake --build build/asan -j "$jobs" --target "${binaries[@]}" "${targets[@]}"
# The CTest tests whose command runs one of these binaries, by number (ctest -I 0,0,0,N,...;
# JSON order is CTest's numbering): a name regex of hundreds of tests is too long for CTest.
tests=$(ctest --test-dir build/asan --show-only=json-v1 | python3 -c '
import json, os, sys
want = set(sys.argv[1:])
numbers = [str(i + 1) for i, t in enumerate(json.load(sys.stdin)["tests"])
           if t["name"] in want or (t.get("command") and os.path.basename(t["command"][0]) in want)]
if not numbers: sys.exit("asan_subset: no test runs or is named " + " ".join(sorted(want)))
print(",".join(numbers))
' "${binaries[@]}" "${names[@]}")
ctest --preset asan -j "$jobs" -I "0,0,0,$tests"
