"""Errors teach: a bad input raises torch's exception type, and microtorch's message names
the op, the shapes involved, and a way out."""
import re

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import nn as mt_nn
import torch.nn.functional as torch_F

F = {mt: mt_nn, torch: torch_F}


def _freed(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    y.backward()


def _freed_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    m.autograd.grad(y, x)
    m.autograd.grad(y, x)


def _leaf_inplace(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.mul_(2)


def _grad_shape(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(m.ones(3))


# (id, fn(m), substrings microtorch's message must contain (case-insensitive regexes))
CASES = [
    # shape mismatches in broadcasting ops
    ("add_shapes", lambda m: m.ones(3) + m.ones(4), ["add", r"\[3\]", r"\[4\]", "broadcast"]),
    ("sub_shapes", lambda m: m.ones(2, 3) - m.ones(3, 2), ["sub", r"\[2, 3\]", r"\[3, 2\]"]),
    ("mul_shapes", lambda m: m.ones(2, 3, requires_grad=True) * m.ones(4, 1, 2), ["mul", r"\[2, 3\]"]),
    ("div_shapes", lambda m: m.ones(3) / m.ones(2), ["div", r"\[3\]", r"\[2\]"]),
    ("pow_shapes", lambda m: m.ones(3) ** m.ones(2), ["pow", r"\[3\]"]),
    ("maximum_shapes", lambda m: m.maximum(m.ones(3), m.ones(2)), ["maximum", r"\[3\]"]),
    ("where_shapes", lambda m: m.where(m.ones(3) > 0, m.ones(3), m.ones(2)), ["where", r"\[3\]", r"\[2\]"]),
    ("eq_shapes", lambda m: m.ones(3) == m.ones(2), [r"\[3\]", r"\[2\]"]),
    ("mse_shapes", lambda m: F[m].mse_loss(m.ones(3), m.ones(2)), ["mse_loss", r"\[3\]", r"\[2\]"]),
    ("cat_shapes", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]), ["Sizes of tensors must match", r"\[2, 4\]"]),
    ("stack_shapes", lambda m: m.stack([m.ones(2), m.ones(3)]), ["stack", r"\[2\]", r"\[3\]"]),
    ("view_shapes", lambda m: m.ones(2, 3).view(4), [r"shape '\[4\]' is invalid for input of size 6"]),
    ("reshape_shapes", lambda m: m.ones(2, 3).reshape(5, -1), [r"\[5, -1\]", "6"]),
    ("view_noncontig", lambda m: m.ones(2, 3).t().view(6), ["view", "reshape"]),
    ("expand_shapes", lambda m: m.ones(2, 3).expand(4, 3), ["expand", r"\[2, 3\]", r"\[4, 3\]"]),
    ("masked_fill_shapes", lambda m: m.ones(2, 3).masked_fill(m.ones(4) > 0, 0.0), ["masked_fill|mask", r"\[4\]"]),
    ("linear_shapes", lambda m: F[m].linear(m.ones(2, 3), m.ones(4, 5)), ["linear|mat1", "3", "5"]),
    # matmul
    ("matmul_2d", lambda m: m.ones(3, 4) @ m.ones(5, 6), ["matmul", "3x4", "5x6", "transpose|reshape"]),
    ("matmul_1d", lambda m: m.ones(3) @ m.ones(4), [r"3", r"4"]),
    ("matmul_batched", lambda m: m.ones(2, 3, 4) @ m.ones(2, 5, 6), ["matmul", "4", "5"]),
    ("matmul_batch_dims", lambda m: m.ones(2, 3, 4) @ m.ones(3, 4, 5), ["matmul", r"\[2\]", r"\[3\]", "broadcast"]),
    ("matmul_0d", lambda m: m.tensor(1.0) @ m.ones(3), ["matmul", "1D", "0D"]),
    ("matmul_dtypes", lambda m: m.ones(2, 2, requires_grad=True) @ m.ones(2, 2, dtype=m.float64),
     ["same dtype", "float32", "float64", r"\.float\(\)|\.double\(\)"]),
    ("mm_3d", lambda m: m.mm(m.ones(2, 3, 4), m.ones(4, 5)), ["mm", "matri"]),
    ("mm_shapes", lambda m: m.mm(m.ones(2, 3), m.ones(4, 5)), ["2x3", "4x5"]),
    ("bmm_batches", lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)), ["bmm", "2", "3"]),
    ("mv_shapes", lambda m: m.mv(m.ones(2, 3), m.ones(4)), ["3", "4"]),
    ("dot_shapes", lambda m: m.dot(m.ones(3), m.ones(4)), ["3", "4"]),
    # backward
    ("nonscalar_backward", lambda m: (m.ones(3, requires_grad=True) * 2).backward(),
     ["implicitly created only for scalar outputs", r"\[3\]", "gradient="]),
    ("nonscalar_grad", lambda m: m.autograd.grad(m.ones(2, requires_grad=True) * 2, []),
     ["implicitly created only for scalar outputs"]),
    ("freed_graph", _freed, ["Trying to backward through the graph a second time", "retain_graph=True"]),
    ("freed_graph_grad", _freed_grad, ["Trying to backward through the graph a second time", "retain_graph=True"]),
    ("no_grad_fn", lambda m: (m.ones(2) * 2).sum().backward(),
     ["does not require grad and does not have a grad_fn", "requires_grad"]),
    ("grad_shape", _grad_shape, ["Mismatch in shape", r"\[3\]", r"\[2\]"]),
    ("leaf_inplace", _leaf_inplace, ["leaf Variable that requires grad", "in-place", "no_grad"]),
    ("set_requires_grad_nonleaf", lambda m: setattr(m.ones(2, requires_grad=True) * 2, "requires_grad", False),
     ["only change requires_grad flags of leaf variables", "detach"]),
    # requires_grad on integers
    ("int_requires_grad", lambda m: m.tensor([1, 2]).requires_grad_(), ["floating point", "int64", r"float\(\)"]),
    ("int_requires_grad_ctor", lambda m: m.tensor([1, 2], requires_grad=True), ["floating point", "int64"]),
    ("int_zeros_requires_grad", lambda m: m.zeros(2, dtype=m.int64, requires_grad=True), ["floating point"]),
    ("bool_requires_grad", lambda m: m.tensor([True]).requires_grad_(), ["floating point", "bool"]),
    # indexing
    ("index_int", lambda m: m.ones(3, 4)[3], ["index 3 is out of bounds for dimension 0 with size 3",
                                               r"valid indices are -3\.\.2"]),
    ("index_int_dim1", lambda m: m.ones(3, 4)[0, -5], ["index -5 is out of bounds for dimension 1 with size 4"]),
    ("index_too_many", lambda m: m.ones(3)[0, 0], ["too many indices", "1"]),
    ("index_tensor", lambda m: m.ones(3, 4)[m.tensor([0, 5])], ["index 5 is out of bounds", "size 3"]),
    ("index_list", lambda m: m.ones(3, 4)[:, [1, 4]], ["index 4 is out of bounds", "size 4"]),
    ("index_float", lambda m: m.ones(3)[m.tensor([0.0])], ["tensors used as indices must be long"]),
    ("index_select", lambda m: m.ones(3, 4).index_select(0, m.tensor([3])), ["index_select|index out of range",
                                                                            "size 3|3"]),
    ("gather", lambda m: m.ones(3, 4).gather(1, m.tensor([[4]])), ["gather", "4", "size 4"]),
    ("select", lambda m: m.ones(3, 4).select(1, 7), ["select", "7"]),
    ("narrow", lambda m: m.ones(3, 4).narrow(1, 2, 5), ["narrow|start", "2", "5"]),
    ("dim_range", lambda m: m.ones(3, 4).sum(2), [r"Dimension out of range", r"\[-2, 1\]", "2"]),
    ("softmax_dim", lambda m: F[m].softmax(m.ones(3), dim=1), ["Dimension out of range"]),
    ("unsqueeze_dim", lambda m: m.ones(3).unsqueeze(3), ["Dimension out of range"]),
    ("nll_target", lambda m: F[m].nll_loss(m.ones(2, 3), m.tensor([0, 3])), ["Target 3 is out of bounds|3", "3"]),
    ("cross_entropy_target", lambda m: F[m].cross_entropy(m.ones(2, 3), m.tensor([0, 5])), ["5", "out of bounds"]),
    ("cross_entropy_batch", lambda m: F[m].cross_entropy(m.ones(2, 3), m.tensor([0, 1, 2])), ["batch_size", "2", "3"]),
    # conversions
    ("item_many", lambda m: m.ones(2).item(), ["2 elements cannot be converted to Scalar"]),
    ("bool_ambiguous", lambda m: bool(m.ones(2)), ["Boolean value of Tensor with more than one value is ambiguous"]),
    ("numpy_requires_grad", lambda m: m.ones(2, requires_grad=True).numpy(), [r"detach\(\)\.numpy\(\)"]),
    ("mean_int", lambda m: m.tensor([1, 2]).mean(), ["mean", "floating point", "Long|int64"]),
    ("neg_bool", lambda m: -m.tensor([True]), ["Negation", "logical_not"]),
    ("t_3d", lambda m: m.ones(2, 3, 4).t(), ["t\\(\\)|<= 2", "3|3D"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_error_type_like_torch_and_message_teaches(case):
    name, fn, needles = case
    with pytest.raises(Exception) as torch_err:
        fn(torch)
    with pytest.raises(Exception) as mt_err:
        fn(mt)
    assert type(mt_err.value) is type(torch_err.value) or \
        isinstance(mt_err.value, type(torch_err.value)), \
        f"{name}: microtorch raised {type(mt_err.value).__name__}, torch {type(torch_err.value).__name__}"
    msg = str(mt_err.value)
    for needle in needles:
        assert re.search(needle, msg, re.IGNORECASE), f"{name}: {needle!r} not in message: {msg}"
    # never a bare numpy error from deep inside
    assert "operands could not be broadcast together" not in msg
    assert "numpy" not in type(mt_err.value).__module__


def test_inplace_modification_of_a_saved_tensor_raises_like_torch():
    for m in (mt, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = (y * y).sum()
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()


def test_errors_leave_no_half_built_graph():
    x = mt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        x + mt.ones(4)
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
