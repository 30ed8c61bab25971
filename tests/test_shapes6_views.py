"""reshape, view and unflatten beside torch 2.13: the strides of the result (torch's computeStride, which
gives size-1 dims and the same shape strides numpy does not), whether it is a view and its grad_fn
(ViewBackward0, ReshapeAliasBackward0, UnsafeViewBackward0), and unflatten's checks of its sizes."""
import itertools

import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)
BASE = np.arange(48.0).reshape(2, 3, 4, 2)
CUTS = [slice(None), slice(None, None, 2), slice(1, None), slice(0, 1), slice(0, 0)]


def _factorizations(n, k):
    if k == 1:
        return [(n,)]
    return [(d,) + r for d in range(1, n + 1) if n % d == 0 for r in _factorizations(n // d, k - 1)]


def _layout(r):
    return tuple(r.shape), r.stride(), r.is_contiguous(), r.grad_fn.name(), r._base is not None


def _cases():
    rng = np.random.default_rng(6)
    for _ in range(60):
        perm = tuple(int(i) for i in rng.permutation(4))
        cut = tuple(CUTS[i] for i in rng.integers(0, len(CUTS), 4))
        n = torch.tensor(BASE).permute(*perm)[cut].numel()
        for k in (1, 2, 3, 4):
            shapes = _factorizations(n, k) if n else [(0,) * k, (0,) + (1,) * (k - 1)]
            yield perm, cut, shapes[int(rng.integers(len(shapes)))]


@pytest.mark.parametrize("method", ["reshape", "view"])
def test_reshape_and_view_give_torch_strides(method):
    differ, total = [], 0
    for perm, cut, shape in _cases():
        got = {}
        for lib in LIBS:
            x = lib.tensor(BASE, requires_grad=True).permute(*perm)[cut]
            try:
                got[lib] = _layout(getattr(x, method)(shape))
            except RuntimeError:
                got[lib] = "RuntimeError"
        total += 1
        if got[mt] != got[torch]:
            differ.append((perm, cut, shape, got[torch], got[mt]))
    assert total > 200 and not differ, differ[:5]


@pytest.mark.parametrize("make, shape", [
    (lambda lib: lib.tensor(BASE)[0, :1, 1:2, :1], (1,)),        # one element, strides of its own
    (lambda lib: lib.tensor(BASE)[0, :1].transpose(0, 1), (4, 2)),  # the same shape: torch recomputes
    (lambda lib: lib.tensor(BASE)[:1, ::2, 1:].transpose(1, 2), (1, 3, 1, 4, 1)),
    (lambda lib: lib.tensor(BASE)[:, :, :0], (2, 3, 0, 2)),       # empty, the same shape: x's strides
    (lambda lib: lib.tensor(BASE)[:, :, :0], (0, 5)),
])
def test_reshape_corner_cases(make, shape):
    got = {lib: (tuple(make(lib).reshape(shape).shape), make(lib).reshape(shape).stride()) for lib in LIBS}
    assert got[mt] == got[torch]


@pytest.mark.parametrize("dim, sizes", [(1, (2, 2)), (0, (2, 1)), (2, (3, 1)), (0, (-1, 2)), (1, (1, -1, 1)), (2, (1, 3))])
def test_unflatten_of_a_non_contiguous_tensor_is_a_view(dim, sizes):
    got = {}
    for lib in LIBS:
        x = lib.tensor(BASE[0], requires_grad=True).transpose(0, 2)  # (2, 4, 3), not contiguous
        r = x.unflatten(dim, sizes)
        g, = lib.autograd.grad(r, x, lib.ones_like(r), create_graph=True)
        got[lib] = _layout(r), r._base is x, g.grad_fn and g.grad_fn.name()
    assert got[mt] == got[torch]


@pytest.mark.parametrize("shape, sizes", [((2, 6), (4, 2)), ((2, 6), (-1, -1)), ((2, 6), (-1, 4)), ((2, 6), ()),
                                          ((2, 6), (0, -1)), ((2, 6), (-2, -3)), ((2, 6), (2, -2, -1)),
                                          ((2, 6), (12, -1)), ((2, 0), (0, -1)), ((2, 0), (-1, 0)), ((), (1,))])
def test_unflatten_refuses_sizes_as_torch(shape, sizes):
    messages = {}
    for lib in LIBS:
        with pytest.raises(RuntimeError) as e:
            lib.zeros(shape).unflatten(-1 if shape else 0, sizes)
        messages[lib] = str(e.value)
    theirs = messages[torch].split("\n")[1] if "unexpected error" in messages[torch] else messages[torch]
    assert theirs.split(" (")[0] in messages[mt] or theirs.split(" at ")[0] in messages[mt], (theirs, messages[mt])
    assert "unflatten" in messages[mt]


@pytest.mark.parametrize("shape, sizes", [((2, 0), (0, 5)), ((2, 0), (5, 0)), ((2, 0), (-1, 5)), ((2, 6), (6,)),
                                          ((2, 6), (-1,)), ((2, 6), [1, -1, 1])])
def test_unflatten_sizes_torch_accepts(shape, sizes):
    got = {lib: _layout(lib.zeros(shape, requires_grad=True).unflatten(1, sizes)) for lib in LIBS}
    assert got[mt] == got[torch]


def test_the_cases_cover_views_copies_and_empty_tensors():
    names = set()
    for (perm, cut, shape), _ in zip(_cases(), itertools.count()):
        r = mt.tensor(BASE, requires_grad=True).permute(*perm)[cut].reshape(shape)
        names.add((r.grad_fn.name(), r.numel() == 0))
    assert {("ViewBackward0", False), ("ReshapeAliasBackward0", False), ("UnsafeViewBackward0", False),
            ("ViewBackward0", True)} <= names


@pytest.mark.parametrize("make, dtype", [(lambda lib: lib.tensor([1.0, 2.0]), "int32"), (lambda lib: lib.tensor([1.0, 2.0]), "int16"),
                                         (lambda lib: lib.tensor([1.0, 2.0]), "float64"),
                                         (lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]), "uint8"),
                                         (lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t(), "int32"),
                                         (lambda lib: lib.tensor(3.0), "int32"), (lambda lib: lib.tensor([True, False]), "uint8"),
                                         (lambda lib: lib.tensor([1.0, 2.0], requires_grad=True), "float32")])
