"""Time per training step of two small MLPs, microtorch against torch.

    .venv/bin/python -m benchmarks.train_bench [--steps 200] [--repeat 5] [--threads 1]

- moons: nn.Sequential(Linear(2, 16), ReLU, Linear(16, 16), ReLU, Linear(16, 1)) on 100 points of
  the two-moons data (made with numpy), BCEWithLogitsLoss, Adam(lr=0.01): the classroom demo.
- mnist-sized: nn.Sequential(Linear(784, 128), ReLU, Linear(128, 10)) on a random batch of 64
  "images", CrossEntropyLoss, SGD(lr=0.01, momentum=0.9).

A step is zero_grad, forward, loss, backward, optimizer step, in float32. Both libraries start
from the same weights; after the timed steps the losses are compared, so the benchmark also
checks that both trained the same way. Both run single-threaded by default: torch (the oracle,
not a runtime dependency) with --threads threads, numpy's BLAS with OPENBLAS_NUM_THREADS (set
to 1 here unless already set; a multi-threaded BLAS on a busy machine is much slower, not faster).
Prints the best-of-N CPU time per step of each (this process's CPU time, so that other work on
the machine does not skew it), the ratio microtorch / torch (target: <= 2) and the wall-time ratio.
"""
import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported

import numpy as np  # noqa: E402


def two_moons(n=100, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    a = np.linspace(0, np.pi, n // 2)
    b = np.linspace(0, np.pi, n - n // 2)
    x = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1), np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)])
    y = np.concatenate([np.zeros(n // 2), np.ones(n - n // 2)])
    return (x + rng.normal(scale=noise, size=x.shape)).astype(np.float32), y[:, None].astype(np.float32)


def _weights(sizes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        out += [rng.uniform(-bound, bound, (fan_out, fan_in)), rng.uniform(-bound, bound, fan_out)]
    return [w.astype(np.float32) for w in out]


def setup(lib, task):
    nn = lib.nn
    if task == "moons":
        sizes = (2, 16, 16, 1)
        x, y = two_moons()
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
        loss_fn, X, Y = nn.BCEWithLogitsLoss(), lib.tensor(x), lib.tensor(y)
        make_opt = lambda params: lib.optim.Adam(params, lr=0.01)  # noqa: E731
    else:
        sizes = (784, 128, 10)
        rng = np.random.default_rng(1)
        x = rng.normal(size=(64, 784)).astype(np.float32)
        y = rng.integers(0, 10, 64)
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        loss_fn, X, Y = nn.CrossEntropyLoss(), lib.tensor(x), lib.tensor(y)
        make_opt = lambda params: lib.optim.SGD(params, lr=0.01, momentum=0.9)  # noqa: E731
    with lib.no_grad():
        for p, w in zip(model.parameters(), _weights(sizes, seed=2)):
            p.copy_(lib.tensor(w))
    opt = make_opt(model.parameters())

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        return loss

    return step


def time_per_step(step, steps, repeat):
    """Best-of-repeat (wall, CPU) seconds per step. The CPU time of this process is what the
    ratio uses: it is what the step costs, even on a machine busy with other work."""
    for _ in range(10):  # warm up
        step()
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            loss = step()
        wall = min(wall, (time.perf_counter() - w0) / steps)
        cpu = min(cpu, (time.process_time() - c0) / steps)
    return wall, cpu, float(loss.item())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    import torch

    import microtorch
    torch.set_num_threads(args.threads)
    print(f"time per training step (best of {args.repeat} x {args.steps} steps, float32, torch threads="
          f"{args.threads}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')})")
    print(f"{'task':<28}{'microtorch':>12}{'torch':>12}{'ratio':>8}{'wall ratio':>12}   final losses (must agree)")
    ratios = {}
    for task, label in (("moons", "moons 2-16-16-1, Adam"), ("mnist", "784-128-10 batch 64, SGD")):
        w_mt, c_mt, loss_mt = time_per_step(setup(microtorch, task), args.steps, args.repeat)
        w_torch, c_torch, loss_torch = time_per_step(setup(torch, task), args.steps, args.repeat)
        ratios[task] = c_mt / c_torch
        print(f"{label:<28}{c_mt * 1e6:>10.0f}us{c_torch * 1e6:>10.0f}us{ratios[task]:>7.2f}x"
              f"{w_mt / w_torch:>11.2f}x   {loss_mt:.6f} vs {loss_torch:.6f}")
        if not np.isclose(loss_mt, loss_torch, rtol=1e-3, atol=1e-5):
            raise SystemExit(f"{task}: microtorch and torch trained differently ({loss_mt} vs {loss_torch})")
    return ratios


if __name__ == "__main__":
    main()
