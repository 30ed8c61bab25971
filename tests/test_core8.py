"""Calls checked beside torch 2.13 in the seventh round: a dtype is keyword-only in torch's reductions and scans
(`x.sum(0, False, torch.float64)` is a TypeError there), while the keyword forms and numpy's names still work."""
import pytest
import torch

import microtorch as mt

POSITIONAL_DTYPE = [
    ("sum method", lambda lib, x: x.sum(0, False, lib.float64)),
    ("mean method", lambda lib, x: x.mean(0, False, lib.float64)),
    ("cumsum method", lambda lib, x: x.cumsum(0, lib.float64)),
    ("cumsum function", lambda lib, x: lib.cumsum(x, 0, lib.float64)),
    ("sum function", lambda lib, x: lib.sum(x, 0, False, lib.float64)),
]


@pytest.mark.parametrize("name,call", POSITIONAL_DTYPE, ids=[n for n, _ in POSITIONAL_DTYPE])
def test_a_positional_dtype_is_refused_as_torch_refuses_it(name, call):
    with pytest.raises(TypeError):
        call(torch, torch.ones(3))
    with pytest.raises(TypeError, match=name.split()[0]):
        call(mt, mt.ones(3))


KEYWORD_FORMS = [
    lambda lib, x: x.sum(0, False, dtype=lib.float64),
    lambda lib, x: x.sum(dim=0, keepdim=True),
    lambda lib, x: x.mean(dtype=lib.float64),
    lambda lib, x: x.mean(0, True),
    lambda lib, x: x.cumsum(0, dtype=lib.float64),
    lambda lib, x: lib.cumsum(x, dim=0, dtype=lib.float64),
]


@pytest.mark.parametrize("call", KEYWORD_FORMS)
def test_the_keyword_forms_give_torch_values_dtypes_and_nodes(call):
    t = call(torch, torch.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True))
    m = call(mt, mt.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True))
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert m.tolist() == t.tolist()
    assert m.grad_fn.name() == t.grad_fn.name()


def test_numpy_names_still_reach_sum_and_mean():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.sum(axis=0, keepdims=True).tolist() == [[4.0, 6.0]]
    assert x.mean(axis=1).tolist() == [1.5, 3.5]


KEYWORD_ONLY = [  # (torch refuses each call with a TypeError; the keyword form works in both)
    (lambda lib, x: x.add(x, 2), lambda lib, x: x.add(x, alpha=2)),
    (lambda lib, x: x.sub(x, 2), lambda lib, x: x.sub(x, alpha=2)),
    (lambda lib, x: x.subtract(x, 2), lambda lib, x: x.subtract(x, alpha=2)),
    (lambda lib, x: x.div(x, "floor"), lambda lib, x: x.div(x, rounding_mode="floor")),
    (lambda lib, x: x.divide(x, "trunc"), lambda lib, x: x.divide(x, rounding_mode="trunc")),
    (lambda lib, x: x.new_full((2,), 1.5, lib.float64), lambda lib, x: x.new_full((2,), 1.5, dtype=lib.float64)),
    (lambda lib, x: x.new_tensor([1.5], lib.float64), lambda lib, x: x.new_tensor([1.5], dtype=lib.float64)),
    (lambda lib, x: x.detach().numpy(True), lambda lib, x: lib.tensor(x.detach().numpy(force=True))),
    (lambda lib, x: lib.argsort(x, 0, True, True), lambda lib, x: lib.argsort(x, stable=True, dim=0, descending=True)),
    (lambda lib, x: lib.celu(x, 1.0, True), lambda lib, x: lib.celu(x, alpha=2.0)),
    (lambda lib, x: lib.selu(x, inplace=True), lambda lib, x: lib.selu(x)),
    (lambda lib, x: lib.threshold(x, 0.5, 2.0, inplace=False), lambda lib, x: lib.threshold(x, 0.5, value=2.0)),
]


@pytest.mark.parametrize("wrong,right", KEYWORD_ONLY)
def test_keyword_only_arguments_are_keyword_only_as_in_torch(wrong, right):
    data = [[0.25, -1.5], [3.0, 0.75]]
    for lib in (torch, mt):
        with pytest.raises(TypeError) as e:
            wrong(lib, lib.tensor(data, requires_grad=True))
        if lib is mt:  # Python's message, in the op's name (not a lambda's or a wrapper's)
            assert "lambda" not in str(e.value) and "<" not in str(e.value)
    t, m = right(torch, torch.tensor(data, requires_grad=True)), right(mt, mt.tensor(data, requires_grad=True))
    assert m.tolist() == t.tolist() and str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def _torch_overloads():
    """{(where, name): the most positional arguments any overload of torch's stub takes (None: *args)}."""
    import ast
    from pathlib import Path
    stubs = Path(torch.__file__).parent / "_C"
    tree = ast.parse((stubs / "__init__.pyi").read_text())
    tensor_base = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    found = {}
    for where, body in (("Tensor", tensor_base), ("torch", ast.parse((stubs / "_VariableFunctions.pyi").read_text()).body)):
        for node in body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                args = node.args
                n = None if args.vararg else len(args.posonlyargs + args.args) - (where == "Tensor")
                old = found.get((where, node.name), 0)
                found[(where, node.name)] = None if None in (n, old) else max(n, old)
    return found


