"""istft (ops/spectral_inverse.py), heaviside_, Tensor.as_subclass and Tensor.grad_dtype against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

rng = np.random.default_rng(0)
W = np.hanning(18)[1:-1]  # (a window without zeros at its ends)


def spec(L, x, **kw):
    return L.stft(x, 16, hop_length=4, window=L.tensor(W), return_complex=True, **kw)


ISTFT = {
    "round trip": lambda L, x: L.istft(spec(L, x), 16, 4, window=L.tensor(W)),
    "batched": lambda L, x: L.istft(spec(L, x.reshape(2, 32).repeat(1, 2)), 16, 4, window=L.tensor(W)),
    "longer": lambda L, x: L.istft(spec(L, x), 16, 4, window=L.tensor(W), length=70),
    "shorter": lambda L, x: L.istft(spec(L, x), 16, 4, window=L.tensor(W), length=40),
    "normalized": lambda L, x: L.istft(spec(L, x, normalized=True) * 1.3, 16, 4, window=L.tensor(W), normalized=True),
    "short window": lambda L, x: L.istft(L.stft(x, 16, 4, win_length=8, window=L.ones(8, dtype=L.float64),
                                                return_complex=True), 16, 4, win_length=8,
                                         window=L.ones(8, dtype=L.float64)),
    "not a stft": lambda L, x: L.istft(spec(L, x) * (1 + 0.3j), 16, 4, window=L.tensor(W)),
    "two-sided complex": lambda L, x: L.istft(L.stft(x * (1 + 0.5j), 16, 4, window=L.tensor(W), return_complex=True,
                                                     onesided=False), 16, 4, window=L.tensor(W),
                                              return_complex=True, onesided=False).abs(),
    "two-sided real": lambda L, x: L.istft(L.stft(x, 16, 4, window=L.tensor(W), return_complex=True, onesided=False),
                                           16, 4, window=L.tensor(W), onesided=False),
}


@pytest.mark.parametrize("name", list(ISTFT))
def test_istft_as_torch(name):
    """values, gradients, second order (through a sine: istft itself is linear) and forward mode"""
    check_op(lambda L, x: ISTFT[name](L, x).sin(), rng.standard_normal(64), grad_tol=1e-8, vmap=False)


def test_istft_grad_fn_names_and_errors_as_torch():
    names = []
    for lib in (torch, mt):
        s = spec(lib, lib.tensor(rng.standard_normal(64))).requires_grad_()
        w = lib.tensor(W)
        names.append([lib.istft(s, 16, 4, window=w).grad_fn.name(),
                      lib.istft(s.unsqueeze(0), 16, 4, window=w).grad_fn.name(), s.istft(16, 4, window=w).shape])
    assert names[1] == names[0]
    bad = [lambda L, s: L.istft(s.real, 16, 4, window=L.tensor(W)),
           lambda L, s: L.istft(s, 16, 4, window=L.tensor(W), return_complex=True),
           lambda L, s: L.istft(s, 16, 4, window=L.tensor(W), onesided=False),
           lambda L, s: L.istft(s, 16, 20, window=L.tensor(W)),
           lambda L, s: L.istft(s, 16, 4, window=L.tensor(W[:8])),
           lambda L, s: L.istft(s, 16, 4, window=L.tensor(np.hanning(16)), center=False)]
    for f in bad:
        for lib in (torch, mt):
            with pytest.raises(RuntimeError):
                f(lib, spec(lib, lib.tensor(rng.standard_normal(64))))


def test_heaviside_inplace_as_torch():
    out = []
    for lib in (torch, mt):
        z = lib.tensor([-1.0, 0.0, 2.0])
        out.append(z.heaviside_(lib.tensor([0.5, 0.25, 1.0])))
        assert z._version == 1
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        y = x * 1
        y.heaviside_(lib.tensor(0.5))
        out.append(y)
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside_ is not implemented"):
            y.sum().backward()
        with pytest.raises(RuntimeError):
            x.heaviside_(lib.tensor(0.5))
        with pytest.raises(RuntimeError):
            lib.tensor([1.0]).heaviside_(lib.tensor([1]))
        c = lib.tensor([1 + 1j, 0j])
        for call in (lambda: lib.heaviside(c, c), lambda: c.heaviside(c), lambda: c.clone().heaviside_(c)):
            with pytest.raises(RuntimeError, match="heaviside is not yet implemented for complex tensors"):
                call()
    close(out[2], out[0], "heaviside_")
    close(out[3], out[1], "heaviside_ recorded")


def test_as_subclass_as_torch():
    seen = []
    for lib in (torch, mt):
        class Sub(lib.Tensor):
            pass
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.as_subclass(Sub)
        (y * y).sum().backward()
        w = lib.zeros(3)
        v = w.as_subclass(Sub)
        v[0] = 5.0  # the same data
        seen.append([type(y) is Sub, y.grad_fn.name(), y.is_leaf, x.grad.tolist(), w.tolist(), w._version,
                     lib.ones(2).as_subclass(Sub).grad_fn])
        with pytest.raises(TypeError):
            x.as_subclass(int)
    assert seen[1] == seen[0]


def test_grad_dtype_as_torch():
    seen = []
    for lib in (torch, mt):
        x = lib.ones(2, requires_grad=True)
        first = x.grad_dtype
        x.grad_dtype = None
        none = x.grad_dtype
        x.grad_dtype = lib.float32
        (x * 2).sum().backward()
        seen.append([str(first).split(".")[1], none, str(x.grad_dtype).split(".")[1], str(x.grad.dtype)[-7:]])
        for verb in ("get", "set"):
            with pytest.raises(RuntimeError, match="leaf"):
                if verb == "get":
                    (x * 2).grad_dtype
                else:
                    (x * 2).grad_dtype = lib.float32
    assert seen[1] == seen[0]


def _grads_with_grad_dtype(lib):
    """What .grad and autograd.grad give when a leaf's grad_dtype differs from its dtype, or is None."""
    out = []
    x = lib.ones(3, requires_grad=True)
    x.grad_dtype = lib.float64
    (x * 2).sum().backward()                       # the engine casts the leaf's gradient
    out.append((x.grad.dtype, x.grad.tolist()))
    y = lib.ones(3, requires_grad=True)
    y.grad_dtype = lib.float64
    out.append(lib.autograd.grad((y * 3).sum(), y)[0].dtype)
    z = lib.ones(3, requires_grad=True)
    (z * 2).sum().backward()
    z.grad = None                                  # a gradient already there must match, so clear it first
    z.grad_dtype = None                            # None: any dtype may be assigned
    z.grad = lib.zeros(3, dtype=lib.float64)
    out.append(z.grad.dtype)
    w = lib.ones(3, requires_grad=True)
    loss = (w * 2).sum()                           # the graph exists before grad_dtype is set
    w.grad_dtype = lib.float16
    loss.backward()
    out.append(w.grad.dtype)
    return [str(v).replace("microtorch", "torch") for v in out]


def test_grad_dtype_casts_the_gradient_as_torch():
    assert _grads_with_grad_dtype(mt) == _grads_with_grad_dtype(torch)


@pytest.mark.parametrize("case", ["set with a grad there", "assign another dtype"])
def test_grad_dtype_errors_as_torch(case):
    for lib in (torch, mt):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad_dtype"):
            if case == "set with a grad there":
                x.grad = lib.zeros(2)
                x.grad_dtype = lib.float64
            else:
                x.grad_dtype = lib.float64
                x.grad = lib.zeros(2)


def test_istft_method_and_warning_without_window():
    s = spec(mt, mt.tensor(rng.standard_normal(64)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mt.istft(s, 16, 4)
    assert any("window" in str(x.message) for x in w)


def test_heaviside_out_of_place_as_torch():
    """NaN gives 0 (torch's x > 0 test), and a result that requires grad records a node whose backward refuses."""
    got = []
    for lib in (torch, mt):
        x = lib.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
        y = lib.heaviside(x, lib.tensor([0.5, 0.5, 0.5, 0.5]))
        got.append((y.detach().tolist()[:3], y.detach().tolist()[3], y.requires_grad, type(y.grad_fn).__name__))
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            y.sum().backward()
    assert got[1] == got[0]
