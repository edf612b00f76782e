#!/usr/bin/env bash
# `make demo`: runs the shipped NMR structure workflow with the built `gemflow` and prints where
# the results are and the headline numbers of its report.
#
#   packaging/demo.sh BUILD_DIR
#
# Exits with gemflow's exit code when the run fails, 2 when something it needs is missing.
set -euo pipefail

build=${1:?usage: packaging/demo.sh BUILD_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -d "$build" ] && build=$(cd "$build" && pwd)   # relative to the caller's folder
cd "$root"

gemflow="$build/bin/gemflow"
workflow=workflows/nmr_structure.yaml
out=out/demo
report=$out/report.json

fail() { echo "demo: $*" >&2; exit 2; }

[ -x "$gemflow" ] || fail "no gemflow executable at $gemflow (build first: make build)"
[ -f "$workflow" ] || fail "the demo workflow $workflow is missing (it ships with the distgeom plugin)"

echo "demo: $gemflow run $workflow --out $out"
rc=0
"$gemflow" run "$workflow" --out "$out" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "demo: gemflow run failed with exit code $rc (1: a node failed, 2: invalid workflow, 3: cancelled)" >&2
  exit "$rc"
fi
[ -f "$report" ] || fail "the run finished but wrote no $report"

# Headline numbers (python3's json module; every field must be present).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" - "$report" "$out" <<'PY'
import json, sys

report_path, out = sys.argv[1], sys.argv[2]
with open(report_path) as f:
    r = json.load(f)

fields = [
    ("backbone_rmsd_A", "Backbone RMSD to the reference (model 1)", "Å"),
    ("backbone_rmsd_to_reference_mean_A", "Backbone RMSD to the reference (ensemble mean)", "Å"),
    ("precision_backbone_A", "Ensemble precision (RMSD to the mean)", "Å"),
    ("heavy_rmsd_A", "Heavy-atom RMSD to the reference", "Å"),
    ("violations_gt_0_5A", "Restraint violations > 0.5 Å", ""),
    ("restraints_used", "Restraints used", ""),
    ("restraints_skipped", "Restraints skipped", ""),
    ("ordered_residue_count", "Ordered residues (RMSD over these)", ""),
    ("residue_count", "Residues", ""),
]
missing = [k for k, _, _ in fields if k not in r]
if missing:
    sys.exit(f"demo: {report_path} lacks {', '.join(missing)}")

def show(v):
    return f"{v:.2f}" if isinstance(v, float) else str(v)

print()
print(f"Results in {out}/ (report.json, provenance.json and the structures)")
w = max(len(label) for _, label, _ in fields)
for key, label, unit in fields:
    print(f"  {label:<{w}}  {show(r[key])}{' ' + unit if unit else ''}")
PY
