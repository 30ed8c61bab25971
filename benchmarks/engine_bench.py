"""The engine against torch and plain numpy, side by side in one run (issue 2).

    .venv/bin/python -m benchmarks.engine_bench [--repeat 7] [--quick] [--threads N]

1. per-op overhead: forward + backward of one op on tiny tensors (add, mul, tanh, sum, matmul),
   microtorch vs torch vs the same forward and hand-written backward in numpy;
2. one training step of a 784-128-10 MLP on a batch of 64 (linear, relu, cross_entropy, backward,
   manual SGD under no_grad), microtorch vs torch vs hand-written numpy;
3. a 4-layer 1024x1024 matmul chain, forward + backward, microtorch vs the same computation
   written by hand in numpy (the target: within 1.1x) and torch;
4. a 20,000-op chain: memory held by the graph before backward and after it (tracemalloc for
   microtorch, RSS for torch), and its forward / backward time.

Times are CPU time of this process (time.process_time, all its threads), the best of
`--repeat` runs: on a shared machine wall time measures the neighbours. torch is the oracle
only; it is imported here, never by microtorch. torch runs with `--threads` threads (default 1)
and numpy's BLAS (used by microtorch and the numpy baseline alike) with OPENBLAS_NUM_THREADS
(default 1 here), so that the three are compared on one core each.
"""
import os

# one core each: numpy's BLAS (which microtorch uses too) and torch (--threads); set before numpy loads
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import microtorch as mt  # noqa: E402
from microtorch.ops import nn as mt_F  # noqa: E402


clock = time.process_time  # CPU time of this process: steadier than wall time on a busy machine


def race(fns, repeat, inner=1):
    """{label: fn} -> {label: best-of-`repeat` seconds per call of `inner` calls}. The contenders
    take turns within each repeat, so that a busy spell on the machine hits all of them."""
    for fn in fns.values():
        fn()
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = clock()
            for _ in range(inner):
                fn()
            best[k] = min(best[k], (clock() - t0) / inner)
    return best


def rss():
    """Resident memory, after asking glibc to hand freed heap pages back to the OS (without
    malloc_trim, freed small blocks stay resident and RSS never goes down)."""
    try:
        import ctypes
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---- 1. per-op overhead -----------------------------------------------------------------------
def per_op(torch, repeat, inner):
    rng = np.random.default_rng(0)
    a_np, b_np, m_np = (rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32),
                        rng.standard_normal((4, 4)).astype(np.float32))
    g_np = np.ones(4, np.float32)
    cases = {
        "add": (lambda L, a, b, m: a + b, lambda: (a_np + b_np, g_np.copy(), g_np.copy())),
        "mul": (lambda L, a, b, m: a * b, lambda: (a_np * b_np, g_np * b_np, g_np * a_np)),
        "tanh": (lambda L, a, b, m: a.tanh(), lambda: (lambda t: (t, g_np * (1 - t * t)))(np.tanh(a_np))),
        "sum": (lambda L, a, b, m: a.sum(), lambda: (a_np.sum(), np.broadcast_to(np.float32(1), a_np.shape).copy())),
        "matmul": (lambda L, a, b, m: m @ a, lambda: (m_np @ a_np, np.outer(g_np, a_np), m_np.T @ g_np)),
    }
    def make_step(L, f, name):
        a = L.tensor(a_np, requires_grad=True)
        b = L.tensor(b_np, requires_grad=True)
        m = L.tensor(m_np, requires_grad=True)
        g = L.ones(()) if name == "sum" else L.ones(4)
        return lambda: f(L, a, b, m).backward(g)

    rows = []
    for name, (f, by_hand) in cases.items():
        rows.append((name, race({"microtorch": make_step(mt, f, name), "torch": make_step(torch, f, name),
                                 "numpy": by_hand}, repeat, inner)))
    return rows


