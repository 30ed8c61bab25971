"""Per-op overhead against torch, timed on this thread's CPU clock (issue 14).

    .venv/bin/python -m benchmarks.overhead_bench [--repeat 15]

The shared harness (`../shared/bench/`) times wall clock in a fresh process per cell, which a
busy machine inflates unevenly. This script runs the harness's overhead-bound workloads with
torch and microtorch taking turns in one process, times each with `time.thread_time()` (the
CPU time of this thread: other processes do not count) and keeps the best of `--repeat`:

- W1: 1000 chained ops on a 0-d float64 tensor (`*1.0001`, `+0.0001`, `tanh` every 10th),
  forward (recording) and backward timed apart, per op;
- W4: the same chain with 20,000 ops on a 100-element vector, per op;
- W6: micrograd's demo MLP 2-16-16-1 on 100 points, SVM loss + L2, one forward + backward (the
  best of ten steps in a row per turn);
- W6 on `bare_engine.py` (`--floor`): the same step on an engine that does nothing but the arithmetic
  and the chain rule, the floor under any Python engine on numpy;
- W3 (`--w3`): four 1024x1024 layers `h = relu(h @ W)`, then the gradients of `h.sum()` for the
  weights, against the same computation written by hand in numpy (the issue's floor for W3).

The garbage collector stays on, as in the harness (a long graph costs collections too).
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import microtorch  # noqa: E402

from . import bare_engine  # noqa: E402

clock = time.thread_time


def chain(x, n):
    for i in range(n):
        x = x.tanh() if i % 10 == 9 else x * 1.0001 if i % 2 == 0 else x + 0.0001
    return x


def chain_times(T, shape, n):
    """(forward, backward) seconds per op of one chain."""
    x = T.tensor(np.full(shape, 0.5), dtype=T.float64, requires_grad=True)
    t0 = clock()
    y = chain(x, n)
    t1 = clock()
    y.sum().backward()
    return (t1 - t0) / n, (clock() - t1) / n


def mlp_step(T):
    """micrograd's demo step (the harness's W6), as a function of no arguments."""
    r = np.random.default_rng(0)
    x = r.standard_normal((100, 2))
    ps = [r.uniform(-1, 1, (2, 16)), np.zeros(16), r.uniform(-1, 1, (16, 16)), np.zeros(16),
          r.uniform(-1, 1, (16, 1)), np.zeros(1)]
    X = T.tensor(x, dtype=T.float64)
    Y = T.tensor(np.where(x[:, 0] * x[:, 1] > 0, 1.0, -1.0)[:, None], dtype=T.float64)
    P = [T.tensor(p, dtype=T.float64, requires_grad=True) for p in ps]

    def step():
        for p in P:
            p.grad = None
        h = X
        for i in (0, 2, 4):
            h = h @ P[i] + P[i + 1]
            h = h.relu() if i < 4 else h
        loss = (1 - Y * h).relu().mean() + 1e-4 * sum((p * p).sum() for p in P)
        loss.backward()
    return step


def relu_chain(L, X, Ws):
    """W3 in microtorch (L is the library) or, with L None, by hand in numpy: the weights' gradients."""
    if L is None:
        hs = [X]
        for w in Ws:
            hs.append(np.maximum(hs[-1] @ w, 0))
        g, grads = (hs.pop() > 0).astype(X.dtype), []
        for i in reversed(range(len(Ws))):
            grads.append(hs[i].T @ g)
            g = (g @ Ws[i].T) * (hs[i] > 0) if i else None
        return grads[::-1]
    for w in Ws:
        w.grad = None
    h = X
    for w in Ws:
        h = (h @ w).relu()
    h.sum().backward()
    return [w.grad for w in Ws]


def best_step(step, n=10):
    """The fastest of n consecutive steps. (Taking turns step by step made torch's W6 step 1.5 times
    slower than alone: each library's first step runs on caches the other one filled.)"""
    best = float("inf")
    for _ in range(n):
        t0 = clock()
        step()
        best = min(best, clock() - t0)
    return (best,)


def best_of(libs, repeat, fn):
    """{name: best (min) of repeat results of fn(name, lib)}, the libraries taking turns."""
    best = {}
    for _ in range(repeat):
        for name, lib in libs.items():
            gc.collect()
            r = fn(name, lib)
            best[name] = r if name not in best else tuple(map(min, best[name], r))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--w3", action="store_true", help="also W3 against hand-written numpy (about 10 s)")
    ap.add_argument("--floor", action="store_true", help="also W6 on bare_engine.py: the least a Python engine does")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    libs = {"torch": torch, "microtorch": microtorch}
    gc.freeze()
    rows = []
    for name, shape, n, rep in (("W1", (), 1000, args.repeat), ("W4", (100,), 20000, max(3, args.repeat // 5))):
        b = best_of(libs, rep, lambda _, T: chain_times(T, shape, n))
        for k, part in ((0, "forward"), (1, "backward")):
            rows.append((f"{name} {part}", "us/op", b["torch"][k] * 1e6, b["microtorch"][k] * 1e6))
    if args.floor:
        libs["bare engine"] = bare_engine
    steps = {name: mlp_step(T) for name, T in libs.items()}
    b = best_of(libs, args.repeat, lambda name, _: best_step(steps[name]))
    rows.append(("W6 step", "ms", b["torch"][0] * 1e3, b["microtorch"][0] * 1e3))
    if args.floor:
        rows.append(("W6 step, bare engine", "ms", b["torch"][0] * 1e3, b["bare engine"][0] * 1e3))
    print("| workload | unit | torch | microtorch | microtorch / torch |\n|---|---|---|---|---|")
    for what, unit, t, m in rows:
        print(f"| {what} | {unit} | {t:.3g} | {m:.3g} | {m / t:.2f} |")
    if args.w3:
        w3()


def w3():
    r = np.random.default_rng(0)
    X = r.standard_normal((1024, 1024))
    Ws = [r.standard_normal((1024, 1024)) * np.sqrt(2 / 1024) for _ in range(4)]
    Xt, Wt = microtorch.tensor(X), [microtorch.tensor(w, requires_grad=True) for w in Ws]
    runs = {"numpy": lambda: relu_chain(None, X, Ws), "microtorch": lambda: relu_chain(microtorch, Xt, Wt)}
    b = best_of(runs, 5, lambda _, run: best_step(run, 1))
    print(f"\nW3: hand numpy {b['numpy'][0] * 1e3:.0f} ms, microtorch {b['microtorch'][0] * 1e3:.0f} ms, "
          f"{b['microtorch'][0] / b['numpy'][0]:.3f}x")


if __name__ == "__main__":
    main()
