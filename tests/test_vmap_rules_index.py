"""vmap of the ops of ops/{index_more,order,scan,misc_more}.py that torch batches with a rule (microtorch/func/
_rules_index.py): one call on the whole batch (no per-example fallback, so no performance warning), and the
same values as torch.vmap for in_dims 0, 1 and None, out_dims, vmap(grad), vmap(jacrev) and vmap(jacfwd)."""
import math
import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.func as tfunc

import microtorch as mt
import microtorch.func as mfunc
from vmap_oracle import close, inputs, torch_loop, warned


def _floats(out):
    """the floating outputs of an op (values, not indices), summed to a scalar for grad"""
    if isinstance(out, tuple):
        return sum(_floats(o) for o in out)
    return out.sum() if out.dtype.is_floating_point else 0


# (name, f(L, *args), specs, in_dims, argnums of the differentiable args)
CASES = [
    ("index_copy", lambda L, x, i, s: L.index_copy(x, 1, i, s), [("f", (3, 4)), ("perm", 4, 2), ("f", (3, 2))],
     [(0, None, None), (None, None, 0), (0, None, 0), (None, 0, None), (0, 0, 0)], (0, 2)),
    ("index_copy_dim0", lambda L, x, i, s: x.index_copy(0, i, s), [("f", (4, 2)), ("perm", 4, 3), ("f", (3, 2))],
     [(0, None, 0), (None, 0, 0)], (0, 2)),
    ("index_fill", lambda L, x, i: L.index_fill(x, 1, i, -2.5), [("f", (3, 4)), ("i", 4, (3,))],
     [(0, None), (None, 0), (0, 0)], (0,)),
    ("index_fill_tensor_value", lambda L, x, i, v: x.index_fill(0, i, v), [("f", (3, 4)), ("perm", 3, 2),
                                                                           ("f", ())],
     [(0, None, None), (None, None, 0), (0, None, 0)], (0, 2)),
    ("index_fill_repeated_index", lambda L, x, i, v: x.index_fill(1, i, v), [("f", (3, 4)), ("i", 4, (5,)), ("f", ())],
     [(0, None, None), (0, None, 0)], (0, 2)),
    ("index_put", lambda L, x, i, v: L.index_put(x, (i,), v), [("f", (3, 4)), ("perm", 3, 2), ("f", (2, 4))],
     [(0, None, None), (None, None, 0), (0, None, 0), (None, 0, None), (0, 0, 0)], (0, 2)),
    ("index_put_two_keys", lambda L, x, i, j, v: x.index_put((i, j), v),
     [("f", (3, 4)), ("i", 3, (2,)), ("i", 4, (2,)), ("f", (2,))], [(0, None, None, None), (None, None, None, 0),
                                                               (None, 0, None, None), (0, None, 0, 0)], (0, 3)),
    ("index_put_accumulate", lambda L, x, i, v: L.index_put(x, (i,), v, accumulate=True),
     [("f", (3, 4)), ("i", 3, (5,)), ("f", (5, 4))], [(0, None, None), (None, None, 0), (0, None, 0), (None, 0, 0)],
     (0, 2)),
    ("scatter_add", lambda L, x, i, s: L.scatter_add(x, 1, i, s), [("f", (3, 4)), ("i", 4, (3, 2)), ("f", (3, 2))],
     [(0, None, None), (None, None, 0), (None, 0, None), (0, 0, 0)], (0, 2)),
    ("scatter_add_larger_src", lambda L, x, i, s: L.scatter_add(x, 1, i, s),  # (torch's backward refuses it)
     [("f", (3, 4)), ("i", 4, (3, 2)), ("f", (3, 3))], [(0, 0, 0), (None, None, 0)], ()),
    ("scatter_add_dim0", lambda L, x, i, s: x.scatter_add(0, i, s), [("f", (3, 4)), ("i", 3, (2, 4)),
                                                                     ("f", (2, 4))],
     [(0, 0, 0), (None, 0, 0)], (0, 2)),
    ("scatter", lambda L, x, i, s: L.scatter(x, 1, i, s), [("f", (3, 4)), ("i", 4, (3, 1)), ("f", (3, 1))],
     [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0)], (0, 2)),  # (rules in _rules_api.py)
    ("scatter_smaller_index", lambda L, x, i, s: (x.scatter(0, i, s), x.scatter(0, i, -1.0)),  # (index's extent only)
     [("f", (3, 4)), ("i", 3, (1, 2)), ("f", (2, 3))], [(0, None, 0), (None, 0, None)], (0,)),
    ("scatter_value", lambda L, x, i: x.scatter(0, i, 2.0), [("f", (3, 4)), ("i", 3, (1, 4))],
     [(0, None), (None, 0), (0, 0)], (0,)),
    ("select_scatter", lambda L, x, s: L.select_scatter(x, s, 1, 2), [("f", (3, 4)), ("f", (3,))],
     [(0, None), (None, 0), (0, 0)], (0, 1)),
    ("slice_scatter", lambda L, x, s: L.slice_scatter(x, s, 1, 1, 3), [("f", (3, 4)), ("f", (3, 2))],
     [(0, None), (None, 0), (0, 0)], (0, 1)),
    ("slice_scatter_step", lambda L, x, s: L.slice_scatter(x, s, 0, 0, None, 2), [("f", (5, 2)), ("f", (3, 2))],
     [(0, 0), (None, 0)], (0, 1)),
    ("diagonal_scatter", lambda L, x, s: L.diagonal_scatter(x, s, 1), [("f", (3, 4)), ("f", (3,))],
     [(0, None), (None, 0), (0, 0)], (0, 1)),
    ("diagonal", lambda L, x: x.diagonal(1) * 2 + L.diagonal(x, -1, 1, 0)[:2].sum(), [("f", (3, 4))], [(0,)], (0,)),
    ("median_all", lambda L, x: L.median(x), [("t", (3, 4))], [(0,)], (0,)),
    ("median_dim", lambda L, x: L.median(x, 1), [("t", (3, 4))], [(0,)], (0,)),
    ("median_keepdim", lambda L, x: x.median(0, keepdim=True), [("f", (3, 4))], [(0,)], (0,)),
    ("nanmedian_all", lambda L, x: L.nanmedian(x), [("nan", (3, 4))], [(0,)], (0,)),
    ("nanmedian_dim", lambda L, x: L.nanmedian(x, -1), [("nan", (3, 4))], [(0,)], (0,)),
    ("median_nan", lambda L, x: (L.median(x), L.median(x, 1)), [("nan", (3, 4))], [(0,)], (0,)),
    ("kthvalue", lambda L, x: L.kthvalue(x, 2, 1), [("f", (3, 4))], [(0,)], (0,)),
    ("kthvalue_keepdim", lambda L, x: x.kthvalue(3, 0, keepdim=True), [("t", (3, 4))], [(0,)], (0,)),
    ("mode", lambda L, x: L.mode(x, 1), [("t", (3, 4))], [(0,)], (0,)),
    ("mode_keepdim", lambda L, x: x.mode(0, keepdim=True), [("t", (3, 4))], [(0,)], (0,)),
    ("aminmax", lambda L, x: L.aminmax(x), [("t", (3, 4))], [(0,)], (0,)),
    ("aminmax_dim", lambda L, x: L.aminmax(x, dim=1), [("t", (3, 4))], [(0,)], (0,)),
    ("aminmax_keepdim", lambda L, x: (L.aminmax(x, keepdim=True), L.aminmax(x, dim=0, keepdim=True)),
     [("f", (3, 4))], [(0,)], (0,)),
    ("cummax", lambda L, x: L.cummax(x, 1), [("t", (3, 4))], [(0,)], (0,)),
    ("cummin", lambda L, x: L.cummin(x, 0), [("t", (3, 4))], [(0,)], (0,)),
    ("cummax_nan", lambda L, x: (L.cummax(x, -1), x.cummin(-1)), [("nan", (3, 4))], [(0,)], ()),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), [("f", (3, 5))], [(0,)], (0,)),
    ("unfold_step", lambda L, x: x.unfold(0, 2, 2), [("f", (5, 3))], [(0,)], (0,)),
    ("narrow_copy", lambda L, x: L.narrow_copy(x, 1, 1, 2), [("f", (3, 4))], [(0,)], (0,)),
]


