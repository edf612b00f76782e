#!/usr/bin/env bash
# make lint: clang-format and clang-tidy over the C++ files changed since LINT_BASE (default: the
# merge base with origin/main, else HEAD~1), using build/ci's compile commands.
# make format: rewrites the same files with clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-lint}
base=${LINT_BASE:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD~1)}
mapfile -t files < <({ git diff --name-only --diff-filter=ACMR "$base"; git ls-files --others --exclude-standard; } |
  grep -E '\.(cpp|hpp|cu|cuh)$' | sort -u)
if [ ${#files[@]} -eq 0 ]; then echo "lint: no C++ file changed since $base"; exit 0; fi
if [ "$mode" = format ]; then clang-format -i "${files[@]}"; echo "format: ${#files[@]} files"; exit 0; fi
status=0
clang-format --dry-run --Werror "${files[@]}" || status=1
[ -f build/ci/compile_commands.json ] || { echo "lint: configure first (make configure)"; exit 2; }
for f in "${files[@]}"; do
  case $f in *.cpp) clang-tidy -quiet -p build/ci "$f" 2>/dev/null || status=1 ;; esac
done
exit $status
