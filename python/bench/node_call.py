"""Overhead of calling a node from Python (docs/performance.md, "Python node calls").

    PYTHONPATH=build/ci/python GEMFLOW_PLUGIN_PATH=build/ci/test-plugins/testnodes \
        python3 python/bench/node_call.py

test.add of two 1×1 matrices does ~0.1 µs of work, so its call time is the overhead: argument
sorting, parameter checks, input conversion, node creation, the GIL released and taken back,
outputs wrapped as NumPy views. Then the same with a large input passed back from a result
(no copy) and as a fresh NumPy array (one copy into the SDK's Matrix).
"""
import time

import numpy as np

import gemflow


def per_call(f, n):
    """Best of 5 rounds, in CPU seconds of this process per call (steadier than the wall clock on
    a shared machine; the calls run on this thread)."""
    f()  # warm
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(n):
            f()
        best = min(best, (time.process_time() - t0) / n)
    return best


def main():
    add = gemflow.node("test.add")
    const = gemflow.node("test.constant")
    one = np.ones((1, 1))
    print(f"test.add 1×1, NumPy in, NumPy out:         {1e6 * per_call(lambda: add(a=one, b=one), 20000):6.1f} µs")
    print(f"test.add 1×1, raw=True (gemflow.Data out):  {1e6 * per_call(lambda: add(a=one, b=one, raw=True), 20000):6.1f} µs")
    print(f"test.constant (no inputs, one parameter):   {1e6 * per_call(lambda: const(value=2.0), 20000):6.1f} µs")
    n = 2000
    big = np.random.default_rng(1).random((n, n))
    result = add(a=big, b=np.zeros((n, n)))["sum"]  # a view of a node's result
    t_view = per_call(lambda: gemflow.to_gemflow("Matrix<f64>", result), 200)
    t_copy = per_call(lambda: gemflow.to_gemflow("Matrix<f64>", big), 20)
    print(f"{n}×{n} input ({big.nbytes / 2**20:.0f} MiB): a result passed back {1e6 * t_view:8.1f} µs, "
          f"a fresh array {1e6 * t_copy:8.1f} µs (one copy)")


if __name__ == "__main__":
    main()
