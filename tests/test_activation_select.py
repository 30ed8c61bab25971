"""hardtanh, relu6, threshold and hardshrink pass the gradient (and the tangent) where the input is inside and
+0.0 elsewhere, as torch's backward kernels select: an inf or nan gradient outside is dropped, a negative one
gives +0.0, not -0.0 (which `grad * mask` gave)."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfa

import microtorch as mt
import microtorch.autograd.forward_ad as mfa


def _fns(L):
    F = L.nn.functional
    return {"relu6": F.relu6, "hardtanh": F.hardtanh, "hardtanh(-2, 3)": lambda x: F.hardtanh(x, -2.0, 3.0),
            "threshold": lambda x: F.threshold(x, 1.0, 0.5), "hardshrink": F.hardshrink}


_X = np.array([-2.0, -0.3, 0.5, 7.0, 3.0, 1.0, 6.0, -1.0, 0.0])
_G = np.array([-1.0, np.inf, -1.0, np.nan, -np.inf, -2.0, -1.0, -0.0, -3.0])


def _signed(t):
    return [("nan" if np.isnan(v) else (float(v), bool(np.signbit(v)))) for v in t.detach().numpy()]


def _outcomes(L, fa, name):
    f = _fns(L)[name]
    x = L.tensor(_X, requires_grad=True)
    f(x).backward(L.tensor(_G))
    recorded, = L.autograd.grad(f(x), x, L.tensor(_G), create_graph=True)
    with fa.dual_level():
        tangent = fa.unpack_dual(f(fa.make_dual(L.tensor(_X), L.tensor(_G)))).tangent
    return {"backward": _signed(x.grad), "create_graph": _signed(recorded), "tangent": _signed(tangent)}


@pytest.mark.parametrize("name", list(_fns(torch)))
def test_gradients_and_tangents_select_as_torch(name):
    assert _outcomes(mt, mfa, name) == _outcomes(torch, tfa, name)


def test_the_inputs_do_hold_what_a_product_gets_wrong():
    masked = _G * np.array([0.0, 1, 1, 0, 0, 1, 0, 1, 1])  # (relu6's mask: so the test above can fail)
    assert np.isnan(masked).any() and np.signbit(masked[0])
