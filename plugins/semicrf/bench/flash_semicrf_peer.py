#!/usr/bin/env python3
"""Times Flash-SemiCRF (github biobenkj/flash-semicrf, installed on the GPU machine; its source is
used for measuring only and is not part of Gemflow) on the shapes of semicrf_bench.cpp:
forward partition, backward of the summed partitions, Viterbi (max semiring score, and with
traceback), with peak GPU memory. Inputs: the deterministic sines of semicrf_bench --flash-inputs
    f[i] = 1.5 sin(0.37 i + 1.1), Tr[i] = 0.5 sin(0.37 i + 0.3), B[i] = 0.5 sin(0.37 i + 0.7) − 1
(i = flat row-major index), so that `semicrf_bench_semicrf_bench --flash-inputs` prints the same
log Z for sequence 0 (Flash-SemiCRF centres the scores by their mean over T and scores the first
segment with a transition from α(0, ·) = 0; duration k uses duration_bias[k − 1]).

Each shape runs in a child process with a wall-clock limit (--timeout), and every phase prints its
line as soon as it is measured, so that a slow phase or a long Triton compilation does not hide
the phases before it. Why a run can take long: Flash-SemiCRF's kernels take T, K and C as
`tl.constexpr`, so every new shape compiles its forward, backward and Viterbi kernels anew (Triton
caches them on disk, ~/.triton, for the next process), and at B = 64, T = 10 000, K = 100, C = 24
one forward + backward takes about 15 s on an H200: the first (compiling) call and each timed
repetition of it cost that much again. With --reps 1 (the default) the headline shape needs about
40–60 s; --phases fwd,vit leaves the backward out.

Usage: python3 flash_semicrf_peer.py [--main] [--shapes B,T,K,C[;B,T,K,C...]] [--reps R]
                                     [--phases fwd,fb,vit] [--timeout S]
  --main     only B=64, T=10000, K=100, C=24 (the default without --shapes is that, then the sweep)
  --shapes   these shapes only, e.g. --shapes "8,1000,100,24;64,10000,100,24"
  --timeout  wall-clock seconds per shape, compilation included (default 80): the child is killed
             and the row says how far it got
"""
import argparse
import subprocess
import sys
import time

MAIN = (64, 10000, 100, 24)
PHASES = ("fwd", "fb", "vit")


def sweep():
    return [(B, T, K, 24) for T in (1000, 10000, 100000) for B in (1, 8, 64) for K in (1, 10, 100, 1000)]


def parse_shapes(text):
    shapes = []
    for part in text.replace(" ", "").split(";"):
        if not part:
            continue
        try:
            B, T, K, C = (int(v) for v in part.split(","))
        except ValueError:
            raise SystemExit(f"--shapes: '{part}' is not four integers B,T,K,C")
        if min(B, T, K, C) <= 0:
            raise SystemExit(f"--shapes: '{part}' has a value ≤ 0")
        shapes.append((B, T, K, C))
    if not shapes:
        raise SystemExit("--shapes: no shape given")
    return shapes


def parse_phases(text):
    phases = [p for p in text.split(",") if p]
    bad = [p for p in phases if p not in PHASES]
    if bad or not phases:
        raise SystemExit(f"--phases: {','.join(bad) or 'nothing'} is not among {','.join(PHASES)}")
    return phases


# ---- the child: one shape, in this process --------------------------------------------------------