def _variants():
    for name, f, specs, in_dims_list, argnums in CASES:
        for in_dims in in_dims_list:
            yield pytest.param(name, f, specs, in_dims, argnums, id=f"{name}-{in_dims}")


# torch.vmap differs from torch's own loop here (a bug of its batching rule); microtorch follows the loop
TORCH_VMAP_BUGS = {
    ("index_fill_tensor_value", (None, None, 0)): "a batched 0-d value with unbatched self: torch fills every "
                                                  "example with the last example's value",
    ("aminmax_keepdim", (0,)): "aminmax(keepdim=True) without a dim: torch's rule drops one of the kept dims",
    ("aminmax_keepdim", (1,)): "(the same)",
}


def _as_torch(ours, f, arrays, in_dims, name, out_dims=0):
    theirs = tfunc.vmap(lambda *a: f(torch, *a), in_dims=in_dims, out_dims=out_dims)(*map(torch.tensor, arrays))
    if (name, tuple(in_dims)) in TORCH_VMAP_BUGS:
        with pytest.raises(AssertionError):  # (when torch fixes it, this entry goes)
            close(theirs, torch_loop(f, arrays, in_dims, out_dims))
        theirs = torch_loop(f, arrays, in_dims, out_dims)
    close(ours, theirs)


def _no_fallback(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the per-example fallback's "performance drop" warning fails the test
        return call()


@pytest.mark.parametrize("name,f,specs,in_dims,argnums", list(_variants()))
def test_values_as_torch(name, f, specs, in_dims, argnums):
    arrays = inputs(specs, in_dims, zlib.crc32(name.encode()))
    ours = _no_fallback(lambda: mfunc.vmap(lambda *a: f(mt, *a), in_dims=in_dims)(*map(mt.tensor, arrays)))
    _as_torch(ours, f, arrays, in_dims, name)


def _at_dim1(in_dims, specs):
    """in_dims with the batch at dim 1 for the batched args that have at least one dim of their own"""
    def ndim(spec):
        return 1 if spec[0] == "perm" else len(spec[-1])
    return tuple(None if d is None else min(ndim(s), 1) for d, s in zip(in_dims, specs))


@pytest.mark.parametrize("name,f,specs,in_dims_list,argnums", CASES, ids=[c[0] for c in CASES])
def test_in_dims_1_and_out_dims_as_torch(name, f, specs, in_dims_list, argnums):
    in_dims = _at_dim1(in_dims_list[-1], specs)
    arrays = inputs(specs, in_dims, zlib.crc32(name.encode()) + 1)
    ours = _no_fallback(lambda: mfunc.vmap(lambda *a: f(mt, *a), in_dims=in_dims, out_dims=-1)(
        *map(mt.tensor, arrays)))
    _as_torch(ours, f, arrays, in_dims, name, out_dims=-1)


@pytest.mark.parametrize("name,f,specs,in_dims,argnums", [v for v in _variants() if v.values[4]])
def test_vmap_of_grad_as_torch(name, f, specs, in_dims, argnums):
    arrays = inputs(specs, in_dims, zlib.crc32(name.encode()) + 2)
    ours = _no_fallback(lambda: mfunc.vmap(mfunc.grad(lambda *a: _floats(f(mt, *a)), argnums=argnums),
                                           in_dims=in_dims)(*map(mt.tensor, arrays)))
    theirs = tfunc.vmap(tfunc.grad(lambda *a: _floats(f(torch, *a)), argnums=argnums),
                        in_dims=in_dims)(*map(torch.tensor, arrays))
    close(ours, theirs)


JACOBIANS = ["index_copy", "index_put_accumulate", "scatter_add", "slice_scatter", "diagonal_scatter", "diagonal",
             "median_all", "median_dim", "kthvalue", "mode", "aminmax_dim", "cummax", "unfold", "narrow_copy"]


# torch has no rule for these backward ops, microtorch's backward is made of ops that have one
BACKWARD_RULES_TORCH_LACKS = {("jacrev", "cummax"): "cummaxmin_backward (microtorch: a scatter_add)",
                              ("hessian", "cummax"): "(the same)"}


@pytest.mark.parametrize("name", JACOBIANS)
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
def test_vmap_of_jacobians_as_torch(name, transform):
    """jacrev runs the backward ops under vmap too (diagonal's adjoint batched, unfold's per example as torch's),
    jacfwd the forward-mode rules, hessian both (of the sum of cubes): the same values as torch, and a per-example
    fallback exactly where torch has one"""
    _, f, specs, in_dims_list, argnums = next(c for c in CASES if c[0] == name)
    in_dims = in_dims_list[0]
    arrays = inputs(specs, in_dims, zlib.crc32(name.encode()) + 3)
    argnums = argnums[0] if transform == "hessian" else argnums

    def first(L):
        def values(*a):
            out = f(L, *a)
            return out[0] if isinstance(out, tuple) else out
        return (lambda *a: (values(*a) ** 3).sum()) if transform == "hessian" else values
    ours, we_warn = warned(lambda: mfunc.vmap(getattr(mfunc, transform)(first(mt), argnums=argnums),
                                              in_dims=in_dims)(*map(mt.tensor, arrays)))
    theirs, they_warn = warned(lambda: tfunc.vmap(getattr(tfunc, transform)(first(torch), argnums=argnums),
                                                  in_dims=in_dims)(*map(torch.tensor, arrays)))
    close(ours, theirs)
    assert we_warn == (they_warn and (transform, name) not in BACKWARD_RULES_TORCH_LACKS)


def _index_copy(L):
    return lambda a, i, b: L.index_copy(a, 1, i, b)


def _scatter_add(L):
    return lambda a, i, b: L.scatter_add(a, 1, i, b)


# vmap over a transform that batches again: the index batched by the outer level, by both, or by none
NESTED = [
    ("vmap_vmap_index_both", lambda L, f: L.vmap(L.vmap(f(L))), _index_copy, (2, 3, 3, 4), "perm", (2, 3, 3, 2)),
    ("vmap_vmap_index_outer", lambda L, f: L.vmap(L.vmap(f(L), in_dims=(0, None, 0))), _index_copy, (2, 3, 3, 4),
     "perm_outer", (2, 3, 3, 2)),
    ("vmap_jacfwd_index", lambda L, f: L.vmap(L.func.jacfwd(f(L), argnums=(0, 2))), _index_copy, (3, 3, 4), "perm",
     (3, 3, 2)),
    ("vmap_jacrev_index", lambda L, f: L.vmap(L.func.jacrev(f(L), argnums=(0, 2))), _index_copy, (3, 3, 4), "perm",
     (3, 3, 2)),
    ("vmap_vmap_scatter_add", lambda L, f: L.vmap(L.vmap(f(L))), _scatter_add, (2, 3, 3, 4), "int", (2, 3, 3, 2)),
    ("vmap_jacfwd_scatter_add", lambda L, f: L.vmap(L.func.jacfwd(f(L))), _scatter_add, (3, 3, 4), "int",
     (3, 3, 2)),
]


@pytest.mark.parametrize("name,transform,op,x_shape,index,s_shape", NESTED, ids=[n[0] for n in NESTED])
def test_nested_transforms_with_batched_indices_as_torch(name, transform, op, x_shape, index, s_shape):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x, s = rng.standard_normal(x_shape), rng.standard_normal(s_shape)
    lead = s_shape[:-2]
    if index == "int":
        idx = rng.integers(0, 4, s_shape)
    elif index == "perm":
        idx = np.stack([rng.permutation(4)[:2] for _ in range(math.prod(lead))]).reshape(lead + (2,))
    else:  # one index per outer example, the same for the inner ones
        idx = np.stack([rng.permutation(4)[:2] for _ in range(lead[0])])
    ours = _no_fallback(lambda: transform(mt, op)(mt.tensor(x), mt.tensor(idx), mt.tensor(s)))
    close(ours, transform(torch, op)(torch.tensor(x), torch.tensor(idx), torch.tensor(s)))


def test_nested_vmap_of_index_copy_and_median():
    rng = np.random.default_rng(11)
    x, s = rng.standard_normal((2, 3, 3, 4)), rng.standard_normal((3, 3, 2))
    idx = np.array([3, 1])

    def f(L):
        return lambda a, b: L.index_copy(a, 1, L.tensor(idx), b).median(1).values
    ours = _no_fallback(lambda: mfunc.vmap(mfunc.vmap(f(mt), in_dims=(0, 0)), in_dims=(0, None))(
        mt.tensor(x), mt.tensor(s)))
    close(ours, tfunc.vmap(tfunc.vmap(f(torch), in_dims=(0, 0)), in_dims=(0, None))(torch.tensor(x),
                                                                                    torch.tensor(s)))


def test_index_fill_with_a_repeated_index_outside_vmap_as_torch():
    """(what vmap(grad) of index_fill above relies on) a repeated index fills its place once, so the value's
    gradient counts that place once; a tensor value names the node IndexFillBackward1, as torch's"""
    x = np.random.default_rng(12).standard_normal((3, 4))
    res = []
    for L in (mt, torch):
        v = L.tensor(1.5, dtype=L.float64, requires_grad=True)
        out = L.tensor(x).index_fill(1, L.tensor([3, 0, 3, 3]), v)
        (out ** 2).sum().backward()
        res.append((out.grad_fn.name(), v.grad.item()))
    assert res[0] == res[1]


# the ops rewritten with whole-array numpy so that vmap batches them, against torch outside vmap
REWRITTEN = {
    "mode": lambda L, x, rng: L.mode(x.round(), int(rng.integers(0, x.ndim))),
    "nonzero_static": lambda L, x, rng: L.nonzero_static(x.round(), size=int(rng.integers(0, 9)), fill_value=-2),
    "histc": lambda L, x, rng: L.histc(x, int(rng.integers(1, 6))),
    "scatter": lambda L, x, rng: x.scatter(0, L.tensor(rng.integers(0, x.shape[0], (1,) + tuple(  # (a smaller index)
        int(rng.integers(1, n + 1)) for n in x.shape[1:]))), -1.0),
}


@pytest.mark.parametrize("name", REWRITTEN)
def test_rewritten_ops_equal_torch_outside_vmap(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(40):
        x = rng.standard_normal(tuple(rng.integers(1, 5, rng.integers(1, 4))))
        seed = int(rng.integers(0, 2 ** 31))
        ours, theirs = (REWRITTEN[name](L, L.tensor(x), np.random.default_rng(seed)) for L in (mt, torch))
        close(ours, theirs)
