"""torch.stft / Tensor.stft against torch 2.13: values, gradients, grad_fn names, forward mode, second
order and errors (the one API of the teaching survey that was missing)."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

rng = np.random.default_rng(7)
X = rng.standard_normal(64)
XB = rng.standard_normal((3, 40))
XC = rng.standard_normal(30) + 1j * rng.standard_normal(30)
W16, W8 = rng.uniform(0.1, 1, 16), rng.uniform(0.1, 1, 8)

CASES = {
    "window_hop": (lambda L, x, w: L.stft(x, 16, hop_length=4, window=w, return_complex=True), [X, W16]),
    "method_default": (lambda L, x: x.stft(16, return_complex=True), [X]),
    "two_sided_normalized": (lambda L, x: L.stft(x, 16, return_complex=True, center=False, onesided=False,
                                                 normalized=True), [X]),
    "batch_short_window": (lambda L, x, w: L.stft(x, 16, hop_length=5, win_length=8, window=w,
                                                  return_complex=True, pad_mode="constant"), [XB, W8]),
    "complex_input": (lambda L, x: L.stft(x, 8, return_complex=True), [XC]),
}


def _run(L, f, arrays):
    ts = [L.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = f(L, *ts)
    (y.abs() ** 2).sum().backward()
    names, node = [], y.grad_fn
    while node is not None and len(names) < 4:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return y.detach().numpy(), [t.grad.numpy() for t in ts], names


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_gradients_and_names_equal_torch(case):
    f, arrays = CASES[case]
    (v1, g1, n1), (v2, g2, n2) = _run(torch, f, arrays), _run(mt, f, arrays)
    np.testing.assert_allclose(v2, v1, rtol=1e-10, atol=1e-10)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)
    assert n2[:2] == n1[:2]  # the last steps (in-place transpose, squeeze) as torch; its FFT node too:
    assert "FftR2CBackward0" in n2 or "FftC2CBackward0" in n2


def test_forward_mode_equals_torch():
    t = rng.standard_normal(64)
    outs = []
    for L in (torch, mt):
        with L.autograd.forward_ad.dual_level():
            d = L.autograd.forward_ad.make_dual(L.tensor(X), L.tensor(t))
            y = L.stft(d, 16, hop_length=4, window=L.tensor(W16), return_complex=True)
            outs.append(L.autograd.forward_ad.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-10)


def test_second_order_by_gradgradcheck():
    x = mt.tensor(rng.standard_normal(20), requires_grad=True)
    w = mt.tensor(W8, requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda a, b: mt.stft(a, 8, hop_length=3, window=b, return_complex=True).abs(),
                                     (x, w))


def test_return_complex_false_stacks_real_and_imaginary_parts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = torch.stft(torch.tensor(X), 16, return_complex=False).numpy()
        b = mt.stft(mt.tensor(X), 16, return_complex=False).numpy()
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda L: L.stft(L.tensor(X), 16),                                   # return_complex not given
    lambda L: L.stft(L.tensor(X), 16, window=L.ones(5), return_complex=True),
    lambda L: L.stft(L.zeros(2, 2, 8), 4, return_complex=True),
    lambda L: L.stft(L.tensor(X), 16, hop_length=0, return_complex=True),
    lambda L: L.stft(L.tensor(X), 8, win_length=9, return_complex=True),
])
def test_bad_arguments_raise_torch_s_type_naming_stft(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(mt)
    assert type(ours.value) is type(theirs.value)
    assert "stft" in str(ours.value)