def test_no_op_takes_more_positional_arguments_than_torch_does():
    import inspect
    extra = []
    for (where, name), most in _torch_overloads().items():
        ours = getattr(mt.Tensor if where == "Tensor" else mt, name, None)
        if most is None or ours is None:
            continue
        try:
            params = inspect.signature(inspect.unwrap(ours)).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            continue
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) - (where == "Tensor")
        if n > most:
            extra.append(f"{where}.{name}: {n} positional, torch {most}")
    assert not extra, extra


DEVICE_CALLS = [
    lambda lib: str(lib.device("cpu:0")), lambda lib: repr(lib.device("cpu:0")), lambda lib: repr(lib.device("cpu", 0)),
    lambda lib: lib.device("cpu:0").index, lambda lib: lib.device("cpu").index, lambda lib: lib.device("cpu:0").type,
    lambda lib: lib.device("cpu:0") == lib.device("cpu"), lambda lib: lib.device("cpu") == lib.device("cpu"),
    lambda lib: lib.device("cpu") == "cpu", lambda lib: str(lib.tensor([1.0], device="cpu:0").device),
    lambda lib: str(lib.zeros(2, device="cpu:0").device), lambda lib: str(lib.ones(2).to("cpu:0").device),
    lambda lib: lib.zeros(2, device=lib.device("cpu:0")).is_cpu, lambda lib: str(lib.nn.Linear(2, 2).to("cpu:0").weight.device),
    lambda lib: str(lib.zeros(2, device="meta:0").device),
]


@pytest.mark.parametrize("call", DEVICE_CALLS)
def test_the_cpu_with_an_index_is_the_cpu_as_in_torch(call):
    assert call(mt) == call(torch)


@pytest.mark.parametrize("text", ["cpu:-1", "cpu:x", "cpu:"])
def test_a_malformed_device_string_is_torchs_error(text):
    with pytest.raises(RuntimeError, match="Invalid device string"):
        torch.device(text)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        mt.device(text)


def test_an_index_given_twice_is_refused_as_in_torch():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="index was passed explicitly"):
            lib.device("cpu:0", 1)


META_CALLS = [lambda lib, m: m.to(lib.float64), lambda lib, m: m.double(), lambda lib, m: m.half(),
              lambda lib, m: m * 2.0, lambda lib, m: m + m, lambda lib, m: m @ m.t(), lambda lib, m: m.sum(),
              lambda lib, m: m.t(), lambda lib, m: m.reshape(6), lambda lib, m: m.clone(),
              lambda lib, m: lib.empty(2, device="meta").to(lib.int64)]


@pytest.mark.parametrize("call", META_CALLS)
def test_a_meta_tensor_converted_or_multiplied_stays_on_meta(call):
    t, m = call(torch, torch.empty(2, 3, device="meta")), call(mt, mt.empty(2, 3, device="meta"))
    assert (str(m.device), tuple(m.shape), str(m.dtype).split(".")[-1]) == \
        (str(t.device), tuple(t.shape), str(t.dtype).split(".")[-1])


NUMBER_FIRST = ["x.add_(-0.1, g)", "torch.add(x, 2, 3)", "x.add(-0.1, g)", "torch.add(x, -0.1, g)", "x.sub_(0.1, g)", "x.sub(0.25, other=g)",
                "torch.sub(x, 0.1, g)", "x.addcmul_(0.5, g, g)", "x.addcmul(0.5, g, g)", "torch.addcmul(x, 0.5, g, g)",
                "x.addcdiv_(0.5, g, g)", "x.addcdiv(2, g, g)", "torch.addcdiv(x, 0.5, g, g)", "x.add_(2, g)"]
_RUN_ONE = """
import sys, warnings, json
import {lib} as torch
out = []
for call in json.loads(sys.argv[1]):
    x, g = torch.tensor([1.0, -2.5, 3.0]), torch.tensor([0.5, 0.25, -4.0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = eval(call)
    out.append([r.tolist(), x.tolist(), [str(m.message).split(" (Triggered internally")[0] for m in w]])
print(json.dumps(out))
"""


