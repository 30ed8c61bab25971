"""W2 of the shared harness against the same step written by hand in numpy, phase by phase (issue 14).

    .venv/bin/python -m benchmarks.mlp_bench [--repeat 300]

The harness's W2 (`../shared/bench/bench.py`): `Sequential(Linear(784, 128), ReLU, Linear(128, 10))`
in float64, batch 64, one SGD step (zero_grad, forward, cross_entropy, backward, step), against its
hand-written numpy (`numpy_workloads().w2`), which is the floor for a numpy engine. Both run in this
process, taking turns, timed with `time.thread_time()` (this thread's CPU time: other processes do
not count); each phase keeps its best of `--repeat`, so the table says where microtorch spends the
time that hand numpy does not.

    .venv/bin/python -m benchmarks.mlp_bench --apart 2   # each library in processes of its own

Page faults depend on that: the harness runs each library in a process of its own, where malloc can
give freed large blocks back to the system and a step's fresh temporaries are faulted in again
(0.85 us per 4 KiB page here), which two libraries sharing a process hide from each other. The last
line counts them per step; `--apart` times each library in processes of its own (taking turns,
the best of all), as the harness does.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import microtorch as T  # noqa: E402

clock = time.thread_time


def data():
    """The harness's W2 data: x, labels, [W1, b1, W2, b2] in nn.Linear's layout (out, in)."""
    r = np.random.default_rng(0)
    u = lambda fan, *s: r.uniform(-1, 1, s) / math.sqrt(fan)  # noqa: E731
    return (r.standard_normal((64, 784)), r.integers(0, 10, 64),
            [u(784, 128, 784), u(784, 128), u(128, 10, 128), u(128, 10)])


def microtorch_phases():
    """One step of microtorch as named phases: a list of (name, function of the previous result)."""
    x, y, ps = data()
    model = T.nn.Sequential(T.nn.Linear(784, 128, dtype=T.float64), T.nn.ReLU(),
                            T.nn.Linear(128, 10, dtype=T.float64))
    with T.no_grad():
        for p, a in zip(model.parameters(), ps):
            p.copy_(T.tensor(a))
    opt = T.optim.SGD(model.parameters(), lr=0.01)
    X, Y = T.tensor(x), T.tensor(y)
    return [("zero_grad", lambda _: opt.zero_grad()),
            ("linear 1", lambda _: model[0](X)),
            ("relu", lambda h: model[1](h)),
            ("linear 2", lambda h: model[2](h)),
            ("cross_entropy", lambda z: T.nn.functional.cross_entropy(z, Y)),
            ("backward", lambda loss: (loss.backward(), loss)[1]),
            ("SGD step", lambda loss: (opt.step(), loss.item())[1])]


def numpy_phases():
    """The harness's hand-written step, cut into the same phases (its state kept in a dict)."""
    x, y, (w1, b1, w2, b2) = data()
    ps, rows, s = [w1.T.copy(), b1, w2.T.copy(), b2], np.arange(len(y)), {}

    def cross_entropy(z):
        z = z - z.max(1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        g = np.exp(logp)
        g[rows, y] -= 1
        s["g"] = g / len(y)
        return -logp[rows, y].mean()

    def backward(loss):
        g, h = s["g"], s["h"]
        s["grads"] = [None, None, h.T @ g, g.sum(0)]
        g = (g @ ps[2].T) * (h > 0)
        s["grads"][:2] = x.T @ g, g.sum(0)
        return loss

    def step(loss):
        for p, g in zip(ps, s.pop("grads")):
            p -= 0.01 * g
        return float(loss)
    def relu(z):
        s["h"] = np.maximum(z, 0)
        return s["h"]
    return [("zero_grad", lambda _: None),
            ("linear 1", lambda _: x @ ps[0] + ps[1]),
            ("relu", relu),
            ("linear 2", lambda h: h @ ps[2] + ps[3]),
            ("cross_entropy", cross_entropy),
            ("backward", backward),
            ("SGD step", step)]


def run(phases):
    """Seconds per phase of one step, and the step's loss."""
    times, out = [], None
    for _, fn in phases:
        t0 = clock()
        out = fn(out)
        times.append(clock() - t0)
    return times, out


def measure(libs, repeat):
    """{name: (best seconds of each phase, best whole step, page faults per step)}, the libraries taking turns."""
    gc.freeze()
    best = {name: [math.inf] * len(phases) for name, phases in libs.items()}
    total = dict.fromkeys(libs, math.inf)
    for _ in range(repeat):
        for name, phases in libs.items():
            gc.collect()
            times = run(phases)[0]
            best[name] = list(map(min, best[name], times))
            total[name] = min(total[name], sum(times))
    return {name: (best[name], total[name], _faults_per_step(phases)) for name, phases in libs.items()}


def _faults_per_step(phases, steps=50):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        run(phases)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / steps


def apart(rounds, repeat):
    """measure() with each library in processes of its own, as the harness runs them (malloc, and so the
    page faults, then behave as there), `rounds` processes each, taking turns; the best of them all."""
    results = {}
    for _ in range(rounds):
        for name in ("numpy", "microtorch"):
            out = subprocess.run([sys.executable, "-m", "benchmarks.mlp_bench", "--only", name, "--repeat",
                                  str(repeat)], check=True, capture_output=True, text=True).stdout
            phases, total, faults = json.loads(out)[name]
            if name in results:
                old = results[name]
                phases, total, faults = list(map(min, old[0], phases)), min(old[1], total), min(old[2], faults)
            results[name] = (phases, total, faults)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--apart", type=int, default=0, metavar="ROUNDS",
                    help="time each library in processes of its own, as the harness does (ROUNDS each)")
    ap.add_argument("--only", choices=("numpy", "microtorch"), help=argparse.SUPPRESS)  # (a process of --apart)
    args = ap.parse_args()
    if args.only:
        phases = numpy_phases() if args.only == "numpy" else microtorch_phases()
        print(json.dumps(measure({args.only: phases}, args.repeat)))
        return
    if args.apart:
        results, where = apart(args.apart, args.repeat), "a process of its own"
    else:
        libs = {"numpy": numpy_phases(), "microtorch": microtorch_phases()}
        losses = {name: run(phases)[1] for name, phases in libs.items()}
        assert abs(losses["numpy"] - losses["microtorch"]) < 1e-12, losses  # the same step
        results, where = measure(libs, args.repeat), "this process"
    print("| phase | hand numpy (us) | microtorch (us) | microtorch - numpy (us) |\n|---|---|---|---|")
    for k, (phase, _) in enumerate(numpy_phases()):
        n, m = results["numpy"][0][k] * 1e6, results["microtorch"][0][k] * 1e6
        print(f"| {phase} | {n:.0f} | {m:.0f} | {m - n:+.0f} |")
    n, m = results["numpy"][1] * 1e3, results["microtorch"][1] * 1e3
    print(f"| whole step (best) | {n:.3f} ms | {m:.3f} ms | {m / n:.2f}x |")
    print(f"| minor page faults per step ({where}) | {results['numpy'][2]:.0f} | {results['microtorch'][2]:.0f} | |")


if __name__ == "__main__":
    main()
