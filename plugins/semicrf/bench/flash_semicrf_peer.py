#!/usr/bin/env python3
"""Times Flash-SemiCRF (github biobenkj/flash-semicrf, installed on the GPU machine; its source is
used for measuring only and is not part of Gemflow) on the shapes of semicrf_bench.cpp:
forward partition, backward of the summed partitions, Viterbi (max semiring score, and with
traceback), with peak GPU memory. Inputs: the deterministic sines of semicrf_bench --flash-inputs
    f[i] = 1.5 sin(0.37 i + 1.1), Tr[i] = 0.5 sin(0.37 i + 0.3), B[i] = 0.5 sin(0.37 i + 0.7) − 1
(i = flat row-major index), so that `semicrf_bench_semicrf_bench --flash-inputs` prints the same
log Z for sequence 0 (Flash-SemiCRF centres the scores by their mean over T and scores the first
segment with a transition from α(0, ·) = 0; duration k uses duration_bias[k − 1]).

Usage: python3 flash_semicrf_peer.py [--main] [--reps R]
"""
import argparse
import math
import sys

import torch

try:
    from flash_semicrf import SemiMarkovCRFHead
except ImportError as e:  # pragma: no cover
    sys.exit(f"flash_semicrf is not importable ({e}); pip install -e <flash-semicrf checkout>")


def sines(n, phase, scale, shift=0.0):
    i = torch.arange(n, dtype=torch.float64)
    return scale * torch.sin(0.37 * i + phase) + shift


def set_duration_bias(crf, bias):
    """LearnedDuration keeps its (K, C) tensor as a parameter; find it by shape."""
    for p in crf.duration_dist.parameters():
        if tuple(p.shape) == tuple(bias.shape):
            with torch.no_grad():
                p.copy_(bias.to(p.dtype))
            return
    raise RuntimeError("no (K, C) duration parameter found in crf.duration_dist")


def timed(fn, reps):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()  # warm-up (Triton compilation)
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        ms.append(start.elapsed_time(stop))
    ms.sort()
    return ms[len(ms) // 2]


def run(B, T, K, C, reps):
    dev = "cuda"
    crf = SemiMarkovCRFHead(num_classes=C, max_duration=K).to(dev)
    with torch.no_grad():
        crf.transition.copy_(sines(C * C, 0.3, 0.5).reshape(C, C).to(crf.transition.dtype))
    set_duration_bias(crf, sines(K * C, 0.7, 0.5, -1.0).reshape(K, C))
    scores = sines(B * T * C, 1.1, 1.5).reshape(B, T, C).to(dev, torch.float32)
    lengths = torch.full((B,), T, dtype=torch.long, device=dev)
    torch.cuda.reset_peak_memory_stats()
    z = crf(scores, lengths, backend="streaming")["partition"]
    fwd = timed(lambda: crf(scores, lengths, backend="streaming"), reps)
    x = scores.clone().requires_grad_(True)

    def fwd_bwd():
        x.grad = None
        crf(x, lengths, backend="streaming")["partition"].sum().backward()

    fb = timed(fwd_bwd, reps)
    vit = timed(lambda: crf.decode(scores, lengths, backend="streaming"), reps)
    peak = torch.cuda.max_memory_allocated() / 1e6
    print(f"{B:4d} {T:7d} {K:5d} {C:4d} | Flash-SemiCRF {fwd:10.2f} {fb:10.2f} {vit:10.2f} ms | {peak:9.1f} MB "
          f"| log Z[0] {float(z[0]):.12g}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", action="store_true", help="only B=64, T=10000, K=100, C=24")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("   B       T     K    C |               forward   fwd+bwd    Viterbi")
    run(64, 10000, 100, 24, a.reps)
    if a.main:
        return
    for T in (1000, 10000, 100000):
        for B in (1, 8, 64):
            for K in (1, 10, 100, 1000):
                try:
                    run(B, T, K, 24, a.reps)
                except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                    print(f"{B:4d} {T:7d} {K:5d} {24:4d} | Flash-SemiCRF failed: {str(e).splitlines()[0]}", flush=True)
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