def _number_first_outcomes(lib):
    """Each call's result, its tensor afterwards and its warnings, in a fresh process (torch warns once per process)."""
    import json
    import subprocess
    import sys
    calls = NUMBER_FIRST + NUMBER_FIRST[:2]  # (the repeats: once per process, no second warning)
    done = subprocess.run([sys.executable, "-c", _RUN_ONE.format(lib=lib), json.dumps(calls)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def test_deprecated_number_first_overloads_run_and_warn_once_as_in_torch():
    assert _number_first_outcomes("microtorch") == _number_first_outcomes("torch")


def test_a_number_first_call_records_the_graph_of_the_keyword_call():
    import warnings
    for lib in (torch, mt):
        x, g = lib.tensor([1.0, -2.5], requires_grad=True), lib.tensor([0.5, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.addcmul(x, 0.5, g, g)
        y.sum().backward()
        assert y.grad_fn.name() == "AddcmulBackward0"
        assert g.grad.tolist() == [0.5, 3.0] and x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("call", ["x.add(g, -0.1)", "torch.addcmul(x, 0.5, g, 2.0)", "x.addcdiv_(0.5, 2.0, g)"])
def test_the_number_first_order_needs_tensors_after_the_number(call):
    for lib in (torch, mt):
        x, g = lib.ones(2), lib.ones(2)
        with pytest.raises(TypeError):
            eval(call, {"torch": lib, "x": x, "g": g})


def _layout_env(lib):
    return {"torch": lib, "x": lib.ones(2, 3, 4, 5, requires_grad=True), "cl": lib.channels_last,
            "xt": lib.ones(3, 4).t(), "y": lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
            "z": lib.ones(3, 4)[:, ::2], "col": lib.ones(2, 1, 3).transpose(0, 2)}


def _layout(call, lib):
    """(strides, whether the result is the input x or y itself, grad_fn name), or the exception type."""
    env = _layout_env(lib)
    try:
        r = eval(call, env)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__
    if not hasattr(r, "stride"):
        return r
    return r.stride(), r is env["x"] or r is env["y"], r.grad_fn.name() if r.grad_fn is not None else None


LAYOUT_CALLS = [
    "x.contiguous(memory_format=cl)", "x.contiguous(memory_format=cl).is_contiguous()",
    "x.contiguous(memory_format=cl).is_contiguous(memory_format=cl)", "x.is_contiguous(memory_format=cl)",
    "x.is_contiguous(memory_format=torch.preserve_format)", "xt.is_contiguous(memory_format=torch.preserve_format)",
    "torch.ones(3, 4).is_contiguous(memory_format=cl)", "torch.ones(3, 4).contiguous(memory_format=cl)",
    "x.to(memory_format=cl)", "x.to(torch.float64, memory_format=cl)", "x.to(torch.float32, memory_format=torch.contiguous_format)",
    "xt.to(memory_format=torch.contiguous_format)", "xt.to(torch.float64)", "y.contiguous()", "y.contiguous(memory_format=cl)",
    "y * 2", "y.to(memory_format=cl)", "y.to(memory_format=torch.contiguous_format)", "y.clone()",
    "torch.ones(2, 1, 4, 5).contiguous(memory_format=cl)", "x.contiguous(cl)", "x.is_contiguous(cl)",
    "torch.ones(2, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)",
    "torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)",
    "torch.zeros_like(xt)", "torch.ones_like(xt)", "torch.empty_like(xt)", "torch.full_like(xt, 2.0)", "torch.rand_like(xt)",
    "torch.randn_like(xt)", "torch.randint_like(xt, 5)", "torch.zeros_like(xt, memory_format=torch.contiguous_format)",
    "torch.zeros_like(y)", "torch.zeros_like(z)", "torch.zeros_like(col)", "torch.zeros_like(xt, dtype=torch.float64)",
    "torch.empty(2, 3, 4, 5, memory_format=cl)", "torch.empty(3, 4, memory_format=cl)",
    "torch.zeros_like(torch.ones(3, 4), memory_format=cl)", "torch.empty(2, 3, memory_format=torch.preserve_format)",
    "torch.empty_like(y).is_contiguous(memory_format=cl)", "torch.zeros_like(xt).t().is_contiguous()",
]


@pytest.mark.parametrize("call", LAYOUT_CALLS)
def test_memory_formats_lay_out_as_torch(call):
    assert _layout(call, mt) == _layout(call, torch)


def test_the_gradient_through_a_channels_last_copy_is_torchs():
    grads = []
    for lib in (torch, mt):
        x = lib.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
        (x.contiguous(memory_format=lib.channels_last) * lib.arange(120.0).reshape(2, 3, 4, 5)).sum().backward()
        grads.append((x.grad.stride(), x.grad.tolist()))
    assert grads[0] == grads[1]


SUBTRACT_CALLS = ["y.subtract(3, 4)", "y.subtract(y, 4)", "y.subtract(3, 4, alpha=2)", "y.subtract(3.5, alpha=2)",
                  "torch.ones(2).subtract_(3, 4)", "torch.ones(2).subtract_(torch.ones(2), 4)", "y.subtract(y)",
                  "y.subtract(0, torch.tensor([1, 2]))", "y.subtract(1, torch.tensor(2.0))", "y.subtract(1, 'x')"]


@pytest.mark.parametrize("call", SUBTRACT_CALLS)
def test_subtract_takes_alpha_by_position_only_after_a_number(call):
    """torch's Scalar overload subtract(Scalar other, Scalar alpha=1); with a tensor, alpha is keyword-only."""
    def run(lib):
        try:
            out = eval(call, {"torch": lib, "y": lib.tensor(2.0, requires_grad=True)})
        except TypeError:
            return "TypeError"
        return out.tolist(), out.grad_fn.name() if out.grad_fn is not None else None
    assert run(mt) == run(torch)


@pytest.mark.parametrize("out_dtype,grad_dtype", [("float64", "float32"), ("float32", "float64"), ("float32", "int64"),
                                                  ("float32", "float16"), ("float64", "bool")])
def test_a_gradient_of_another_dtype_is_cast_before_backward_starts(out_dtype, grad_dtype):
    """torch casts grad_outputs to the output's dtype first: 1/3 in float32 seeds a float64 mean as float64(1/3f)."""
    results = []
    for lib in (torch, mt):
        x = lib.arange(12.0, dtype=getattr(lib, out_dtype), requires_grad=True)
        seed = lib.tensor(1 / 3 if grad_dtype.startswith("float") else 2).to(getattr(lib, grad_dtype))
        g, = lib.autograd.grad((x * x).mean(), x, grad_outputs=seed)
        x.grad = None
        (x * x).mean().backward(seed)
        results.append((str(g.dtype).split(".")[-1], g.tolist(), x.grad.tolist()))
    assert results[0] == results[1]


def test_an_in_place_op_on_an_empty_expansion_of_a_0d_tensor_does_nothing_as_in_torch():
    for lib in (torch, mt):
        base = lib.tensor(1.5)
        out = base.expand(0).add_(1)
        assert tuple(out.shape) == (0,) and base.item() == 1.5


NUMPY_BOOL_NUMBERS = ["torch.add(x, y, alpha=np.bool_(True))", "torch.sub(x, y, alpha=np.bool_(False))",
                      "torch.add(b, b, alpha=np.bool_(True))", "torch.add(i, 1, alpha=np.bool_(True))",
                      "x.clone().add_(y, alpha=np.bool_(True))", "torch.nn.functional.leaky_relu(-x, np.bool_(True))",
                      "torch.nn.functional.hardtanh(x, np.bool_(False), 2.0)"]


@pytest.mark.parametrize("call", NUMPY_BOOL_NUMBERS)
def test_a_numpy_bool_is_read_as_a_float_number_as_torchs_parser_reads_it(call):
    import numpy as np

    def run(lib):
        env = {"torch": lib, "np": np, "x": lib.tensor([1.0, -2.0]), "y": lib.tensor([0.5, 4.0]),
               "b": lib.ones(2, dtype=lib.bool), "i": lib.ones(2, dtype=lib.int64)}
        try:
            out = eval(call, env)
        except RuntimeError:
            return "RuntimeError"
        return out.tolist(), str(out.dtype).split(".")[-1]
    assert run(mt) == run(torch)


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
def test_the_third_order_graph_of_tanh_and_sigmoid_is_torchs(op):
    from test_reduce_graphs import _names
    graphs = []
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2, 0.45], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(getattr(lib, op)(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, create_graph=True)
        graphs.append(_names(gg.grad_fn))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 5, 64, 4099])
def test_relu_keeps_negative_zero_and_nan_as_torch_on_every_path(dtype, n):
    """relu's forward is one np.maximum(0.0, x) where numpy gives its second operand on ties (checked at import),
    else np.maximum with a fix for -0.0: either way torch's signs, NaN and layouts, contiguous or strided."""
    import numpy as np
    base = np.resize(np.array([-0.0, 0.0, -1.5, 2.0, np.nan, -np.inf, np.inf, 3.0]), 2 * n)
    for make in (lambda lib: lib.tensor(base, dtype=getattr(lib, dtype))[::2],
                 lambda lib: lib.tensor(base[:n], dtype=getattr(lib, dtype))):
        t, m = make(torch).relu().numpy(), make(mt).relu().numpy()
        np.testing.assert_array_equal(m, t)
        assert (np.signbit(m) == np.signbit(t)).all()
