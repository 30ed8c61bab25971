"""Per-sample gradients of a small MLP: vmap(grad(loss)) against a Python loop and torch.func.

    .venv/bin/python -m benchmarks.func_bench [--batch 64] [--repeat 5]

The model is nn.Sequential(Linear(32, 64), Tanh, Linear(64, 10)) with a cross-entropy loss,
called through functional_call so that grad differentiates w.r.t. a dict of parameters. Three
ways to get the 64 per-example gradients:

- loop:        [grad(loss)(params, x[i], y[i]) for i in range(64)] in microtorch
- vmap:        vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y) in microtorch
- torch.func:  the same line with torch (the oracle; not a runtime dependency)

torch runs with one thread. Prints the best-of-N CPU time of each and the ratios; checks that all three agree.
"""
import argparse
import time

import numpy as np


def _best(fn, repeat):
    """Best-of-N (CPU time, wall time) of fn(): CPU time is what the ratios use, so that other
    work on the machine does not skew them."""
    fn()  # warm up
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def build(lib, state, in_features=32, hidden=64, classes=10):
    model = lib.nn.Sequential(lib.nn.Linear(in_features, hidden), lib.nn.Tanh(), lib.nn.Linear(hidden, classes))
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(state[name]))
    return model


def per_sample_setup(lib, batch, seed=0):
    rng = np.random.default_rng(seed)
    in_features, hidden, classes = 32, 64, 10
    state = {"0.weight": rng.standard_normal((hidden, in_features)) / np.sqrt(in_features),
             "0.bias": rng.standard_normal(hidden) * 0.1,
             "2.weight": rng.standard_normal((classes, hidden)) / np.sqrt(hidden),
             "2.bias": rng.standard_normal(classes) * 0.1}
    state = {k: v.astype(np.float32) for k, v in state.items()}
    x = rng.standard_normal((batch, in_features)).astype(np.float32)
    y = rng.integers(0, classes, batch)
    model = build(lib, state)
    params = {k: v.detach() for k, v in model.named_parameters()}
    func = lib.func

    def loss(params, xi, yi):
        out = func.functional_call(model, params, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    return func, loss, params, lib.tensor(x), lib.tensor(y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import microtorch as mt
    func, loss, params, x, y = per_sample_setup(mt, args.batch)
    g = func.grad(loss)

    def loop():
        return [g(params, x[i], y[i]) for i in range(args.batch)]

    per_sample = func.vmap(g, in_dims=(None, 0, 0))

    def vmapped():
        return per_sample(params, x, y)

    t_loop = _best(loop, args.repeat)
    t_vmap = _best(vmapped, args.repeat)

    results = {}
    try:
        import torch
        torch.set_num_threads(1)  # numpy runs these small ops on one thread too (and threads only slow torch here)
        tfunc, tloss, tparams, tx, ty = per_sample_setup(torch, args.batch)
        tper_sample = tfunc.vmap(tfunc.grad(tloss), in_dims=(None, 0, 0))
        t_torch = _best(lambda: tper_sample(tparams, tx, ty), args.repeat)
        results["torch"] = tper_sample(tparams, tx, ty)
    except ImportError:
        t_torch = None

    # the three agree
    looped, batched = loop(), vmapped()
    for name in params:
        stacked = np.stack([r[name].detach().numpy() for r in looped])
        assert np.allclose(stacked, batched[name].detach().numpy(), atol=1e-5), name
        if "torch" in results:
            assert np.allclose(batched[name].detach().numpy(), results["torch"][name].detach().numpy(),
                               atol=1e-4), name

    print(f"per-sample gradients, MLP 32-64-10, cross-entropy, batch {args.batch} (best of {args.repeat}; "
          "CPU time, wall time in brackets)")
    print(f"  microtorch loop of grad   {t_loop[0] * 1e3:8.2f} ms  ({t_loop[1] * 1e3:8.2f} ms)")
    print(f"  microtorch vmap(grad)     {t_vmap[0] * 1e3:8.2f} ms  ({t_vmap[1] * 1e3:8.2f} ms)   "
          f"{t_loop[0] / t_vmap[0]:.1f}x faster than the loop")
    if t_torch is not None:
        print(f"  torch.func vmap(grad)     {t_torch[0] * 1e3:8.2f} ms  ({t_torch[1] * 1e3:8.2f} ms)   "
              f"microtorch's vmap takes {t_vmap[0] / t_torch[0]:.2f}x torch's time")
    return {"loop": t_loop, "vmap": t_vmap, "torch": t_torch}


if __name__ == "__main__":
    main()
