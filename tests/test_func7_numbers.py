"""Python numbers in arithmetic beside torch 2.13: an int beyond 64 bits is torch's OverflowError out of place too
(t + 2**70), and the number torch wraps as a tensor keeps its own dtype in the saved values (mul(2, t)._saved_self
is int64's 2), with gradients and tangents unchanged."""
import pytest
import torch

import microtorch as mt

BIG = {
    "t + 2**70": lambda T, t: t + 2 ** 70, "t * 2**70": lambda T, t: t * 2 ** 70, "t - 2**70": lambda T, t: t - 2 ** 70,
    "t / 2**70": lambda T, t: t / 2 ** 70, "2**70 - t": lambda T, t: 2 ** 70 - t, "2**70 * t": lambda T, t: 2 ** 70 * t,
    "add(t, 2**70)": lambda T, t: T.add(t, 2 ** 70), "mul(t, 2**70)": lambda T, t: T.mul(t, 2 ** 70),
    "sub(t, 2**70)": lambda T, t: T.sub(t, 2 ** 70), "div(t, 2**70)": lambda T, t: T.div(t, 2 ** 70),
    "rsub(t, 2**70)": lambda T, t: T.rsub(t, 2 ** 70), "t.add(2**70)": lambda T, t: t.add(2 ** 70),
    "add(t, 1, alpha=2**70)": lambda T, t: T.add(t, 1, alpha=2 ** 70), "t + 2**64": lambda T, t: t + 2 ** 64,
    "t + (-2**63 - 1)": lambda T, t: t + (-2 ** 63 - 1), "float64 + 2**70": lambda T, t: t.double() + 2 ** 70,
    "complex + 2**70": lambda T, t: t.to(T.complex64) + 2 ** 70, "int64 + 2**70": lambda T, t: t.long() + 2 ** 70,
    "int64 / 2**70": lambda T, t: t.long() / 2 ** 70, "mul(2**70, t)": lambda T, t: T.mul(2 ** 70, t),
    "t + 2**63 (taken)": lambda T, t: t + 2 ** 63, "t * -2**63 (taken)": lambda T, t: t * -2 ** 63,
}


def _outcome(T, f):
    try:
        return "ok", f(T, T.ones(2)).tolist()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", list(BIG))
def test_an_int_beyond_64_bits_is_torchs_overflow_error_out_of_place(case):
    theirs, ours = _outcome(torch, BIG[case]), _outcome(mt, BIG[case])
    assert ours[0] == theirs[0], ours
    if theirs[0] != "ok":
        assert theirs[1] in ours[1] and ours[1].split("(")[0] in {"add", "sub", "mul", "div", "rsub"}, ours
    else:
        assert ours == theirs


SAVED = {
    "mul(2, t)": lambda T, t: T.mul(2, t), "mul(t, 2)": lambda T, t: T.mul(t, 2), "2 * t": lambda T, t: 2 * t,
    "mul(2.5, t)": lambda T, t: T.mul(2.5, t), "mul(True, t)": lambda T, t: T.mul(True, t),
    "mul(2j, t)": lambda T, t: T.mul(2j, t), "t * 2j": lambda T, t: t * 2j,
    "mul(2, t16)": lambda T, t: T.mul(2, t.half()), "div(2, t)": lambda T, t: T.div(2, t),
    "div(2.5, t)": lambda T, t: T.div(2.5, t), "div(t, 2j)": lambda T, t: T.div(t, 2j),
    "div(True, t)": lambda T, t: T.div(True, t), "div(2, t64)": lambda T, t: T.div(2, t.double()),
}


def _values(t):
    if t is None or getattr(t, "_is_zerotensor", lambda: False)():  # (torch's efficient zero tensor: no storage)
        return t if t is None else [0.0] * t.numel()
    return t.tolist()


def _saved(T, case):
    t = T.tensor([1.0, -2.0], requires_grad=True)
    y = SAVED[case](T, t)
    out = [y.grad_fn.name(), str(y.dtype).split(".")[-1]]
    for name in ("_saved_self", "_saved_other"):
        v = getattr(y.grad_fn, name)
        out.append(None if v is None else (str(v.dtype).split(".")[-1], tuple(v.shape), v.tolist()))
    (g,) = T.autograd.grad(y.abs().sum(), t, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), t, allow_unused=True)
    return out + [_values(g), _values(gg)]


@pytest.mark.parametrize("case", list(SAVED))
def test_a_wrapped_number_keeps_its_dtype_in_the_saved_values(case):
    assert _saved(mt, case) == _saved(torch, case)


@pytest.mark.parametrize("case", ["mul(2, t)", "div(2, t)", "mul(True, t)", "mul(2.5, t)"])
def test_the_wrapped_numbers_tangent_is_an_exact_zero_of_its_dtype(case):
    results = []
    for T in (torch, mt):
        x, v = T.tensor([1.0, -2.0], requires_grad=True), T.tensor([0.5, -0.0])
        with T.autograd.forward_ad.dual_level():
            t = T.autograd.forward_ad.unpack_dual(SAVED[case](T, T.autograd.forward_ad.make_dual(x, v))).tangent
        results.append((t.tolist(), str(t.dtype).split(".")[-1], t.grad_fn.name()))
    assert results[0] == results[1]
