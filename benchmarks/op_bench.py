"""The ops of the overhead-bound workloads one at a time, against torch (issue 14).

    .venv/bin/python -m benchmarks.op_bench [--repeat 7] [--only relu,mean]

W6 (micrograd's demo MLP) and W1 (the 0-d chain) are made of a dozen kinds of op. This script
times each kind apart, on the shapes those workloads use: its forward (recording a node) and its
share of a backward pass, the second as (forward + backward) minus forward. torch and microtorch
take turns in one process, timed on this thread's CPU clock (`time.thread_time`), best of
`--repeat`. torch's `backward()` has a fixed cost of its own (about 12 us, starting its engine),
so a one-node backward is not a node's cost: compare rows with each other and over time, and
take whole-workload ratios from `overhead_bench.py` and the shared harness.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import microtorch  # noqa: E402

# each case: (what W6 or W1 computes, a function of the inputs made by `inputs`)
CASES = {
    "X@W1": lambda d: d["X"] @ d["W1"],         # W6 first layer: (100, 2) @ (2, 16)
    "H@W2": lambda d: d["H"] @ d["W2"],         # (100, 16) @ (16, 16)
    "H+b": lambda d: d["H"] + d["b"],           # the bias, broadcast over 100 rows
    "relu": lambda d: d["H"].relu(),
    "Y*h": lambda d: d["Y"] * d["h"],           # the SVM loss: (1 - Y * h).relu().mean()
    "1-h": lambda d: 1 - d["h"],
    "mean": lambda d: d["h"].mean(),
    "p*p": lambda d: d["W2"] * d["W2"],         # the L2 term: sum((p * p).sum() for p in P)
    "sum": lambda d: d["W2"].sum(),
    "0+s": lambda d: 0 + d["s"],
    "s+s": lambda d: d["s"] + d["s"],
    "1e-4*s": lambda d: 1e-4 * d["s"],
    "s*1.0001": lambda d: d["s"] * 1.0001,       # W1's chain
    "s+0.0001": lambda d: d["s"] + 0.0001,
    "tanh(s)": lambda d: d["s"].tanh(),
}


def inputs(T):
    rng = np.random.default_rng(0)

    def ten(shape, grad=True):
        return T.tensor(rng.uniform(-1, 1, shape), dtype=T.float64, requires_grad=grad)
    return {"X": ten((100, 2), False), "W1": ten((2, 16)), "b": ten((16,)), "H": ten((100, 16)),
            "W2": ten((16, 16)), "h": ten((100, 1)), "Y": ten((100, 1), False), "s": ten(())}


def best_time(fn, n, repeat):
    """Best per-call CPU time of fn over `repeat` runs of n calls, in us."""
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        for _ in range(n):
            fn()
        best = min(best, (time.thread_time() - start) / n)
    return best * 1e6


def op_times(T, case, repeat, n=300):
    d = inputs(T)
    out = case(d)
    seed = T.ones_like(out)

    def forward_backward():
        case(d).backward(seed)
    forward = best_time(lambda: case(d), n, repeat)
    return forward, best_time(forward_backward, n, repeat) - forward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated case names")
    opts = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    names = opts.only.split(",") if opts.only else list(CASES)
    print(f"| op | torch fwd | microtorch fwd | ratio | torch bwd | microtorch bwd | ratio |  (us, best of {opts.repeat})")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        tf, tb = op_times(torch, CASES[name], opts.repeat)
        mf, mb = op_times(microtorch, CASES[name], opts.repeat)
        print(f"| {name} | {tf:.2f} | {mf:.2f} | {mf / tf:.2f} | {tb:.2f} | {mb:.2f} | {mb / tb:.2f} |")


if __name__ == "__main__":
    main()
