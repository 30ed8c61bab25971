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
