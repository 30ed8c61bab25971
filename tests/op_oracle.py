"""Check one differentiable op against torch: values, grad_fn name, first and second order
gradients, forward mode (jvp) and vmap, on the same float64 inputs.

A spec is `f(lib, *tensors)`, written once for both libraries (lib is torch or microtorch).
"""
import numpy as np
import torch

import microtorch as mt

TOL = 1e-10


def _np(t):
    if not hasattr(t, "detach"):
        return np.asarray(t)
    try:
        return t.detach().numpy()
    except RuntimeError:  # torch's ZeroTensor (a gradient known to be 0)
        return t.detach().numpy(force=True)


def close(a, b, what, tol=TOL):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


def _pair(arrays, lib, requires_grad):
    return [lib.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == "f") for a in arrays]


def check_op(f, *arrays, grad_fn=None, second_order=True, jvp=True, vmap=True, grad_tol=TOL):
    """Compare f on microtorch and torch for the numpy inputs `arrays` (float inputs get gradients)."""
    xt, xm = _pair(arrays, torch, True), _pair(arrays, mt, True)
    yt, ym = f(torch, *xt), f(mt, *xm)
    close(ym, yt, "value")
    if grad_fn is not None:
        assert yt.grad_fn.name() == grad_fn, f"oracle says {yt.grad_fn.name()}"
        assert ym.grad_fn.name() == grad_fn
    diff_t = [x for x in xt if x.requires_grad]
    diff_m = [x for x in xm if x.requires_grad]
    seed = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    gt = torch.autograd.grad(yt, diff_t, torch.tensor(seed), create_graph=second_order, allow_unused=True)
    gm = mt.autograd.grad(ym, diff_m, mt.tensor(seed), create_graph=second_order, allow_unused=True)
    for i, (a, b) in enumerate(zip(gm, gt)):
        if a is None and b is None:
            continue
        close(a if a is not None else np.zeros(b.shape), b if b is not None else np.zeros(a.shape), f"grad {i}",
              grad_tol)
    if second_order:
        _second_order(gt, gm, diff_t, diff_m, grad_tol)
    if jvp:
        _forward_mode(f, arrays, grad_tol)
    if vmap:
        _vmapped(f, arrays)


def _second_order(gt, gm, diff_t, diff_m, tol=TOL):
    st = sum((g * g).sum() for g in gt if g is not None and g.requires_grad)
    sm = sum((g * g).sum() for g in gm if g is not None and g.requires_grad)
    if not isinstance(st, torch.Tensor):
        return  # the op is linear in every input: no second derivative
    ht = torch.autograd.grad(st, diff_t, allow_unused=True)
    hm = mt.autograd.grad(sm, diff_m, allow_unused=True)
    for i, (a, b) in enumerate(zip(hm, ht)):
        if a is None and b is None:
            continue
        close(a if a is not None else np.zeros(b.shape), b if b is not None else np.zeros(a.shape), f"grad2 {i}", tol)


def _forward_mode(f, arrays, tol=TOL):
    rng = np.random.default_rng(1)
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    tangents = {i: rng.standard_normal(arrays[i].shape) for i in floats}

    def run(lib, func):
        primals = [lib.tensor(arrays[i].copy()) for i in floats]
        tans = [lib.tensor(tangents[i].copy()) for i in floats]

        def g(*fl):
            args = [lib.tensor(a.copy()) for a in arrays]
            for i, v in zip(floats, fl):
                args[i] = v
            return f(lib, *args)
        return func.jvp(g, tuple(primals), tuple(tans))

    (pt, tt), (pm, tm) = run(torch, torch.func), run(mt, mt.func)
    close(pm, pt, "jvp primal")
    close(tm, tt, "jvp tangent", tol)


def _vmapped(f, arrays, B=3):
    """vmap over a batch of the first input equals torch's vmap (and so the loop)."""
    rng = np.random.default_rng(2)
    batch = rng.standard_normal((B,) + arrays[0].shape).astype(arrays[0].dtype) if arrays[0].dtype.kind == "f" \
        else np.stack([arrays[0]] * B)
    rest = arrays[1:]

    def run(lib):
        others = [lib.tensor(a.copy()) for a in rest]
        return lib.func.vmap(lambda x: f(lib, x, *others))(lib.tensor(batch))
    close(run(mt), run(torch), "vmap")


def graph_names(t, rename=None):
    """The sorted names of the nodes t's graph reaches, each node once (rename: {name: the name compared}); None
    for a tensor without a graph."""
    if t is None or t.grad_fn is None:
        return None
    seen, todo = {}, [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is not None and id(n) not in seen:
            name = n.name().replace("torch::autograd::", "")
            seen[id(n)] = (rename or {}).get(name, name)
            todo.extend(m for m, _ in n.next_functions)
    return sorted(seen.values())