# ---- 2. MLP training step ---------------------------------------------------------------------
def mlp(torch, repeat, inner):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((64, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, 64)
    w1_np = (rng.standard_normal((128, 784)) / 28).astype(np.float32)
    b1_np = np.zeros(128, np.float32)
    w2_np = (rng.standard_normal((10, 128)) / 11).astype(np.float32)
    b2_np = np.zeros(10, np.float32)
    lr = 0.01
    steps, losses = {}, {}
    for label, L, F in (("microtorch", mt, mt_F), ("torch", torch, torch.nn.functional)):
        x, y = L.tensor(x_np), L.tensor(y_np)
        params = [L.tensor(p, requires_grad=True) for p in (w1_np, b1_np, w2_np, b2_np)]

        def step(L=L, F=F, x=x, y=y, params=params):
            w1, b1, w2, b2 = params
            loss = F.cross_entropy(F.linear(F.linear(x, w1, b1).relu(), w2, b2), y)
            loss.backward()
            with L.no_grad():
                for p in params:
                    p -= lr * p.grad
                    p.grad = None
            return loss.detach()
        losses[label] = [float(step()) for _ in range(3)]
        steps[label] = step
    p = [w1_np.copy(), b1_np.copy(), w2_np.copy(), b2_np.copy()]

    def numpy_step():
        w1, b1, w2, b2 = p
        h_pre = x_np @ w1.T + b1
        h = np.maximum(h_pre, 0)
        z = h @ w2.T + b2
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        sm = e / e.sum(1, keepdims=True)
        loss = -np.log(sm[np.arange(64), y_np]).mean()
        dz = sm
        dz[np.arange(64), y_np] -= 1
        dz /= 64
        gw2, gb2 = dz.T @ h, dz.sum(0)
        dh = (dz @ w2) * (h_pre > 0)
        gw1, gb1 = dh.T @ x_np, dh.sum(0)
        for q, gq in zip(p, (gw1, gb1, gw2, gb2)):
            q -= lr * gq
        return loss
    losses["numpy"] = [float(numpy_step()) for _ in range(3)]
    steps["numpy"] = numpy_step
    res = race(steps, repeat, inner)
    np.testing.assert_allclose(losses["microtorch"], losses["torch"], rtol=1e-4)
    np.testing.assert_allclose(losses["microtorch"], losses["numpy"], rtol=1e-4)
    return res


# ---- 3. matmul chain ----------------------------------------------------------------------------
def matmul_chain(torch, repeat, n=1024):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n)
    ws_np = [rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n) for _ in range(4)]
    steps, grads = {}, {}
    for label, L in (("microtorch", mt), ("torch", torch)):
        x = L.tensor(x_np)
        ws = [L.tensor(w, requires_grad=True) for w in ws_np]

        def step(x=x, ws=ws):
            h = x
            for w in ws:
                h = h @ w
            h.sum().backward()
            out = [w.grad for w in ws]
            for w in ws:
                w.grad = None
            return out
        grads[label] = [g.numpy() for g in step()]
        steps[label] = step

    def numpy_step():
        hs = [x_np]
        for w in ws_np:
            hs.append(hs[-1] @ w)
        g = np.ones((n, n), np.float32)
        out = [None] * 4
        for k in range(3, -1, -1):
            out[k] = hs[k].T @ g
            if k:
                g = g @ ws_np[k].T
        return out
    grads["numpy"] = numpy_step()
    steps["numpy"] = numpy_step
    res = race(steps, repeat)
    for a, b in zip(grads["microtorch"], grads["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)
    return res


# ---- 4. a long chain: memory and time -------------------------------------------------------------
def _chain_in_this_process(lib_name, n_ops, size):
    """Build the chain, backward, drop it; report times and memory (RSS for both libraries,
    plus tracemalloc for microtorch, in a second pass since tracing slows Python down)."""
    import json
    if lib_name == "torch":
        import torch as L
        L.set_num_threads(1)
    else:
        L = mt
    x_np = np.random.default_rng(0).standard_normal(size).astype(np.float32)

    def run(trace):
        x = L.tensor(x_np, requires_grad=True)
        gc.collect()
        mem = (lambda: tracemalloc.get_traced_memory()[0]) if trace else rss
        if trace:
            tracemalloc.start()
        base = mem()
        t0 = clock()
        y = x
        for _ in range(n_ops):
            y = y.tanh()
        loss = y.sum()
        t1 = clock()
        held = mem() - base
        loss.backward()
        t2 = clock()
        gc.collect()
        after = mem() - base
        del y, loss
        gc.collect()
        dropped = mem() - base
        if trace:
            tracemalloc.stop()
        return dict(forward=t1 - t0, backward=t2 - t1, held=held, after=after, dropped=dropped)
    out = {"rss": run(False)}
    if lib_name == "microtorch":
        out["tracemalloc"] = run(True)
    print(json.dumps(out))


def long_chain(n_ops=20_000, size=1000):
    """Each library in a fresh process, so that one's freed memory does not hide the other's."""
    import json
    import subprocess
    import sys
    out = {}
    for lib_name in ("microtorch", "torch"):
        proc = subprocess.run([sys.executable, "-m", "benchmarks.engine_bench", "--chain-child", lib_name,
                               str(n_ops), str(size)], capture_output=True, text=True, check=True)
        out[lib_name] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["saved_bytes"] = n_ops * size * 4
    return out


def fmt_t(s):
    return f"{s * 1e6:8.1f} us" if s < 1e-3 else f"{s * 1e3:8.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--quick", action="store_true", help="fewer repeats and a 512 matmul chain")
    ap.add_argument("--chain-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.chain_child:
        lib_name, n_ops, size = args.chain_child
        return _chain_in_this_process(lib_name, int(n_ops), int(size))
    import torch
    torch.set_num_threads(args.threads)
    repeat = 3 if args.quick else args.repeat
    inner = 200 if args.quick else 1000

    print("1. per-op overhead, forward + backward on tiny float32 tensors (best of", repeat, "x", inner, ")")
    print(f"   {'op':8s} {'microtorch':>11s} {'torch':>11s} {'numpy':>11s}  {'mt/torch':>8s}")
    ratios = []
    for name, r in per_op(torch, repeat, inner):
        ratios.append(r["microtorch"] / r["torch"])
        print(f"   {name:8s} {fmt_t(r['microtorch'])} {fmt_t(r['torch'])} {fmt_t(r['numpy'])}  {ratios[-1]:7.2f}x")
    print(f"   geometric mean microtorch/torch: {np.exp(np.mean(np.log(ratios))):.2f}x (target <= 2x)")

    r = mlp(torch, repeat, 20 if args.quick else 50)
    print("\n2. MLP 784-128-10, batch 64, one SGD training step")
    print(f"   microtorch {fmt_t(r['microtorch'])}   torch {fmt_t(r['torch'])}   numpy by hand {fmt_t(r['numpy'])}")
    print(f"   microtorch/torch {r['microtorch'] / r['torch']:.2f}x   "
          f"microtorch/numpy {r['microtorch'] / r['numpy']:.2f}x")

    n = 512 if args.quick else 1024
    r = matmul_chain(torch, repeat, n)
    print(f"\n3. 4-layer {n}x{n} matmul chain, forward + backward")
    print(f"   microtorch {fmt_t(r['microtorch'])}   numpy by hand {fmt_t(r['numpy'])}   torch {fmt_t(r['torch'])}")
    print(f"   microtorch/numpy {r['microtorch'] / r['numpy']:.3f}x (target <= 1.1x)   "
          f"microtorch/torch {r['microtorch'] / r['torch']:.2f}x")

    r = long_chain()
    m, mtr, t = r["microtorch"]["rss"], r["microtorch"]["tracemalloc"], r["torch"]["rss"]
    mb = 1e6
    print(f"\n4. 20,000-op chain of tanh on 1000 float32 (the saved outputs alone: {r['saved_bytes'] / mb:.0f} MB)")
    print(f"   {'':11s} {'forward':>8s} {'backward':>9s}   memory: {'held':>8s} {'after bwd':>10s} {'dropped':>8s}")
    for label, d in (("microtorch", m), ("torch", t)):
        print(f"   {label:11s} {d['forward']:7.2f}s {d['backward']:8.2f}s   RSS:    {d['held'] / mb:6.1f}MB "
              f"{d['after'] / mb:8.1f}MB {d['dropped'] / mb:6.1f}MB")
    print(f"   microtorch (tracemalloc)              traced: {mtr['held'] / mb:6.1f}MB {mtr['after'] / mb:8.1f}MB "
          f"{mtr['dropped'] / mb:6.1f}MB")
    print(f"   microtorch/torch: forward {m['forward'] / t['forward']:.1f}x, "
          f"backward {m['backward'] / t['backward']:.1f}x")


if __name__ == "__main__":
    main()
