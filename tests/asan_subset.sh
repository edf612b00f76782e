#!/usr/bin/env bash
# make test-asan-ci (and .ci/run): the part of the tests that CI runs under AddressSanitizer +
# UndefinedBehaviorSanitizer (the asan preset, build/asan): the core engine and the workflow
# loader (gemflow_core_tests), every io reader (gemflow_io_tests) and the replay of every io
# reader's fuzz corpus and regression inputs (fuzz_replay_io_*). No CUDA, no Studio, no other
# plugin (fuzz_replay_workflow_yaml loads every plugin, so it would build them all). Chosen to fit
# CI's time limit: docs/reliability.md gives the figures. `make test-asan` runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
[ -f build/asan/build.ninja ] || cmake --preset asan >/dev/null
mapfile -t replays < <(ninja -C build/asan -t targets all | grep -oE '^fuzz_replay_io_[a-z_]+' | sort -u)
binaries=(gemflow_core_tests gemflow_io_tests "${replays[@]}")
cmake --build build/asan -j "$jobs" --target "${binaries[@]}"
# The CTest tests whose command runs one of these binaries, by number (ctest -I 0,0,0,N,...;
# JSON order is CTest's numbering): a name regex of hundreds of tests is too long for CTest.
tests=$(ctest --test-dir build/asan --show-only=json-v1 | python3 -c '
import json, os, sys
want = set(sys.argv[1:])
numbers = [str(i + 1) for i, t in enumerate(json.load(sys.stdin)["tests"])
           if t.get("command") and os.path.basename(t["command"][0]) in want]
if not numbers: sys.exit("asan_subset: no test runs " + " ".join(sorted(want)))
print(",".join(numbers))
' "${binaries[@]}")
ctest --preset asan -j "$jobs" -I "0,0,0,$tests"
