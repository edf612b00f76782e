#!/usr/bin/python3
"""RDKit baseline for distgeom_bench_smoothing_cpu.

Usage: /usr/bin/python3 smoothing_rdkit.py IN.npy OUT.npy

IN.npy is an n×n float64 RDKit bounds matrix (upper triangle = upper bounds, lower triangle =
lower bounds, Å). It is smoothed in place with rdkit.DistanceGeometry.DoTriangleSmoothing
(rdkit Code/DistGeom/TriangleSmooth.cpp) and written to OUT.npy. Prints one line:
"rdkit VERSION seconds S ok 0|1", where S times only the DoTriangleSmoothing call.
Needs Debian's python3-rdkit (/usr/bin/python3; a pyenv `python3` may lack it).
"""
import sys
import time

import numpy as np
import rdkit
from rdkit import DistanceGeometry


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    bm = np.ascontiguousarray(np.load(sys.argv[1]), dtype=np.float64)
    if bm.ndim != 2 or bm.shape[0] != bm.shape[1]:
        print(f"expected a square matrix, got shape {bm.shape}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    ok = DistanceGeometry.DoTriangleSmoothing(bm)
    seconds = time.perf_counter() - t0
    np.save(sys.argv[2], bm)
    print(f"rdkit {rdkit.__version__} seconds {seconds:.6f} ok {int(bool(ok))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
