"""The examples of this folder, run as tests (CTest: python_example)."""
import os
import runpy

import numpy as np


def metric(report, name):
    """A value of a metric/value report (a DataFrame or a list of records)."""
    rows = report.to_dict("records") if hasattr(report, "to_dict") else list(report)
    return float(next(r["value"] for r in rows if r["metric"] == name))


def test_reconstruct_2kpu(tmp_path):
    os.environ["EXAMPLE_OUT"] = str(tmp_path)
    ns = runpy.run_path(os.path.join(os.path.dirname(__file__), "reconstruct_2kpu.py"))
    # the chain gives the model back (docs/nmr-structure.md: heavy-atom RMSD goal ≤ 1 Å)
    assert metric(ns["report"], "heavy_rmsd_A") < 1.0
    # the workflow built in code saved, reloaded and ran up to the smoothing only
    assert (tmp_path / "reconstruct.yaml").exists()
    assert ("smooth", "done") in ns["states"]
    assert sorted(ns["results"]) == ["bounds.bounds", "read.structure", "smooth.bounds"]
    # bounds are views of the node's result: read-only, the N×N of the labels
    b = ns["bounds"]
    assert b.upper.shape == (len(b.labels), len(b.labels)) and not b.upper.flags.writeable
    assert np.all(ns["smoothed"].upper <= b.upper + 1e-12)
