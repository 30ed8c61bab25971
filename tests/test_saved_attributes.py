"""grad_fn._saved_<name> and grad_fn._raw_saved_<name>: torch's names for what a node saved,
and SavedTensor.register_hooks; every name, value and error compared with torch."""
import numpy as np
import pytest
import torch

import microtorch as mt

A = np.array([0.5, 1.5, 2.0])
B = np.array([1.25, -0.5, 3.0])

# (label, f(lib, a, b)) for the common ops
OPS = [
    ("mul", lambda T, a, b: a * b),
    ("div", lambda T, a, b: a / b),
    ("add", lambda T, a, b: a + b),
    ("add_alpha", lambda T, a, b: T.add(a, b, alpha=2)),
    ("sub_alpha", lambda T, a, b: T.sub(a, b, alpha=3)),
    ("pow_scalar", lambda T, a, b: a ** 2),
    ("pow_tensor", lambda T, a, b: a ** b),
    ("exp", lambda T, a, b: a.exp()),
    ("log", lambda T, a, b: a.log()),
    ("sin", lambda T, a, b: a.sin()),
    ("cos", lambda T, a, b: a.cos()),
    ("tanh", lambda T, a, b: a.tanh()),
    ("sigmoid", lambda T, a, b: a.sigmoid()),
    ("relu", lambda T, a, b: a.relu()),
    ("sqrt", lambda T, a, b: a.sqrt()),
    ("mm", lambda T, a, b: a.view(1, 3).mm(b.view(3, 1))),
    ("matmul_2d", lambda T, a, b: a.view(1, 3) @ b.view(3, 1)),
    ("dot", lambda T, a, b: a @ b),
    ("mv", lambda T, a, b: T.mv(a.view(1, 3), b)),
    ("sum", lambda T, a, b: a.sum()),
    ("sum_dim", lambda T, a, b: a.view(1, 3).sum(1, keepdim=True)),
    ("mean", lambda T, a, b: a.mean()),
    ("mean_dim", lambda T, a, b: a.view(1, 3).mean(1)),
]
# torch saves these too; microtorch's ops keep no field for them (strides, mm's sizes, the dim of
# sum/mean as given: torch shows sum(-1)'s as 2**64 - 1, numel for mean over a dim)
NOT_KEPT = {"_saved_self_sym_strides", "_saved_mat2_sym_strides", "_saved_mat2_sym_sizes", "_saved_dim"}
NOT_KEPT_BY = {"MmBackward0": {"_saved_self_sym_sizes"}, "MeanBackward1": {"_saved_self_sym_numel"}}


def _pair(T, f):
    a = T.tensor(A, requires_grad=True)
    b = T.tensor(B, requires_grad=True)
    return a, b, f(T, a, b)


def _names(node):
    return {n for n in dir(node) if n.startswith("_saved_") or n.startswith("_raw_saved_")}


def _value(x):
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


@pytest.mark.parametrize("label,f", OPS, ids=[o[0] for o in OPS])
def test_saved_names_and_values_match_torch(label, f):
    ma, mb, mout = _pair(mt, f)
    ta, tb, tout = _pair(torch, f)
    tnode = tout.grad_fn
    checked = 0
    for name in sorted(_names(tnode) - NOT_KEPT - NOT_KEPT_BY.get(tnode.name(), set())):
        if name.startswith("_raw_saved_") and name[4:] in NOT_KEPT:
            continue
        mine, theirs = getattr(mout.grad_fn, name), getattr(tnode, name)
        if name.startswith("_raw_saved_"):
            assert type(mine).__name__ == "SavedTensor"
            continue
        if isinstance(theirs, torch.Tensor):
            np.testing.assert_allclose(_value(mine), _value(theirs), rtol=1e-12)
            if theirs is ta:
                assert mine is ma
            if theirs is tb:
                assert mine is mb
        else:
            assert tuple(np.atleast_1d(mine)) == tuple(np.atleast_1d(theirs)), name
        checked += 1
    assert checked or label == "add"  # add without alpha: torch saves alpha=1
    with pytest.raises(AttributeError):
        mout.grad_fn._saved_not_a_name


def test_add_saves_alpha_one_like_torch():
    assert mt.add(mt.ones(2, requires_grad=True), 1.0).grad_fn._saved_alpha == 1 == \
        torch.add(torch.ones(2, requires_grad=True), 1.0).grad_fn._saved_alpha


def test_saved_result_is_the_output_value():
    for T in (mt, torch):
        a = T.tensor(A, requires_grad=True)
        out = a.exp()
        np.testing.assert_allclose(out.grad_fn._saved_result.detach().numpy(), np.exp(A))
        assert out.grad_fn._saved_result.grad_fn is out.grad_fn or T is torch


def test_mul_does_not_save_what_no_gradient_needs():
    for T in (mt, torch):
        x = T.tensor(A, requires_grad=True)
        y = x * T.tensor(B)
        assert y.grad_fn._saved_self is None and y.grad_fn._saved_other is not None


