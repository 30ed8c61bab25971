"""gradcheck of tanh(A @ x), microtorch against torch.autograd.gradcheck, slow and fast mode.

    .venv/bin/python -m benchmarks.gradcheck_bench [--sizes 50 200] [--repeat 3] [--threads 1]

For x of each size n (float64, A a fixed random n x n matrix), times gradcheck(f, (x,)) and
gradcheck(f, (x,), fast_mode=True) in both libraries (default options otherwise: the Jacobian
check, reentrancy, grad_output and undefined-grad checks). Slow mode costs 2n forward
evaluations and 2n backward passes (every row twice, for the reentrancy check); fast mode a
constant number of each. Prints the best-of-N CPU time of this process (so that other work on
the machine does not skew it) and wall time, the ratios microtorch / torch (target: <= 1) and
slow / fast in microtorch (target: >= 10 at n = 200). torch is the oracle, not a dependency.
"""
import argparse
import os
import time
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported

import numpy as np  # noqa: E402


def problem(lib, n, seed=0):
    rng = np.random.default_rng(seed)
    A = lib.tensor(rng.standard_normal((n, n)) / np.sqrt(n))
    x = lib.tensor(rng.standard_normal(n)).requires_grad_()
    return (lambda x: lib.tanh(A @ x)), x


def best_time(fn, repeat):
    """Best-of-repeat (cpu, wall) seconds of fn(); fn must return True."""
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        ok = fn()
        c1, w1 = time.process_time(), time.perf_counter()
        assert ok is True, "gradcheck failed on a correct function"
        best_cpu, best_wall = min(best_cpu, c1 - c0), min(best_wall, w1 - w0)
    return best_cpu, best_wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = ap.parse_args(argv)

    import microtorch as mt
    from microtorch.autograd import gradcheck as mt_gradcheck
    import torch
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")

    # warm up both (imports, lazy initialisation) on a small problem
    for lib, gc in ((mt, mt_gradcheck), (torch, torch.autograd.gradcheck)):
        f, x = problem(lib, 5)
        gc(f, (x,))
        gc(f, (x,), fast_mode=True)

    rows = []
    for n in args.sizes:
        res = {}
        for name, lib, gc in (("microtorch", mt, mt_gradcheck), ("torch", torch, torch.autograd.gradcheck)):
            f, x = problem(lib, n)
            for fast in (False, True):
                # torch's slow mode takes seconds at n = 200: time it once
                repeat = 1 if (name == "torch" and not fast and n >= 100) else args.repeat
                res[name, fast] = best_time(lambda: gc(f, (x,), fast_mode=fast), repeat)
        rows.append((n, res))

    print(f"gradcheck of tanh(A @ x), float64; best CPU seconds (wall in brackets); torch threads={args.threads}")
    print(f"{'n':>5} {'mode':>5} {'microtorch':>20} {'torch':>20} {'mt / torch':>11}")
    for n, res in rows:
        for fast in (False, True):
            (mc, mw), (tc, tw) = res["microtorch", fast], res["torch", fast]
            print(f"{n:>5} {'fast' if fast else 'slow':>5} {mc:>9.4f} ({mw:>8.4f}) {tc:>9.4f} ({tw:>8.4f}) "
                  f"{mc / tc:>10.3f}x")
        slow, fast = res["microtorch", False][0], res["microtorch", True][0]
        tslow, tfast = res["torch", False][0], res["torch", True][0]
        print(f"{n:>5} slow / fast: microtorch {slow / fast:.1f}x, torch {tslow / tfast:.1f}x")


if __name__ == "__main__":
    main()