def test_view_as_a_dtype_reads_the_bits(make, dtype):
    """(torch's errors for a view it cannot make are RuntimeErrors; ours still come out of the guard as
    TypeErrors: see the report of this round)"""
    got = {}
    for lib in LIBS:
        x = make(lib)
        v = x.view(getattr(lib, dtype))
        w = x.view(dtype=getattr(lib, dtype))
        got[lib] = (v.numpy().tolist(), str(v.dtype).split(".")[1], tuple(v.shape), v.stride(), v.requires_grad,
                    v.grad_fn, w.numpy().tolist())
        if not x.requires_grad:
            v.add_(1)  # the same memory and version counter
            got[lib] += (x.numpy().tolist(), x._version)
    assert got[mt] == got[torch]


def _reduction_layouts(lib):
    rng = np.random.default_rng(4)
    out = []
    for _ in range(80):
        perm = tuple(int(i) for i in rng.permutation(4))
        cut = tuple(CUTS[i] for i in rng.integers(0, len(CUTS) - 1, 4))  # (not the empty cut: numpy's strides)
        x = lib.tensor(BASE + 1, requires_grad=True).permute(*perm)[cut]
        d, dd = int(rng.integers(0, 4)), tuple(sorted(int(i) for i in rng.choice(4, 2, replace=False)))
        for r in (x.sum(d, keepdim=True), x.sum(dd, keepdim=True), x.mean(d, keepdim=True), x.var(dd, keepdim=True),
                  x.prod(d, keepdim=True), x.amax(dd, keepdim=True), x.max(d, keepdim=True).values,
                  x.max(d, keepdim=True).indices, x.logsumexp(d, keepdim=True), x.norm(dim=dd, keepdim=True),
                  x.sum(d), x.amax(dd), x.argmax(d, keepdim=True), x.all(d, keepdim=True), lib.cat([x, x], 1),
                  lib.stack([x, x], 2)):
            out.append((tuple(r.shape), r.stride()))
    return out


def test_reductions_cat_and_stack_lay_out_their_results_as_torch():
    assert _reduction_layouts(mt) == _reduction_layouts(torch)


def test_cat_of_channels_last_tensors_stays_channels_last():
    got = {}
    for lib in LIBS:
        a = lib.tensor(np.arange(24.0).reshape(1, 3, 4, 2).transpose(0, 3, 1, 2).copy()).permute(0, 2, 3, 1)
        a = a.contiguous().permute(0, 3, 1, 2)  # (1, 2, 3, 4) laid out channels last
        got[lib] = a.stride(), lib.cat([a, a], 1).stride(), lib.cat([a, a.contiguous()], 1).stride()
    assert got[mt] == got[torch]