def test_after_backward_saved_tensors_raise_torchs_error_and_values_stay():
    for T in (mt, torch):
        a, b, out = _pair(T, lambda T, a, b: a ** 2 * b)
        out.sum().backward()
        node = out.grad_fn
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            node._saved_self
        assert node.next_functions[0][0]._saved_exponent == 2  # a non-tensor value stays
        raw = node._raw_saved_self                          # and so does the SavedTensor object
        with pytest.raises(RuntimeError, match="Calling register_hooks on a saved tensor after it has been freed"):
            raw.register_hooks(lambda x: x, lambda x: x)


def test_register_hooks_packs_now_and_unpacks_in_backward():
    for T in (mt, torch):
        a, b, out = _pair(T, lambda T, a, b: a * b)
        calls = []
        out.grad_fn._raw_saved_self.register_hooks(lambda x: calls.append("pack") or x,
                                                   lambda x: calls.append("unpack") or x * 10)
        assert calls == ["pack"]
        out.sum().backward()
        assert calls == ["pack", "unpack"]
        np.testing.assert_allclose(b.grad.numpy(), A * 10)   # d(a*b)/db = a, read through the hook
        np.testing.assert_allclose(a.grad.numpy(), B)


def test_register_hooks_errors_match_torch():
    for T in (mt, torch):
        a, b, out = _pair(T, lambda T, a, b: a * b)
        raw = out.grad_fn._raw_saved_self
        with pytest.raises(TypeError):
            raw.register_hooks(lambda x: x, 5)
        raw.register_hooks(lambda x: x, lambda x: x)
        with pytest.raises(RuntimeError, match="whose hooks have already been set"):
            raw.register_hooks(lambda x: x, lambda x: x)
        c, d, out2 = _pair(T, lambda T, a, b: a * b)
        out2.grad_fn._raw_saved_self.register_hooks(lambda x: 1, lambda x: 2)
        with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
            out2.sum().backward()


def test_hooked_saved_tensor_skips_the_version_check_as_torch():
    for T in (mt, torch):
        a = T.tensor(A, requires_grad=True)
        y = a.clone()
        out = y * T.tensor(B, requires_grad=True)
        out.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        with T.no_grad():
            y.add_(1)
        out.sum().backward()   # no version error: the hooks own the saved value


NUMBER_OPS = [
    ("mul_int", lambda a: a * 2), ("rmul_int", lambda a: 2 * a), ("mul_float", lambda a: a * 2.5),
    ("method_mul", lambda a: a.mul(3)), ("div_int", lambda a: a / 2), ("rdiv_int", lambda a: 2 / a),
    ("div_float", lambda a: a / 0.25),
]


@pytest.mark.parametrize("label,f", NUMBER_OPS, ids=[o[0] for o in NUMBER_OPS])
def test_a_number_is_saved_as_torchs_wrapped_number(label, f):
    """t * 2 saves 2 as a 0-d tensor of the number's own dtype (int64 for an int, float64 for a float)
    and no self; the number is freed with the node's saved tensors."""
    out = {}
    for T in (torch, mt):
        a = T.tensor(A, requires_grad=True)
        y = f(a)
        node = y.grad_fn
        other = node._saved_other
        before = (node.name(), node._saved_self, other.detach().numpy().item(), str(other.dtype).split(".")[-1])
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            node._saved_other
        out[T.__name__] = before
    assert out["microtorch"] == out["torch"]


def _outcome(node, name):
    """What reading node.<name> gives: ('none',), ('value', array), ('raises', type), or for a raw
    SavedTensor what its register_hooks does."""
    try:
        value = getattr(node, name)
    except Exception as e:  # noqa: BLE001 (the exception type is what is compared)
        return ("raises", type(e).__name__)
    if value is None:
        return ("none",)
    if name.startswith("_raw_saved_"):
        try:
            value.register_hooks(lambda x: x, lambda x: x)
        except RuntimeError as e:
            return ("raw", str(e).split(" (")[0][:60])
        return ("raw", "hooks set")
    return ("value", tuple(np.round(np.atleast_1d(_value(value)), 12).tolist()))


@pytest.mark.parametrize("label,f", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("which", ["a", "b"])
def test_one_input_requiring_grad_before_and_after_backward_like_torch(label, f, which):
    """Only one input requires grad, so the node leaves a tensor unsaved: torch reads it as None before
    and after backward (the saved ones raise once freed), and its raw SavedTensor refuses hooks."""
    outcomes = []
    for T in (mt, torch):
        a = T.tensor(A, requires_grad=which == "a")
        b = T.tensor(B, requires_grad=which == "b")
        out = f(T, a, b)
        if out.grad_fn is None:
            outcomes.append(None)
            continue
        node = out.grad_fn
        names = sorted(n for n in _names(node) if n.split("saved_", 1)[1] in ("self", "other", "result", "mat2",
                                                                               "vec", "tensor"))
        before = [(n, _outcome(node, n)) for n in names if not n.startswith("_raw")]
        out.sum().backward()
        after = [(n, _outcome(node, n)) for n in names]
        outcomes.append((node.name(), before, after))
    assert outcomes[0] == outcomes[1]