def child(shape, reps, phases):
    import torch

    try:
        from flash_semicrf import SemiMarkovCRFHead
    except ImportError as e:  # pragma: no cover
        sys.exit(f"flash_semicrf is not importable ({e}); put its src/ on PYTHONPATH or pip install -e it")

    B, T, K, C = shape
    tag = f"{B:4d} {T:7d} {K:5d} {C:4d} |"
    t0 = time.monotonic()

    def say(msg):
        print(f"{tag} {msg}  [{time.monotonic() - t0:6.1f} s]", flush=True)

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

    def timed(name, fn):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        w0 = time.monotonic()
        fn()  # warm-up (Triton compilation)
        torch.cuda.synchronize()
        say(f"{name}: warm-up (compilation included) {1e3 * (time.monotonic() - w0):.0f} ms")
        ms = []
        for _ in range(reps):
            start.record()
            fn()
            stop.record()
            torch.cuda.synchronize()
            ms.append(start.elapsed_time(stop))
        ms.sort()
        return ms[len(ms) // 2]

    dev = "cuda"
    say(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    crf = SemiMarkovCRFHead(num_classes=C, max_duration=K).to(dev)
    with torch.no_grad():
        crf.transition.copy_(sines(C * C, 0.3, 0.5).reshape(C, C).to(crf.transition.dtype))
    set_duration_bias(crf, sines(K * C, 0.7, 0.5, -1.0).reshape(K, C))
    scores = sines(B * T * C, 1.1, 1.5).reshape(B, T, C).to(dev, torch.float32)
    lengths = torch.full((B,), T, dtype=torch.long, device=dev)
    torch.cuda.reset_peak_memory_stats()
    res = {}
    if "fwd" in phases:
        res["fwd"] = timed("forward", lambda: crf(scores, lengths, backend="streaming"))
        z = crf(scores, lengths, backend="streaming")["partition"]
        say(f"forward {res['fwd']:10.2f} ms | log Z[0] {float(z[0]):.12g}")
    if "fb" in phases:
        x = scores.clone().requires_grad_(True)

        def fwd_bwd():
            x.grad = None
            crf(x, lengths, backend="streaming")["partition"].sum().backward()

        res["fb"] = timed("fwd+bwd", fwd_bwd)
        say(f"fwd+bwd {res['fb']:10.2f} ms")
    if "vit" in phases:
        res["vit"] = timed("Viterbi", lambda: crf.decode(scores, lengths, backend="streaming"))
        say(f"Viterbi {res['vit']:10.2f} ms")
    peak = torch.cuda.max_memory_allocated() / 1e6
    cells = " ".join(f"{res[p]:10.2f}" if p in res else f"{'-':>10}" for p in PHASES)
    print(f"{tag} Flash-SemiCRF {cells} ms | {peak:9.1f} MB peak", flush=True)


# ---- the parent: one child per shape, each under its time limit ----------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--main", action="store_true", help="only B=64, T=10000, K=100, C=24")
    ap.add_argument("--shapes", help="B,T,K,C[;B,T,K,C...]: these shapes only")
    ap.add_argument("--reps", type=int, default=1, help="timed repetitions after the warm-up (median)")
    ap.add_argument("--phases", default="fwd,fb,vit", help="any of fwd,fb,vit")
    ap.add_argument("--timeout", type=float, default=80.0, help="seconds per shape (default 80)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    phases = parse_phases(a.phases)
    if a.reps < 1:
        raise SystemExit("--reps: at least 1")
    if a.child:
        child(parse_shapes(a.child)[0], a.reps, phases)
        return
    shapes = parse_shapes(a.shapes) if a.shapes else [MAIN] + ([] if a.main else sweep())
    print("   B       T     K    C |               forward    fwd+bwd    Viterbi", flush=True)
    for shape in shapes:
        spec = ",".join(str(v) for v in shape)
        cmd = [sys.executable, __file__, "--child", spec, "--reps", str(a.reps), "--phases", ",".join(phases)]
        tag = "{:4d} {:7d} {:5d} {:4d} |".format(*shape)
        try:
            rc = subprocess.run(cmd, timeout=a.timeout).returncode
            if rc != 0:
                print(f"{tag} Flash-SemiCRF failed (exit status {rc}; its error is above)", flush=True)
        except subprocess.TimeoutExpired:
            print(f"{tag} Flash-SemiCRF stopped after {a.timeout:.0f} s (--timeout); the phases measured are above",
                  flush=True)


if __name__ == "__main__":
    main()
