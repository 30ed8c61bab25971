"""Small gaps between microtorch and torch 2.13 left from earlier rounds, each checked beside torch: legacy
Tensor.new, Tensor.tile's int forms, pow's result dtypes on integer and bool tensors, the node names of sort and
its relatives, bitwise operators under vmap, and the arguments torch refuses in triu_indices and new_zeros; then
(third session) modulo's dtypes, torch's own nodes for tril/triu, take, masked_select and outer, in-place casts,
the conversion of a number written into a tensor, sgn's and amax's edge cases, quantile's tangents with NaN, and
the argument checks of bernoulli_, bitwise ops, index_select, linspace and randint_like."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op


def _name(lib):
    return "torch" if lib is torch else "microtorch"


def _outcome(fn, lib):
    """(shape, dtype name, values) of fn(lib), or the type of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e)
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same_as_torch(fn):
    t, m = _outcome(fn, torch), _outcome(fn, mt)
    assert m == t, f"torch {t}, microtorch {m}"
    return t


def _close_to_torch(fn, rtol=1e-6):
    """as _same_as_torch, the values compared to rtol, NaN equal to NaN (each part of a complex number)"""
    t, m = _outcome(fn, torch), _outcome(fn, mt)
    if isinstance(t, type) or isinstance(m, type):
        assert m == t, f"torch {t}, microtorch {m}"
        return t
    assert m[:2] == t[:2], f"torch {t}, microtorch {m}"
    np.testing.assert_allclose(np.asarray(m[2], complex), np.asarray(t[2], complex), rtol=rtol, equal_nan=True)
    return t


# ---- 1. Tensor.new -----------------------------------------------------------------------------------------
NEW_CASES = {
    "nothing": lambda l: l.tensor([1.0, 2.0]).new(),
    "device only": lambda l: l.tensor([1.0, 2.0]).new(device="cpu"),
    "sizes": lambda l: l.tensor([1.0, 2.0]).new(2, 3).zero_(),
    "one size": lambda l: l.tensor([1, 2]).new(4).zero_(),
    "Size": lambda l: l.tensor([1.0]).new(l.Size([2, 3])).zero_(),
    "empty Size": lambda l: l.tensor([1.0]).new(l.Size([])).zero_(),
    "size=": lambda l: l.tensor([1.0]).new(size=(2,)).zero_(),
    "int tensor as a size": lambda l: l.tensor([1.0]).new(l.tensor(2), 3).zero_(),
    "list data": lambda l: l.tensor([1.0]).new([1, 2]),
    "tuple data": lambda l: l.tensor([1.0]).new((2, 3)),
    "empty tuple": lambda l: l.tensor([1.0]).new(()),
    "data in x's dtype": lambda l: l.tensor([1, 2]).new([1.5, 2.5]),
    "data=": lambda l: l.tensor([True]).new(data=[0, 2]),
    "a number": lambda l: l.tensor([1.0]).new(1.5),
    "None": lambda l: l.tensor([1.0]).new(None),
    "a bool": lambda l: l.tensor([1.0]).new(True),
    "a string": lambda l: l.tensor([1.0]).new("a"),
    "a float among sizes": lambda l: l.tensor([1.0]).new(2.5, 3),
    "negative size": lambda l: l.tensor([1.0]).new(2, -1),
    "size=int": lambda l: l.tensor([1.0]).new(size=5),
    "dtype=": lambda l: l.tensor([1.0]).new(dtype=l.int64),
    "tensor of another dtype": lambda l: l.tensor([1.0]).new(l.tensor([1, 2])),
    "complex with an int tensor": lambda l: l.tensor([1j]).new(l.tensor([1, 2])),
}


@pytest.mark.parametrize("case", NEW_CASES)
def test_new_as_torch(case):
    _same_as_torch(NEW_CASES[case])


def test_new_with_nothing_is_1d_empty():
    out = mt.ones(2, 3, dtype=mt.float64).new()
    assert out.shape == (0,) and out.dtype == mt.float64 and not out.requires_grad


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_new_of_a_tensor_aliases_it(lib):
    x, y = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0], requires_grad=True)
    out = x.new(y)
    assert out.requires_grad and out._base is y and out.grad_fn.name() == "AliasBackward0"
    (out * lib.tensor([2.0, 5.0])).sum().backward()
    assert y.grad.tolist() == [2.0, 5.0]
    with lib.no_grad():
        out[0] = 7.0
    assert y.tolist() == [7.0, 4.0] and y._version == out._version == 1


# ---- 2. Tensor.tile ------------------------------------------------------------------------------------------
TILE_CASES = {
    "one int": lambda l, x: x.tile(2),
    "ints": lambda l, x: x.tile(2, 3),
    "more ints than dims": lambda l, x: x.tile(1, 2, 3),
    "tuple": lambda l, x: x.tile((2, 3)),
    "list": lambda l, x: x.tile([3]),
    "dims=": lambda l, x: x.tile(dims=(2, 1)),
    "0-d int tensor": lambda l, x: x.tile(l.tensor(2), 3),
    "nothing to repeat": lambda l, x: x.tile(()),
}


@pytest.mark.parametrize("case", TILE_CASES)
def test_tile_method_as_torch(case):
    check_op(TILE_CASES[case], np.arange(6.0).reshape(2, 3), grad_fn="RepeatBackward0")


def test_tile_of_0d_and_1d():
    _same_as_torch(lambda l: l.tensor(1.5).tile(3))
    _same_as_torch(lambda l: l.tensor([1.0, 2.0]).tile(2, 2))


TILE_ERRORS = {
    "dims=int": lambda l: l.ones(2, 2).tile(dims=2),
    "a float": lambda l: l.ones(2, 2).tile(2.0),
    "nothing": lambda l: l.ones(2, 2).tile(),
    "negative": lambda l: l.ones(2, 2).tile(-1),
    "torch.tile with an int": lambda l: l.tile(l.ones(2, 2), 2),  # (only the method takes ints)
    "torch.tile with ints": lambda l: l.tile(l.ones(2, 2), 2, 3),
}


@pytest.mark.parametrize("case", TILE_ERRORS)
def test_tile_refuses_as_torch(case):
    assert isinstance(_same_as_torch(TILE_ERRORS[case]), type)
    with pytest.raises(Exception, match="tile"):
        TILE_ERRORS[case](mt)


# ---- 3. pow on integer and bool tensors ------------------------------------------------------------------------
BASES = {"bool": [True, False], "uint8": [2, 3], "int8": [2, -3], "int32": [0, 3], "int64": [1, -1],
         "float32": [2.0, 3.0], "float16": [2.0, 0.0]}
EXPONENTS = [2, 0, -1, 3, 2.0, 0.5, -2.5, 1j, True, False]
EXPONENT_TENSORS = {"bool": [True, False], "uint8": [2, 0], "int8": [2, -3], "int32": [-1, 3], "int64": [-2, 5],
                    "float32": [2.0, -0.5]}
def _typed(lib, dtype, values):
    return lib.tensor(values, dtype=getattr(lib, dtype))


def _pow_forms(base, exponent):
    return {
        "pow": lambda l: l.pow(_typed(l, base, BASES[base]), exponent),
        "**": lambda l: _typed(l, base, BASES[base]) ** exponent,
        "pow_": lambda l: _typed(l, base, BASES[base]).pow_(exponent),
        "0-d": lambda l: l.pow(_typed(l, base, BASES[base][0]), exponent),
        "rpow": lambda l: exponent ** _typed(l, base, BASES[base]),
    }


POW_SCALAR_CASES = [(b, e, form) for b in BASES for e in EXPONENTS for form in _pow_forms(b, e)]


@pytest.mark.parametrize("base,exponent,form", POW_SCALAR_CASES)
def test_pow_scalar_exponent_dtypes_as_torch(base, exponent, form):
    t, m = (_outcome(_pow_forms(base, exponent)[form], lib) for lib in (torch, mt))
    assert (m if isinstance(m, type) else m[:2]) == (t if isinstance(t, type) else t[:2])
    if not isinstance(t, type):
        np.testing.assert_allclose(np.asarray(m[2], dtype=complex), np.asarray(t[2], dtype=complex), rtol=1e-6)


@pytest.mark.parametrize("base,exponent,form", [(b, e, f) for b in BASES for e in EXPONENT_TENSORS
                                                for f in ("pow", "pow_")])
def test_pow_tensor_exponent_dtypes_as_torch(base, exponent, form):
    def run(lib):
        x, y = _typed(lib, base, BASES[base]), _typed(lib, exponent, EXPONENT_TENSORS[exponent])
        return x.pow(y) if form == "pow" else x.pow_(y)
    t, m = _outcome(run, torch), _outcome(run, mt)
    assert (m if isinstance(m, type) else m[:2]) == (t if isinstance(t, type) else t[:2])
    if not isinstance(t, type):
        np.testing.assert_allclose(m[2], t[2], rtol=1e-6)


def test_bool_squared_is_int64():
    x = mt.tensor([True, False])
    assert (x ** 2).dtype == mt.int64 and x.pow(2).tolist() == [1, 0]
    with pytest.raises(RuntimeError, match="pow_"):
        x.pow_(2)  # the int64 result cannot be written into a bool tensor


def test_integer_power_with_negative_exponents_as_torch():
    """torch's integer kernel: 0 for |base| > 1 (and for 0), 1 for base 1, +-1 for base -1 by parity."""
    base, exponent = [-2, -1, 0, 1, 2, -1, 3], [-1, -3, -2, -5, -1, -4, 0]
    for lib in (torch, mt):
        out = lib.tensor(base).pow(lib.tensor(exponent))
        assert out.tolist() == [0, -1, 0, 1, 0, 1, 1], _name(lib)
    _same_as_torch(lambda l: (-1) ** l.tensor([2, 3], dtype=l.uint8))  # -1 wraps to 255 in uint8
    _same_as_torch(lambda l: 2 ** l.tensor([[3, -1], [0, -2]]))


def test_integer_power_that_does_not_broadcast_is_torchs_error():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="size of tensor a"):
            lib.tensor([[1, 2, 3], [4, 5, 6]]) ** lib.tensor([1, 2])


X_POW = np.array([-1.5, -1.0, 0.0, 0.5, 2.0, 3.0])


@pytest.mark.parametrize("base", [2.5, 1.0, 0.0, -2.0])
def test_number_to_a_tensor_power_as_torch(base):
    """base ** x records PowBackward2 for every base (torch's pow(Scalar, Tensor)); at 0 the gradient is 0 where
    x >= 0 and out * log 0 elsewhere, below 0 it is nan (log of a negative number)."""
    check_op(lambda l, x: base ** x, X_POW, grad_fn="PowBackward2", vmap=False)


def test_complex_number_to_a_tensor_power_as_torch():
    check_op(lambda l, x: (1.5j ** x).real, X_POW, vmap=False)
    check_op(lambda l, x: (1.5j ** x).imag, X_POW, vmap=False)
    for lib in (torch, mt):
        assert (1j ** lib.tensor([1, 2])).dtype == lib.complex64
        assert (1.5j ** lib.tensor([1.0], requires_grad=True)).grad_fn.name() == "PowBackward2"


# ---- 4. the nodes of sort and its relatives ---------------------------------------------------------------
M = np.array([[3.0, 1.0, 2.0, 0.5], [0.0, 5.0, 4.0, -1.0], [2.0, 2.5, -3.0, 7.0]])
SORT_SPECS = {  # (f(lib, x), input, torch's node)
    "sort": (lambda l, x: l.sort(x).values, M, "SortBackward0"),
    "sort method dim 0": (lambda l, x: x.sort(0).values, M, "SortBackward0"),
    "sort descending": (lambda l, x: x.sort(descending=True).values, M, "SortBackward0"),
    "sort stable=True": (lambda l, x: l.sort(x, stable=True).values, M, "SortBackward1"),
    "sort stable=False": (lambda l, x: x.sort(dim=0, descending=True, stable=False).values, M, "SortBackward1"),
    "sort 1-d": (lambda l, x: l.sort(x, descending=True).values, M[1], "SortBackward0"),
    "sort 0-d": (lambda l, x: l.sort(x).values, M[0, 0], "SortBackward0"),
    "msort": (lambda l, x: l.msort(x), M, "SortBackward0"),
    "msort method": (lambda l, x: x.msort(), M, "SortBackward0"),
    "topk": (lambda l, x: l.topk(x, 2).values, M, "TopkBackward0"),
    "topk smallest dim 0": (lambda l, x: x.topk(2, dim=0, largest=False).values, M, "TopkBackward0"),
    "topk 0-d": (lambda l, x: x.topk(1).values, M[0, 0], "TopkBackward0"),
    "kthvalue 0-d": (lambda l, x: x.kthvalue(1).values, M[0, 0], "KthvalueBackward0"),
    "median 0-d": (lambda l, x: x.median(0).values, M[0, 0], "MedianBackward1"),
    "mode 0-d": (lambda l, x: l.mode(x, keepdim=True).values, M[0, 0], "ModeBackward0"),
    "nanmedian dim": (lambda l, x: x.nanmedian(1).values, M, "NanmedianBackward1"),
    "nanmedian 0-d": (lambda l, x: x.nanmedian(-1).values, M[0, 0], "NanmedianBackward1"),
}


@pytest.mark.parametrize("case", SORT_SPECS)
def test_sort_family_nodes_and_gradients_as_torch(case):
    f, x, node = SORT_SPECS[case]
    check_op(f, x, grad_fn=node)


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_sort_node_is_the_only_one(lib):
    """sort records one node of its own, straight onto the leaf, as torch (no Gather, no View around it)."""
    for x in (lib.tensor(M, requires_grad=True), lib.tensor(1.5, requires_grad=True)):
        for out in (lib.sort(x).values, x.topk(1).values, x.kthvalue(1).values, x.median(-1).values):
            assert type(out.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


ORDER_CASES = {
    "uint8 descending": lambda l: l.sort(l.tensor([3, 0, 200], dtype=l.uint8), descending=True),
    "bool descending": lambda l: l.sort(l.tensor([True, False, True]), descending=True),
    "NaN descending": lambda l: l.sort(l.tensor([1.0, float("nan"), 3.0, 1.0]), descending=True, stable=True),
    "NaN ascending": lambda l: l.sort(l.tensor([1.0, float("nan"), 3.0, 1.0]), stable=True),
    "ties descending": lambda l: l.sort(l.tensor([[2, 1, 2, 2], [0, 0, 1, 0]]), dim=1, descending=True, stable=True),
    "topk NaN": lambda l: l.topk(l.tensor([1.0, float("nan"), 3.0, 1.0]), 2),
    "topk 0-d k=0": lambda l: l.topk(l.tensor(2.5), 0),
    "argsort descending": lambda l: l.argsort(l.tensor([3, 0, 200], dtype=l.uint8), descending=True),
    "sort 0-d": lambda l: l.tensor(2.5).sort(0),
}


@pytest.mark.parametrize("case", ORDER_CASES)
def test_sort_order_as_torch(case):
    for lib in (torch, mt):
        out = ORDER_CASES[case](lib)
        parts = out if isinstance(out, tuple) else (out,)
        if lib is torch:
            expected = [(tuple(p.shape), str(p.dtype)[6:], p.tolist()) for p in parts]
        else:
            got = [(tuple(p.shape), str(p.dtype)[11:], p.tolist()) for p in parts]
    np.testing.assert_equal(got, expected)


@pytest.mark.parametrize("call", [lambda l, x: l.sort(x, dim=1), lambda l, x: x.topk(1, dim=1),
                                  lambda l, x: x.topk(2), lambda l, x: l.sort(x.to(l.complex64))])
def test_sort_family_refuses_as_torch(call):
    for x_t, x_m in [(torch.tensor(1.0), mt.tensor(1.0))]:
        with pytest.raises(Exception) as t:
            call(torch, x_t)
        with pytest.raises(t.type):
            call(mt, x_m)


# ---- 5. bitwise operators: torch's dtypes, in place, and under vmap ---------------------------------------------
BIT_DTYPES = {"bool": [True, False, True], "uint8": [3, 250, 0], "int8": [3, -7, 5], "int64": [12, -3, 7],
              "float32": [1.0, 2.0, 0.5]}
BIT_OTHERS = [("tensor", d) for d in BIT_DTYPES] + [("number", v) for v in (1, -1, True, 300, 1.5)]
BIT_OPERATORS = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
                 "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b}
IN_PLACE = {"&=": "__iand__", "|=": "__ior__", "^=": "__ixor__", "<<=": "__ilshift__", ">>=": "__irshift__"}


def _operand(lib, other):
    kind, v = other
    return _typed(lib, v, BIT_DTYPES[v]) if kind == "tensor" else v


@pytest.mark.parametrize("op", BIT_OPERATORS)
@pytest.mark.parametrize("dtype", BIT_DTYPES)
def test_bitwise_operators_as_torch(op, dtype):
    """bool & bool is a mask, bool & 1 an int64 tensor, x_uint8 & -1 wraps the number into uint8, 1 ^ x works."""
    f = BIT_OPERATORS[op]
    for other in BIT_OTHERS:
        _same_as_torch(lambda l: f(_typed(l, dtype, BIT_DTYPES[dtype]), _operand(l, other)))
        _same_as_torch(lambda l: f(_operand(l, other), _typed(l, dtype, BIT_DTYPES[dtype])))
    _same_as_torch(lambda l: ~_typed(l, dtype, BIT_DTYPES[dtype]))


@pytest.mark.parametrize("op", IN_PLACE)
@pytest.mark.parametrize("dtype", BIT_DTYPES)
def test_bitwise_operators_in_place_as_torch(op, dtype):
    """x &= y writes into x (the same tensor, its version bumped), or raises torch's error for the cast."""
    for other in BIT_OTHERS:
        def run(lib):
            x = _typed(lib, dtype, BIT_DTYPES[dtype])
            out = getattr(x, IN_PLACE[op])(_operand(lib, other))
            assert out is x and x._version == 1
            return x
        _same_as_torch(run)


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_bitwise_operators_under_vmap(lib, recwarn):
    a = lib.tensor([[1, 2, 3], [4, 5, 6]])
    b = lib.tensor([[3, 3, 3], [1, 0, 7]])
    mask = lib.tensor([[True, False], [False, True]])
    outs = lib.func.vmap(lambda x, y, m: (x & y, x | y, x ^ y, ~x, x & 1, 2 | x, 3 ^ x, x << 1, y >> 1,
                                          m & m[0], ~m, m | True))(a, b, mask)
    expected = [a & b, a | b, a ^ b, ~a, a & 1, 2 | a, 3 ^ a, a << 1, b >> 1, mask & mask[:, :1], ~mask,
                mask | True]
    for out, want in zip(outs, expected):
        assert out.dtype == want.dtype and out.tolist() == want.tolist()
    assert not [w for w in recwarn if "vmap" in str(w.message) or "fallback" in str(w.message)]


# ---- 6. arguments torch refuses ----------------------------------------------------------------------------
TRI_CASES = {f"{fn} {name}": (fn, call) for fn in ("triu_indices", "tril_indices") for name, call in {
    "float32": lambda l, f: f(3, 3, dtype=l.float32), "float64": lambda l, f: f(3, 3, dtype=l.float64),
    "bool": lambda l, f: f(3, 3, dtype=l.bool), "uint8": lambda l, f: f(3, 3, dtype=l.uint8),
    "int8": lambda l, f: f(3, 3, dtype=l.int8), "int16": lambda l, f: f(3, 3, dtype=l.int16),
    "complex64": lambda l, f: f(3, 3, dtype=l.complex64), "int32": lambda l, f: f(4, 3, 1, dtype=l.int32),
    "int64": lambda l, f: f(3, 5, -1, dtype=l.int64), "default": lambda l, f: f(2, 4),
    "negative row": lambda l, f: f(-1, 3), "negative col": lambda l, f: f(3, -2), "empty": lambda l, f: f(0, 0),
    "far offset": lambda l, f: f(3, 3, -5), "float row": lambda l, f: f(3.0, 3),
    "requires_grad": lambda l, f: f(3, 3, requires_grad=True),
}.items()}


@pytest.mark.parametrize("case", TRI_CASES)
def test_triangle_indices_as_torch(case):
    fn, call = TRI_CASES[case]
    result = _same_as_torch(lambda l: call(l, getattr(l, fn)))
    if isinstance(result, type):
        with pytest.raises(result, match=fn):  # (the message names the op)
            call(mt, getattr(mt, fn))


def test_triangle_indices_on_meta():
    out = mt.triu_indices(3, 3, device="meta")
    assert out.is_meta and out.shape == (2, 6) and out.dtype == mt.int64


# Tensor.new_zeros & co.: size= takes a sequence only and a missing size is a TypeError, as in torch
NEW_FILLED = {
    "new_zeros(size=5)": lambda l: l.ones(2).new_zeros(size=5),
    "new_ones(size=5)": lambda l: l.ones(2).new_ones(size=5),
    "new_empty(size=5)": lambda l: l.ones(2).new_empty(size=5),
    "new_zeros()": lambda l: l.ones(2).new_zeros(),
    "new_ones()": lambda l: l.ones(2).new_ones(),
}


@pytest.mark.parametrize("case", NEW_FILLED)
def test_new_filled_refuses_as_torch(case):
    assert _same_as_torch(NEW_FILLED[case]) is TypeError


@pytest.mark.parametrize("call", [lambda l: l.ones(2).new_zeros(size=(5,)), lambda l: l.ones(2).new_zeros([2, 3]),
                                  lambda l: l.ones(2).new_ones(3, 1), lambda l: l.ones(2).new_zeros(size=[2])])
def test_new_filled_sizes_as_torch(call):
    _same_as_torch(call)


# ---- (found on the way) quantile: torch's graph, values with NaN, its argument checks -----------------------
def _graph_names(t):
    """every node name reachable from t.grad_fn, breadth first"""
    names, seen, queue = [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().replace("torch::autograd::", ""))
        queue += [n for n, _ in node.next_functions]
    return names


QN = np.array([[3.0, np.nan, 2.0, 0.5], [0.0, 5.0, 4.0, -1.0], [np.nan, np.nan, np.nan, np.nan]])
QUANTILE_SPECS = {
    "all": (lambda l, x: x.quantile(0.3), M),
    "last dim": (lambda l, x: l.quantile(x, 0.7, dim=1), M),
    "dim 0 keepdim": (lambda l, x: x.quantile(0.25, dim=0, keepdim=True), M),
    "all keepdim": (lambda l, x: x.quantile(0.6, keepdim=True), M),
    "q tensor": (lambda l, x: x.quantile(l.tensor([0.2, 0.9], dtype=l.float64), dim=0, keepdim=True), M),
    "q 0-d tensor": (lambda l, x: x.quantile(l.tensor(0.4, dtype=l.float64), dim=1), M),
    "lower": (lambda l, x: x.quantile(0.3, dim=1, interpolation="lower"), M),
    "higher": (lambda l, x: x.quantile(0.3, dim=0, interpolation="higher"), M),
    "nearest": (lambda l, x: x.quantile(l.tensor([0.1, 0.5], dtype=l.float64), interpolation="nearest"), M),
    "midpoint": (lambda l, x: x.quantile(0.3, dim=1, interpolation="midpoint"), M),
    "0-d": (lambda l, x: x.quantile(0.5, dim=0), M[0, 0]),
    "nanquantile": (lambda l, x: x.nanquantile(0.4, dim=1), M),
    "NaN rows": (lambda l, x: x.quantile(0.4, dim=1), QN),
    "nanquantile NaN rows": (lambda l, x: l.nanquantile(x, l.tensor([0.0, 0.5, 1.0], dtype=l.float64), dim=1), QN),
}


@pytest.mark.parametrize("case", QUANTILE_SPECS)
def test_quantile_graph_values_and_gradients_as_torch(case):
    """(rows with NaN too: forward mode gives the tangent of the NaN picked, as torch, whose lerp_ skips the term of
    a weight with no tangent)"""
    f, x = QUANTILE_SPECS[case]
    check_op(f, x)
    names = [_graph_names(f(lib, lib.tensor(x, requires_grad=True))) for lib in (torch, mt)]
    assert names[1] == names[0]


QUANTILE_ERRORS = {
    "empty with a dim": lambda l: l.quantile(l.empty(0, 3), 0.5, dim=1),
    "empty, dim out of range": lambda l: l.quantile(l.empty(0, 3), 0.5, dim=5),
    "q NaN": lambda l: l.quantile(l.ones(2, 3), float("nan")),
    "q tensor with NaN": lambda l: l.quantile(l.ones(2, 3), l.tensor([0.5, float("nan")])),
    "q tensor out of range, dim out of range": lambda l: l.quantile(l.ones(2, 3), l.tensor([1.5]), dim=5),
    "q of another dtype": lambda l: l.quantile(l.ones(2, 3), l.tensor([0.5], dtype=l.float64)),
    "q 2-d": lambda l: l.nanquantile(l.ones(2, 3), l.tensor([[0.5]])),
    "interpolation": lambda l: l.quantile(l.ones(2, 3), 0.5, interpolation="up"),
    "integer input": lambda l: l.quantile(l.ones(2, 3, dtype=l.int64), 0.5),
}


@pytest.mark.parametrize("case", QUANTILE_ERRORS)
def test_quantile_refuses_as_torch(case):
    assert isinstance(_same_as_torch(QUANTILE_ERRORS[case]), type)


# ---- (found by the long sweep) creation and in-place view arguments, as torch ------------------------------
ARG_CASES = {
    "arange backwards": lambda l: l.arange(5, 0),
    "arange negative step up": lambda l: l.arange(0, 5, -1),
    "arange floats backwards": lambda l: l.arange(5.0, 0.0),
    "arange empty, step -1": lambda l: l.arange(0, 0, -1),
    "arange down": lambda l: l.arange(5, 0, -2),
    "full_like int NaN": lambda l: l.full_like(l.ones(2, dtype=l.int64), float("nan")),
    "full_like int32 inf": lambda l: l.full_like(l.ones(2, dtype=l.int32), float("inf")),
    "full int8 200": lambda l: l.full((2,), 200, dtype=l.int8),
    "full uint8 -1.0": lambda l: l.full((2,), -1.0, dtype=l.uint8),
    "full int64 2**63": lambda l: l.full((1,), 2 ** 63),
    "full int8 -1.0": lambda l: l.full((2,), -1.0, dtype=l.int8),
    "full int16 1.5": lambda l: l.full((2,), 1.5, dtype=l.int16),
    "full_like bool NaN": lambda l: l.full_like(l.ones(2, dtype=l.bool), float("nan")),
    "meshgrid 2-d": lambda l: l.meshgrid(l.ones(2, 2), indexing="ij")[0],
    "meshgrid dtypes": lambda l: l.meshgrid(l.ones(2), l.ones(2, dtype=l.int64), indexing="ij")[0],
    "meshgrid nothing": lambda l: l.meshgrid(indexing="ij"),
    "meshgrid 0-d and 1-d": lambda l: l.meshgrid(l.tensor(1.0), l.arange(3.0), indexing="xy")[1],
    "aminmax empty dim": lambda l: l.aminmax(l.empty(0, 3), dim=0).min,
    "aminmax other dim of empty": lambda l: l.aminmax(l.empty(0, 3), dim=1).max,
    "aminmax 0-d dim 1": lambda l: l.aminmax(l.tensor(1.0), dim=1).min,
    "aminmax 0-d dim -1": lambda l: l.tensor(1.5).aminmax(dim=-1).max,
    "short positional": lambda l: l.ones(2).short(0),
    "byte": lambda l: l.tensor([1.7, 300.0]).byte(),
    "char": lambda l: l.tensor([1.7, -3.2]).char(),
    "transpose_ leaf, dim out of range": lambda l: l.ones(2, 3, requires_grad=True).transpose_(0, 5),
    "swapaxes_ leaf, a tensor dim": lambda l: l.ones(2, 3, requires_grad=True).swapaxes_(0, l.tensor([1, 2])),
    "unsqueeze_ leaf": lambda l: l.ones(2, 3, requires_grad=True).unsqueeze_(5),
    "t_ non-leaf": lambda l: (l.ones(2, 3, requires_grad=True) * 2).t_(),
    "cumprod_ bool, dim out of range": lambda l: l.ones(2, 3, dtype=l.bool).cumprod_(5),
    "cumprod_ bool, dim None": lambda l: l.ones(2, 3, dtype=l.bool).cumprod_(None),
    "cumprod_ bool": lambda l: l.ones(2, 3, dtype=l.bool).cumprod_(1),
}


@pytest.mark.parametrize("case", ARG_CASES)
def test_arguments_as_torch(case):
    _same_as_torch(ARG_CASES[case])


# ---- (found by the long sweep) random creation: shapes, dtypes and refusals as torch ---------------------------
RANDOM_CASES = {
    "rand_like of 0-d": lambda l: l.rand_like(l.tensor(1.5)),
    "randn_like of 0-d": lambda l: l.randn_like(l.tensor(1.5, dtype=l.float64)),
    "rand int": lambda l: l.rand(3, dtype=l.int32),
    "rand bool": lambda l: l.rand(3, dtype=l.bool),
    "randn int64": lambda l: l.randn(3, dtype=l.int64),
    "randn empty int64": lambda l: l.randn(0, 3, dtype=l.int64),
    "randn_like int": lambda l: l.randn_like(l.ones(2), dtype=l.int64),
    "rand complex": lambda l: l.rand(2, dtype=l.complex64),
    "randperm bool": lambda l: l.randperm(3, dtype=l.bool),
    "randperm float": lambda l: l.randperm(3, dtype=l.float32),
    "randperm uint8 300": lambda l: l.randperm(300, dtype=l.uint8),
    "randperm -1": lambda l: l.randperm(-1),
    "normal(mean)": lambda l: l.normal(l.zeros(2, 3)),
    "normal(number, std)": lambda l: l.normal(0.0, l.ones(2)),
    "normal std NaN": lambda l: l.normal(l.zeros(2), float("nan")),
    "normal std -1": lambda l: l.normal(l.zeros(2), -1.0),
    "normal std tensor < 0": lambda l: l.normal(l.zeros(2), -l.ones(2)),
    "normal tensor with size": lambda l: l.normal(l.zeros(2), 1.0, (2,)),
    "normal tensor with dtype": lambda l: l.normal(l.zeros(2), dtype=l.float64),
    "normal numbers": lambda l: l.normal(0.0, 1.0, (2,)),
    "normal numbers std -1": lambda l: l.normal(0.0, -1.0, (2,)),
    "normal int mean": lambda l: l.normal(l.zeros(2, dtype=l.int64)),
    "normal complex mean": lambda l: l.normal(l.zeros(2, dtype=l.complex64), 2.0),
    "bernoulli p > 1": lambda l: l.bernoulli(l.full((2,), 1.5)),
    "bernoulli NaN": lambda l: l.bernoulli(l.full((2,), float("nan"))),
    "bernoulli p=5": lambda l: l.bernoulli(l.ones(2), 5),
    "bernoulli int with p": lambda l: l.bernoulli(l.ones(2, dtype=l.int64), 0.5),
    "multinomial of no rows": lambda l: l.multinomial(l.empty(0, 3), 1),
    "multinomial of no rows, method": lambda l: l.ones(0, 3).multinomial(2, True),
}


def _shape_or_error(fn, lib):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e)
    return tuple(out.shape), str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("case", RANDOM_CASES)
def test_random_creation_as_torch(case):
    """(the values are random: shape and dtype, or the error's type)"""
    assert _shape_or_error(RANDOM_CASES[case], mt) == _shape_or_error(RANDOM_CASES[case], torch)


def test_complex_normal_has_torchs_spread():
    """each part of a complex normal draw has variance std^2 / 2, as torch's"""
    mt.manual_seed(0)
    x = mt.normal(mt.zeros(40000, dtype=mt.complex128), 2.0)
    assert abs(x.real.std().item() - 2 ** 0.5) < 0.03 and abs(x.imag.std().item() - 2 ** 0.5) < 0.03


ARANGE_CASES = {f"arange{args} {dtype}": (args, dtype) for args in [
    (1.5,), (-0.5, 2), (0.5, 3.2, 1.5), (2.7, 0.2, -1.0), (-1.5,), (0.9,), (0, 5, 2.5), (5, 0), (3,)]
    for dtype in ("int64", "int32", "float32", "bool", None)}


@pytest.mark.parametrize("case", ARANGE_CASES)
def test_arange_as_torch(case):
    """an integer dtype takes the bounds as integers first (arange(1.5, dtype=int64) is [0]); bool has no kernel"""
    args, dtype = ARANGE_CASES[case]
    _same_as_torch(lambda l: l.arange(*args, **({"dtype": getattr(l, dtype)} if dtype else {})))


def test_arange_refuses_a_bound_that_requires_grad():
    for lib in (torch, mt):
        y = lib.tensor(3.0, requires_grad=True) * 2
        with pytest.raises(TypeError, match="arange"):
            lib.arange(y)
        with pytest.raises(TypeError):
            lib.arange(y, 5, 0)
        assert lib.arange(lib.tensor(2.5)).tolist() == [0.0, 1.0, 2.0]


# ---- (found by the long sweep) the in-place random fills check their arguments as torch -------------------------
FILL_CASES = {
    "random_(0)": lambda x: x.random_(0), "random_(5, 2)": lambda x: x.random_(5, 2),
    "random_(-3)": lambda x: x.random_(-3), "random_(1.5)": lambda x: x.random_(1.5),
    "random_(True)": lambda x: x.random_(True), "random_(to=5)": lambda x: x.random_(to=5),
    "random_(2, to=5)": lambda x: x.random_(2, to=5), "random_(None)": lambda x: x.random_(None),
    "random_ bool to 5": lambda x: x.bool().random_(5), "random_ bool to 2": lambda x: x.bool().random_(2),
    "normal_(0, -1)": lambda x: x.normal_(0, -1), "normal_(True)": lambda x: x.normal_(True),
    "normal_(0, nan)": lambda x: x.normal_(0, float("nan")), "normal_(mean=1)": lambda x: x.normal_(mean=1),
    "normal_(0-d tensor)": lambda x: x.normal_(torch_or_mt(x).tensor(2.0)), "normal_('a')": lambda x: x.normal_("a"),
    "uniform_(5, 1)": lambda x: x.uniform_(5, 1), "uniform_(to=3)": lambda x: x.uniform_(to=3),
    "uniform_(dim=5)": lambda x: x.uniform_(dim=5), "exponential_(-4)": lambda x: x.exponential_(-4),
    "exponential_(0)": lambda x: x.exponential_(0), "exponential_ int": lambda x: x.long().exponential_(),
    "geometric_(5)": lambda x: x.geometric_(5), "geometric_(0)": lambda x: x.geometric_(0),
    "geometric_()": lambda x: x.geometric_(), "geometric_(0.5, 2)": lambda x: x.geometric_(0.5, 2),
    "geometric_ int": lambda x: x.long().geometric_(0.5), "geometric_ bool": lambda x: x.bool().geometric_(0.5),
    "cauchy_(0, -1)": lambda x: x.cauchy_(0, -1), "cauchy_ int": lambda x: x.long().cauchy_(),
    "cauchy_(f23)": lambda x: x.cauchy_(x), "log_normal_(0, -1)": lambda x: x.log_normal_(0, -1),
    "bernoulli_(5)": lambda x: x.bernoulli_(5),
    "bernoulli_(tensor p)": lambda x: x.bernoulli_(x * 0 + 0.5),
    "bernoulli_(p=tensor)": lambda x: x.bernoulli_(p=x * 0 + 1),
    "bernoulli_(row of p)": lambda x: x.bernoulli_(torch_or_mt(x).tensor([0.5, 0.0, 1.0])),
    "bernoulli_(p of another shape)": lambda x: x.bernoulli_(torch_or_mt(x).ones(2, 2)),
    "bernoulli_('a')": lambda x: x.bernoulli_("a"),
    "bernoulli(0-d tensor p)": lambda x: torch_or_mt(x).bernoulli(x, torch_or_mt(x).tensor(0.5)),
    "bernoulli(0-d tensor p > 1)": lambda x: torch_or_mt(x).bernoulli(x, torch_or_mt(x).tensor(1.5)),
    "bernoulli(tensor p)": lambda x: torch_or_mt(x).bernoulli(x, x),
}


def torch_or_mt(x):
    return torch if isinstance(x, torch.Tensor) else mt


@pytest.mark.parametrize("call", FILL_CASES.values(), ids=FILL_CASES.keys())
def test_random_fills_check_their_arguments_as_torch(call):
    assert _shape_or_error(lambda l: call(l.ones(2, 3)), mt) == _shape_or_error(lambda l: call(l.ones(2, 3)), torch)


@pytest.mark.parametrize("call", [lambda l: l.ones(2, 1).squeeze_(None), lambda l: l.ones(2, 1).unsqueeze_(None),
                                  lambda l: l.ones(2, 3).flip(0, l.tensor([1])),
                                  lambda l: l.ones(2, 3).flip(0, l.tensor([-9])),
                                  lambda l: l.ones(2, 1, 1).squeeze(l.tensor([1]), 2)])
def test_dims_as_separate_arguments_as_torch(call):
    """a dim may be an integer tensor of one element; None is no dim for the in-place view ops"""
    _same_as_torch(call)


TORCH_CREATION_CASES = {
    "scalar_tensor of a tensor that requires grad": lambda l: l.scalar_tensor(l.tensor(2.5, requires_grad=True) * 2),
    "scalar_tensor of a 0-d tensor": lambda l: l.scalar_tensor(l.tensor(2.5)),
    "asarray int of a tensor that requires grad": lambda l: l.asarray(l.ones(2, requires_grad=True), dtype=l.int64),
    "asarray float64 of a tensor that requires grad":
        lambda l: l.asarray(l.ones(2, requires_grad=True), dtype=l.float64, requires_grad=False),
    "binomial prob of another dtype": lambda l: l.binomial(l.ones(2), l.ones(2, dtype=l.float64) * 0.5),
    "binomial integer prob": lambda l: l.binomial(l.ones(2), l.ones(2, dtype=l.int64)),
    "binomial shapes": lambda l: l.binomial(l.ones(2, 3), l.ones(2) * 0.5),
    "binomial broadcast": lambda l: l.binomial(l.ones(2, 3), l.ones(3) * 0.5),
    "binomial generator": lambda l: l.binomial(l.ones(2), l.ones(2) * 0.5, 0.5),
}


@pytest.mark.parametrize("case", TORCH_CREATION_CASES)
def test_torch_creation_checks_as_torch(case):
    assert _shape_or_error(TORCH_CREATION_CASES[case], mt) == _shape_or_error(TORCH_CREATION_CASES[case], torch)


@pytest.mark.parametrize("args", [(0,), (5,), (None,), ("a",), (1.5,), (True, 1), (True, False)])
def test_svd_method_takes_bools_only(args):
    call = lambda l: l.tensor([[1.0, 2.0], [3.0, 4.0]]).svd(*args).S  # noqa: E731
    assert _shape_or_error(call, mt) == _shape_or_error(call, torch)


PYTHON_FILL_CASES = {
    "apply_ on a leaf that requires grad": lambda l: l.ones(2, requires_grad=True).apply_(lambda v: v * 2),
    "apply_ on a non-leaf": lambda l: (l.ones(2, requires_grad=True) * 1).apply_(lambda v: v * 2),
    "map_ on a tensor that requires grad": lambda l: l.ones(2, requires_grad=True).map_(l.ones(2), lambda a, b: a),
    "map2_ on a tensor that requires grad":
        lambda l: l.ones(2, requires_grad=True).map2_(l.ones(2), l.ones(2), lambda a, b, c: a),
    "map_": lambda l: l.arange(4.0).map_(l.tensor([1.0, 2.0, 3.0, 4.0]), lambda a, b: a * b),
    "map_ broadcast": lambda l: l.ones(2, 3).map_(l.arange(3.0), lambda a, b: a + b),
    "map_ shapes": lambda l: l.ones(2).map_(l.ones(3), lambda a, b: a),
    "map_ dtypes": lambda l: l.ones(2).map_(l.ones(2, dtype=l.float64), lambda a, b: a),
    "map2_": lambda l: l.ones(2).map2_(l.ones(2), l.tensor([1.0, 5.0]), lambda a, b, c: a + b + c),
    "apply_ returning a string": lambda l: l.ones(2).apply_(lambda v: "a"),
    "apply_ on a transposed tensor": lambda l: l.arange(6.0).reshape(2, 3).t().apply_(lambda v: v * 10),
    "apply_ on a strided view": lambda l: l.arange(6).reshape(2, 3)[:, 1].apply_(lambda v: v + 1),
}


@pytest.mark.parametrize("case", PYTHON_FILL_CASES)
def test_python_fills_as_torch(case):
    _same_as_torch(PYTHON_FILL_CASES[case])


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_apply_writes_through_a_view(lib):
    base = lib.arange(6.0).reshape(2, 3)
    base.t().apply_(lambda v: -v)
    assert base.tolist() == [[-0.0, -1.0, -2.0], [-3.0, -4.0, -5.0]]


# ---- (polish, third session) modulo by a number in torch's result dtype -------------------------------------------
MOD_DTYPES = {"int64": [5, -3, 0, 7], "int32": [5, -3, 0, 7], "uint8": [5, 253, 0, 7], "int8": [5, -3, 0, 7],
              "bool": [True, False, True, True], "float16": [5.0, -3.0, 0.0, 7.5], "float32": [5.0, -3.5, 0.0, 7.0]}
MOD_FORMS = {"%": lambda l, x, s: x % s, "fmod": lambda l, x, s: l.fmod(x, s),
             "remainder": lambda l, x, s: l.remainder(x, s), "method fmod": lambda l, x, s: x.fmod(s),
             "0-d": lambda l, x, s: l.remainder(x[0], s)}


@pytest.mark.parametrize("form", MOD_FORMS)
@pytest.mark.parametrize("dtype", MOD_DTYPES)
def test_modulo_by_a_number_in_torchs_dtype(dtype, form):
    """an integer tensor % 2.5 is the default float dtype (not float64); a number outside uint8 wraps into it"""
    for s in (2.5, -2.5, 2, -2, 300, True, 1e300):
        _same_as_torch(lambda l: MOD_FORMS[form](l, _typed(l, dtype, MOD_DTYPES[dtype]), s))


def test_modulo_by_a_number_under_a_float64_default():
    for lib in (torch, mt):
        lib.set_default_dtype(lib.float64)
    try:
        _same_as_torch(lambda l: l.fmod(l.tensor([5, -3]), 2.5))
    finally:
        for lib in (torch, mt):
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_modulo_by_a_number_gradients_as_torch(op):
    check_op(lambda l, x: getattr(l, op)(x, 1.5), np.array([-2.5, -1.0, 0.25, 3.0, 4.5]),
             grad_fn=("FmodBackward0" if op == "fmod" else "RemainderBackward0"))


# ---- (polish) bool ** True, and pow of a number by a tensor through torch.pow --------------------------------------
POW_BOOL_CASES = {
    "bool ** True": lambda l: l.tensor([True, False]) ** True,
    "bool ** False": lambda l: l.tensor([True, False]) ** False,
    "pow(bool, True)": lambda l: l.pow(l.tensor([True, False]), True),
    "pow_(True)": lambda l: l.tensor([True, False]).pow_(True),
    "pow_(False)": lambda l: l.tensor([True, False]).pow_(False),
    "**= False": lambda l: l.tensor([True, False]).__ipow__(False),
    "0-d bool ** True": lambda l: l.tensor(False) ** True,
    "True ** bool": lambda l: True ** l.tensor([True, False]),
    "bool ** bool tensor": lambda l: l.tensor([True, False]) ** l.tensor(True),
    "pow(True, bool)": lambda l: l.pow(True, l.tensor([True])),
    "pow(2, x)": lambda l: l.pow(2, l.tensor([1.0, 2.0])),
    "pow(2.5, int)": lambda l: l.pow(2.5, l.tensor([1, 2])),
    "pow(2, exponent=x)": lambda l: l.pow(2, exponent=l.tensor([1.0, -1.0])),
    "pow(2, 3)": lambda l: l.pow(2, 3),
    "pow(None, x)": lambda l: l.pow(None, l.tensor([1.0])),
}


@pytest.mark.parametrize("case", POW_BOOL_CASES)
def test_pow_of_bool_by_a_bool_as_torch(case):
    _same_as_torch(POW_BOOL_CASES[case])


def test_pow_of_a_number_by_a_tensor_records_torchs_node():
    check_op(lambda l, x: l.pow(2.0, x), X_POW, grad_fn="PowBackward2", vmap=False)


def test_bool_pow_in_place_writes_into_the_tensor():
    for lib in (torch, mt):
        x = lib.tensor([True, False])
        assert x.pow_(False) is x and x.tolist() == [True, True] and x._version == 1


# ---- (polish) in-place ops cast their result into the tensor as torch (canCast) ---------------------------------
CAST_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]
CAST_OPS = ["add_", "mul_", "sub_", "div_", "copy_", "pow_", "fmod_", "remainder_", "floor_divide_", "__iand__",
            "bitwise_or_", "__ilshift__", "__imod__", "__ifloordiv__", "__iadd__", "__imul__", "__ipow__", "atan2_",
            "hypot_", "xlogy_", "copysign_", "clamp_min_", "gcd_", "lt_"]


def _cast_case(op, dtype, other):
    def run(lib):
        x = _typed(lib, dtype, [1, 0, 3])
        y = _typed(lib, other, [3, 1, 2]) if isinstance(other, str) else other
        out = getattr(x, op)(y)
        assert out is x and x._version == 1
        return x
    return run


@pytest.mark.parametrize("op", CAST_OPS)
@pytest.mark.parametrize("dtype", CAST_DTYPES)
def test_in_place_casts_as_torch(op, dtype):
    """int64 into uint8 wraps and float64 into float16 rounds (same category or up), a float result is refused in
    an integer tensor and an integer one in a bool tensor, before a missing kernel is reported (x_int.fmod_(1j))"""
    for other in CAST_DTYPES + [2, 2.5, 1j]:
        _close_to_torch(_cast_case(op, dtype, other))


def test_in_place_cast_error_names_the_op():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            lib.tensor([1, 2]).fmod_(2.5)
    with pytest.raises(RuntimeError, match="fmod_"):
        mt.tensor([1, 2]).fmod_(2.5)
    with pytest.raises(RuntimeError, match="remainder"):
        x = mt.tensor([1, 2])
        x %= 2.5


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_uint8_in_place_with_a_wider_int_wraps(lib):
    x = lib.tensor([3, 250], dtype=lib.uint8)
    x += lib.tensor([-4, 10], dtype=lib.int64)
    assert x.dtype == lib.uint8 and x.tolist() == [255, 4]
    x &= lib.tensor([1, -2], dtype=lib.int8)
    assert x.tolist() == [1, 4]


def test_in_place_cast_keeps_the_graph():
    """a float64 result written into a float32 tensor that requires grad: the gradient is float32, as torch's"""
    def f(l, x):
        y = x * 1
        y.mul_(l.tensor([2.0, 3.0, 4.0], dtype=l.float64))
        return y
    check_op(f, np.array([1.0, -2.0, 0.5], dtype=np.float32), grad_fn="MulBackward0", vmap=False, grad_tol=1e-6)


MASKED_FILL_VALUES = [-1, 300, 2.5, -2.5, 1j, 2 + 0j, True, float("nan"), float("inf"), 2 ** 70, -129, 200, 255,
                      -255, -256, -1.0, 1e6, 1e300, 2 ** 63, 2 ** 64 - 1, 2 + 1j, 70000]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int64", "float16", "float32", "complex64"])
def test_masked_fill_converts_the_number_as_torch(dtype):
    """uint8 takes -255..255 (wrapping), the other integers their range, float16 up to 65504, bool anything"""
    for v in MASKED_FILL_VALUES:
        _close_to_torch(lambda l: _typed(l, dtype, [1, 2]).masked_fill(l.tensor([True, False]), v))
        _close_to_torch(lambda l: _typed(l, dtype, [1, 2]).masked_fill_(l.tensor([True, False]), v))


# ---- (polish) tril and triu record torch's own nodes -------------------------------------------------------------
M3 = np.arange(24.0).reshape(2, 3, 4) - 11.5
TRI_SPECS = {
    "tril": (lambda l, x: l.tril(x), M, "TrilBackward0"),
    "tril 1": (lambda l, x: l.tril(x, 1), M, "TrilBackward0"),
    "tril -2 batched": (lambda l, x: x.tril(-2), M3, "TrilBackward0"),
    "tril diagonal=": (lambda l, x: x.tril(diagonal=-1), M3, "TrilBackward0"),
    "triu": (lambda l, x: l.triu(x), M, "TriuBackward0"),
    "triu 2": (lambda l, x: x.triu(2), M3, "TriuBackward0"),
    "triu -5": (lambda l, x: l.triu(x, -5), M, "TriuBackward0"),
    "tril_ of a non-leaf": (lambda l, x: (x * 1).tril_(1), M, "TrilBackward0"),
    "triu_ of a non-leaf": (lambda l, x: (x * 1).triu_(-1), M3, "TriuBackward0"),
    "tril of triu": (lambda l, x: x.triu(-1).tril(1) * x, M, "MulBackward0"),
}


@pytest.mark.parametrize("case", TRI_SPECS)
def test_triangles_record_torchs_nodes(case):
    f, x, node = TRI_SPECS[case]
    check_op(f, x, grad_fn=node)
    names = [_graph_names(f(lib, lib.tensor(x, requires_grad=True))) for lib in (torch, mt)]
    assert names[1] == names[0]


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_triangle_nodes_save_the_diagonal(lib):
    """(torch shows a negative diagonal as its unsigned 64-bit wrap, 2**64 - 1 for -1: compared for k >= 0 only)"""
    x = lib.ones(3, 3, requires_grad=True)
    assert x.tril(1).grad_fn._saved_diagonal == 1 and x.triu(2).grad_fn._saved_diagonal == 2
    assert type(x.tril().grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


TRI_CASES_MORE = {
    "bool": lambda l: l.tril(l.ones(3, 3, dtype=l.bool)),
    "int": lambda l: l.triu(l.arange(9).reshape(3, 3), 1),
    "complex": lambda l: l.tril(l.ones(2, 2, dtype=l.complex64) * 1j),
    "empty": lambda l: l.triu(l.ones(0, 3)),
    "wide": lambda l: l.tril(l.ones(2, 5), 3),
    "in place": lambda l: l.ones(3, 3).tril_(),
    "in place on a view": lambda l: l.ones(3, 4)[:, 1:].triu_(),
    "1-d": lambda l: l.tril(l.ones(3)),
    "0-d method": lambda l: l.tensor(1.0).triu(),
    "float diagonal": lambda l: l.tril(l.ones(3, 3), 1.5),
    "leaf in place": lambda l: l.ones(3, 3, requires_grad=True).tril_(),
}


@pytest.mark.parametrize("case", TRI_CASES_MORE)
def test_triangles_as_torch(case):
    _same_as_torch(TRI_CASES_MORE[case])


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_triangles_under_vmap_have_a_rule(lib, recwarn):
    x = lib.tensor(M3)
    out = lib.func.vmap(lambda m: lib.tril(m, 1), in_dims=2)(x)
    assert out.tolist() == lib.stack([x[:, :, i].tril(1) for i in range(4)]).tolist()
    assert not [w for w in recwarn if "vmap" in str(w.message) or "batching rule" in str(w.message)]


# ---- (polish) ops/_checks.py: what a failed call is blamed on ------------------------------------------------------
@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_bernoulli_in_place_takes_a_tensor_of_probabilities(lib):
    x = lib.ones(3, 3)
    assert x.bernoulli_(lib.tensor([0.0, 1.0, 0.0])).tolist() == [[0.0, 1.0, 0.0]] * 3
    assert x.bernoulli_(p=lib.zeros(3, 3)).tolist() == [[0.0] * 3] * 3


COMPLEX_NUMBER_CASES = {
    "normal_(1j)": lambda l: l.ones(2, dtype=l.complex64).normal_(1j),
    "uniform_(0, 1j)": lambda l: l.ones(2, dtype=l.complex64).uniform_(0, 1j),
    "cauchy_(1j)": lambda l: l.ones(2, dtype=l.complex64).cauchy_(1j),
    "exponential_(1j)": lambda l: l.ones(2, dtype=l.complex64).exponential_(1j),
    "nan_to_num_(1j)": lambda l: l.ones(2, dtype=l.complex64).nan_to_num_(1j),
    "tensor_split(1j)": lambda l: l.ones(2, dtype=l.complex64).tensor_split(1j),
    "unique_consecutive(1j)": lambda l: l.ones(2, dtype=l.complex64).unique_consecutive(1j),
    "svd(1j)": lambda l: l.ones(2, 2, dtype=l.complex64).svd(1j),
}


@pytest.mark.parametrize("case", COMPLEX_NUMBER_CASES)
def test_a_complex_number_argument_is_a_type_error(case):
    """(a complex tensor and a complex number where torch takes a real one: the argument is wrong, not the kernel)"""
    assert _same_as_torch(COMPLEX_NUMBER_CASES[case]) is TypeError


NEW_ERRORS = {"a string": lambda l: l.ones(2).new("a"), "a dict": lambda l: l.ones(2).new({}),
              "a float size": lambda l: l.ones(2).new(2, 2.5), "sizes and data": lambda l: l.ones(2).new([1], 2)}


@pytest.mark.parametrize("case", NEW_ERRORS)
def test_new_is_not_a_random_fill(case):
    """Tensor.new's refusals are its own, not those of a distribution's parameters"""
    assert isinstance(_same_as_torch(NEW_ERRORS[case]), type)
    with pytest.raises(Exception) as info:
        NEW_ERRORS[case](mt)
    assert "distribution" not in str(info.value)


# ---- (polish) the bitwise functions take a number first, as torch's Scalar forms ----------------------------------
NUMBER_FIRST = {
    "and": lambda l: l.bitwise_and(1, l.tensor([3, 5, 6])),
    "or": lambda l: l.bitwise_or(1, l.tensor([3, 5, 6])),
    "xor bool": lambda l: l.bitwise_xor(True, l.tensor([True, False])),
    "xor bool and int": lambda l: l.bitwise_xor(True, l.tensor([3, 4], dtype=l.int8)),
    "left shift": lambda l: l.bitwise_left_shift(1, l.tensor([3, 5, 6])),
    "right shift": lambda l: l.bitwise_right_shift(64, l.tensor([3, 5, 6], dtype=l.int32)),
    "shift of a bool tensor": lambda l: l.bitwise_left_shift(2, l.tensor([True, False])),
    "shift by a bool": lambda l: l.bitwise_left_shift(True, l.tensor([True, False])),
    "-1 wraps into uint8": lambda l: l.bitwise_and(-1, l.tensor([1, 2], dtype=l.uint8)),
    "300 wraps into uint8": lambda l: l.bitwise_or(300, l.tensor([1, 2], dtype=l.uint8)),
    "other=": lambda l: l.bitwise_and(1, other=l.tensor([3, 5])),
    "a float number": lambda l: l.bitwise_and(1.5, l.tensor([3, 5])),
    "a float tensor": lambda l: l.bitwise_or(1, l.tensor([1.0])),
    "a complex number": lambda l: l.bitwise_or(1j, l.tensor([3])),
    "two numbers": lambda l: l.bitwise_and(1, 2),
    "None": lambda l: l.bitwise_xor(None, l.tensor([3])),
    "a string": lambda l: l.bitwise_xor("a", l.tensor([3])),
}


@pytest.mark.parametrize("case", NUMBER_FIRST)
def test_bitwise_functions_take_a_number_first(case):
    _same_as_torch(NUMBER_FIRST[case])


# ---- (polish) sgn: a real input's gradient is zero (torch's zero tensor), a complex one's torch's formula ----------
SGN_SPECS = {
    "sgn of reals": (lambda l, x: l.sgn(x) * x, (np.array([-1.5, 0.0, 2.0, np.inf]),), "MulBackward0"),
    "sign of reals": (lambda l, x: x.sign(), (np.array([-1.5, 0.0, 2.0]),), "SignBackward0"),
    "sgn alone": (lambda l, x: x.sgn(), (np.array([-1.5, 0.0, 2.0]),), "SgnBackward0"),
    "sgn of complex, real part": (lambda l, u, v: l.sgn(u + 1j * v).real, (np.array([1.0, 0.5, 0.0, -3.0]),
                                                                          np.array([1.0, -2.0, -2.0, 0.0])), None),
    "sgn of complex times c": (lambda l, u, v: (l.sgn(u + 1j * v) * l.tensor([1j, 2, 3, -1])).imag,
                               (np.array([1.0, 0.5, 0.0, -3.0]), np.array([1.0, -2.0, -2.0, 0.5])), None),
}


@pytest.mark.parametrize("case", SGN_SPECS)
def test_sgn_gradients_as_torch(case):
    f, arrays, node = SGN_SPECS[case]
    check_op(f, *arrays, grad_fn=node, grad_tol=1e-6)


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_sgn_of_complex_zero_second_order_is_nan_as_torch(lib):
    """torch masks the first derivative at z = 0 after dividing by |z|: its own derivative there is NaN"""
    z = lib.tensor([1 + 1j, 0j, -2j], requires_grad=True)
    g, = lib.autograd.grad((lib.sgn(z) * lib.tensor([1j, 2, 3])).real.sum(), z, create_graph=True)
    assert g.grad_fn.name() == "MaskedFillBackward0" and g[1].item() == 0
    h, = lib.autograd.grad((g * lib.tensor([1, 1j, 2])).real.sum(), z)
    assert np.isnan(h[1].item().real) and not np.isnan(h[0].item().real)


SGN_CASES = {"sgn bool": lambda l: l.sgn(l.tensor([True, False])), "sign bool": lambda l: l.tensor([True, False]).sign(),
             "sgn_ bool": lambda l: l.tensor([True, False]).sgn_(), "sign int": lambda l: l.tensor([3, -2, 0]).sign(),
             "sgn uint8": lambda l: l.tensor([3, 0], dtype=l.uint8).sgn()}


@pytest.mark.parametrize("case", SGN_CASES)
def test_sgn_of_integers_and_bools_as_torch(case):
    _same_as_torch(SGN_CASES[case])


# ---- (polish) amax/amin of +0.0 and -0.0: torch keeps the first of the equal zeros, the gradient is shared -------
ZEROS = {"+0 -0": [0.0, -0.0], "-0 +0": [-0.0, 0.0], "-0 +0 -1": [-0.0, 0.0, -1.0], "-1 -0 +0 -0": [-1.0, -0.0, 0.0, -0.0],
         "+0 -0 +0": [0.0, -0.0, 0.0], "-0 -0": [-0.0, -0.0], "1 +0 -0": [1.0, 0.0, -0.0]}


def _signed(fn):
    """(shape, dtype, the values' sign bits and values) of fn(lib), for the sign of a zero"""
    def run(lib):
        out = fn(lib)
        return lib.tensor(np.signbit(out.detach().numpy())), out
    return lambda lib: run(lib)


@pytest.mark.parametrize("fn", ["amax", "amin"])
@pytest.mark.parametrize("case", ZEROS)
def test_extremes_of_signed_zeros_as_torch(case, fn):
    """(torch's pick is the first for small inputs, below 32 float32 / 16 float64 elements; past that its SIMD lanes
    decide, and microtorch keeps the first)"""
    v = ZEROS[case]
    rows = [v, v[::-1]]
    for call in (lambda l: getattr(l, fn)(l.tensor(v)), lambda l: getattr(l, fn)(l.tensor(rows), 1),
                 lambda l: getattr(l, fn)(l.tensor(rows), 0, keepdim=True),
                 lambda l: getattr(l, fn)(l.tensor(rows, dtype=l.float64), (0, 1)),
                 lambda l: getattr(l.tensor(v), fn)(-1, True)):
        t, m = (_signed(call)(lib) for lib in (torch, mt))
        assert m[0].tolist() == t[0].tolist() and m[1].tolist() == t[1].tolist()
    check_op(lambda l, x: getattr(l, fn)(x), np.array(v))
    check_op(lambda l, x: getattr(l, fn)(x, 1), np.array(rows))


# ---- (polish) forward mode through lerp with a weight that has no tangent (quantile's rows with NaN) ---------------
@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_lerp_tangent_skips_a_weight_without_one(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([-2.0, 3.0, 1.0]), lib.tensor([1.0, 1.0, 2.0]))
        out = lib.lerp(x, lib.tensor([float("nan"), 1.0, float("inf")]), lib.tensor([0.0, 0.5, 0.0]))
        assert fw.unpack_dual(out).tangent.tolist() == [1.0, 0.5, 2.0]
        w = fw.make_dual(lib.tensor([0.0, 0.5, 0.0]), lib.tensor([1.0, 1.0, 1.0]))  # (a weight with a tangent)
        t = fw.unpack_dual(lib.lerp(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([float("nan"), 4.0, 5.0]), w)).tangent
        assert np.isnan(t[0].item()) and t[1:].tolist() == [2.0, 2.0]


# ---- (polish) outer and take record torch's graph ------------------------------------------------------------------
V6 = np.arange(6.0) - 2.5
OUTER_TAKE_SPECS = {
    "outer": (lambda l, a, b: l.outer(a, b), (V6[:3], V6[3:5])),
    "outer method": (lambda l, a, b: a.outer(b), (V6[:3], V6[3:5])),
    "ger": (lambda l, a, b: l.ger(a, b), (V6[:3], V6[3:5])),
    "outer of a strided view": (lambda l, a, b: l.outer(a[::2], b), (V6, V6[:2])),
    "outer of an expanded one": (lambda l, a, b: l.outer(a[1].expand(3), b), (V6, V6[:2])),
    "outer of a flipped one": (lambda l, a, b: l.outer(a.flip(0), b), (V6, V6[:2])),
    "take": (lambda l, x: l.take(x, l.tensor([0, 5, 2, 5])), (V6.reshape(2, 3),)),
    "take method, 2-d index": (lambda l, x: x.take(l.tensor([[1, -1], [4, 0]])), (V6.reshape(2, 3),)),
    "take 0-d index": (lambda l, x: l.take(x, l.tensor(3)), (V6.reshape(3, 2),)),
    "take of a transposed tensor": (lambda l, x: l.take(x.t(), l.tensor([0, 1, 3])), (V6.reshape(2, 3),)),
    "take of a row": (lambda l, x: l.take(x[1], l.tensor([2, -3])), (V6.reshape(2, 3),)),
    "take of a 0-d tensor": (lambda l, x: l.take(x, l.tensor([0, 0, -1])), (V6[2],)),
}


@pytest.mark.parametrize("case", OUTER_TAKE_SPECS)
def test_outer_and_take_graphs_as_torch(case):
    f, arrays = OUTER_TAKE_SPECS[case]
    check_op(f, *arrays)
    names = [_graph_names(f(lib, *(lib.tensor(a, requires_grad=True) for a in arrays))) for lib in (torch, mt)]
    assert names[1] == names[0]


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_take_saves_torchs_tensors(lib):
    x = lib.ones(2, 3, requires_grad=True)
    index = lib.tensor([[0, -1]])
    node = x.take(index).grad_fn
    assert node.name() == "TakeBackward0" and node._saved_index.tolist() == [[0, -1]]
    assert node._saved_self.shape == (2, 3) and len(node.next_functions) == 1


TAKE_CASES = {
    "index 6 of 6": lambda l: l.take(l.ones(2, 3), l.tensor([6])),
    "index -7 of 6": lambda l: l.take(l.ones(2, 3), l.tensor([-7])),
    "a list": lambda l: l.take(l.ones(2, 3), [0]),
    "a float index": lambda l: l.take(l.ones(2, 3), l.tensor([0.0])),
    "an int32 index": lambda l: l.take(l.ones(2, 3), l.tensor([0], dtype=l.int32)),
    "a uint8 index": lambda l: l.take(l.ones(2, 3), l.tensor(2, dtype=l.uint8)),
    "from an empty tensor": lambda l: l.take(l.ones(0), l.tensor([0])),
    "nothing from an empty tensor": lambda l: l.take(l.ones(0), l.tensor([], dtype=l.int64)),
    "int values": lambda l: l.take(l.arange(6).reshape(2, 3), l.tensor([[5], [1]])),
    "bool values": lambda l: l.tensor([True, False]).take(l.tensor([1, 1, 0])),
    "outer of ints and floats": lambda l: l.outer(l.tensor([1, 2]), l.tensor([1.5])),
    "outer of a matrix": lambda l: l.outer(l.ones(2, 2), l.ones(2)),
}


@pytest.mark.parametrize("case", TAKE_CASES)
def test_take_and_outer_refuse_and_convert_as_torch(case):
    _same_as_torch(TAKE_CASES[case])


BERNOULLI_P_CASES = {
    "NaN": lambda l: l.ones(2, 3).bernoulli_(l.full((3,), float("nan"))),
    "1.5": lambda l: l.ones(2, 3).bernoulli_(l.ones(1) * 1.5),
    "-0.5": lambda l: l.ones(2, 3).bernoulli_(l.ones(2, 3) * -0.5),
    "float64 p": lambda l: l.ones(2, 3).bernoulli_(l.ones(2, 3, dtype=l.float64) * 0.5),
    "int p": lambda l: l.ones(2, 3).bernoulli_(l.ones(3, dtype=l.int64)),
    "bool p": lambda l: l.ones(2, 3).bernoulli_(l.ones(3, dtype=l.bool)),
    "complex p": lambda l: l.ones(2, 3).bernoulli_(l.ones(3, dtype=l.complex64)),
    "p of 4": lambda l: l.ones(2, 3).bernoulli_(l.ones(4) * 0.5),
    "int p of 4": lambda l: l.ones(2, 3).bernoulli_(l.ones(4, dtype=l.int64)),
    "p of more dims": lambda l: l.ones(2, 3).bernoulli_(l.ones(2, 1, 3) * 0.5),
    "into an int tensor": lambda l: l.ones(2, 3, dtype=l.int64).bernoulli_(l.ones(3) * 0.5),
}


@pytest.mark.parametrize("case", BERNOULLI_P_CASES)
def test_bernoulli_checks_its_tensor_of_probabilities_as_torch(case):
    assert _shape_or_error(BERNOULLI_P_CASES[case], mt) == _shape_or_error(BERNOULLI_P_CASES[case], torch)


# ---- (polish) a number written into a tensor is converted as torch converts it ------------------------------------
FILL_FORMS = {
    "fill_": lambda l, x, v: x.fill_(v),
    "x[0] = v": lambda l, x, v: x.__setitem__(0, v) or x,
    "x[1:] = v": lambda l, x, v: x.__setitem__(slice(1, None), v) or x,
    "x[mask] = v": lambda l, x, v: x.__setitem__(l.tensor([True, False, True]), v) or x,
    "x[index] = v": lambda l, x, v: x.__setitem__(l.tensor([0, 2]), v) or x,
    "full_like": lambda l, x, v: l.full_like(x, v),
    "full": lambda l, x, v: l.full((2, 2), v, dtype=x.dtype),
}
FILL_VALUES = [-1, 300, 2.5, 1j, 2 + 0j, True, float("nan"), float("inf"), 2 ** 70, -255, -256, 1e300, 70000,
               2 ** 63, -2 ** 63]


@pytest.mark.parametrize("form", FILL_FORMS)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "float32", "complex64"])
def test_filled_numbers_convert_as_torch(dtype, form):
    """fill_, full and full_like check the range as torch (int64 fill_(nan) raises, uint8 takes -1 as 255); x[i] = v
    reads a 64-bit integer (2**63 is a ValueError) and writes float16 without the range check, as torch's
    (torch's full of one element also skips it for float16: compared on 4 elements here)"""
    for v in FILL_VALUES:
        _close_to_torch(lambda l: FILL_FORMS[form](l, _typed(l, dtype, [1, 2, 3]), v))


def test_full_infers_the_default_dtype_for_a_float():
    _same_as_torch(lambda l: l.full((2,), 1e300))
    _same_as_torch(lambda l: l.full((2,), 2.5))
    _same_as_torch(lambda l: l.full((2,), -1))


ABS_COPY_CASES = {
    "abs_ complex": lambda l: l.ones(2, dtype=l.complex64).abs_(),
    "absolute_ complex": lambda l: l.ones(2, dtype=l.complex64).absolute_(),
    "torch.abs_ complex": lambda l: l.abs_(l.ones(2, dtype=l.complex64)),
    "abs_ int": lambda l: l.tensor([-1, 2]).abs_(),
    "copy_ non_blocking=1": lambda l: l.ones(2).copy_(l.ones(2), non_blocking=1),
    "copy_ 5 as non_blocking": lambda l: l.ones(2).copy_(l.ones(2), 5),
    "copy_ non_blocking=True": lambda l: l.ones(2).copy_(l.ones(2) * 3, True),
}


@pytest.mark.parametrize("case", ABS_COPY_CASES)
def test_abs_in_place_and_copy_arguments_as_torch(case):
    _same_as_torch(ABS_COPY_CASES[case])


# ---- (polish) masked_select records its own node; index_select's checks in torch's order ----------------------
MASKS = {"row": [True, False, True], "2-d": [[True, False, True], [False, False, True]], "0-d": True,
         "none": [False, False, False]}
MASKED_SELECT_SPECS = {
    "same shape": (lambda l, x: x.masked_select(l.tensor(MASKS["2-d"])), V6.reshape(2, 3)),
    "mask broadcast": (lambda l, x: l.masked_select(x, l.tensor(MASKS["row"])), V6.reshape(2, 3)),
    "input broadcast": (lambda l, x: l.masked_select(x, l.tensor(MASKS["2-d"])), V6[:3]),
    "0-d input": (lambda l, x: x.masked_select(l.tensor(MASKS["row"])), V6[1]),
    "0-d mask": (lambda l, x: x.masked_select(l.tensor(MASKS["0-d"])), V6.reshape(3, 2)),
    "nothing selected": (lambda l, x: l.masked_select(x, l.tensor(MASKS["none"])) * 2, V6.reshape(2, 3)),
}


@pytest.mark.parametrize("case", MASKED_SELECT_SPECS)
def test_masked_select_as_torch(case):
    f, x = MASKED_SELECT_SPECS[case]
    check_op(f, x)
    names = [_graph_names(f(lib, lib.tensor(x, requires_grad=True))) for lib in (torch, mt)]
    assert names[1] == names[0]


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_masked_select_under_vmap(lib, recwarn):
    """a mask that is not batched picks as many values from each example (torch's rule, no warning); a batched
    mask is refused"""
    x = lib.tensor(V6.reshape(2, 3))
    out = lib.func.vmap(lib.masked_select, in_dims=(0, None))(x, lib.tensor(MASKS["2-d"]))
    assert out.tolist() == [[-2.5, -0.5, -0.5], [0.5, 2.5, 2.5]]
    assert not [w for w in recwarn if "performance drop" in str(w.message)]
    with pytest.raises(RuntimeError, match="vmap"):
        lib.func.vmap(lib.masked_select, in_dims=(None, 0))(x[0], lib.tensor([MASKS["row"], MASKS["none"]]))


SELECT_ERRORS = {
    "float mask": lambda l: l.ones(2, 3).masked_select(l.ones(2, 3)),
    "uint8 mask": lambda l: l.ones(2, 3).masked_select(l.ones(2, 3, dtype=l.uint8)),
    "float mask of another shape": lambda l: l.ones(2, 3).masked_select(l.ones(4)),
    "mask of another shape": lambda l: l.ones(2, 3).masked_select(l.ones(4, dtype=l.bool)),
    "index_select of a 0-d tensor, two indices": lambda l: l.index_select(l.tensor(2.0), 0, l.tensor([0, 0])),
    "index_select of a 0-d tensor, no index": lambda l: l.index_select(l.tensor(2.0), 0, l.tensor([], dtype=l.long)),
    "index_select of a 0-d tensor, index 1": lambda l: l.index_select(l.tensor(2.0), 0, l.tensor([1])),
    "index_select of a 0-d tensor, index -1": lambda l: l.index_select(l.tensor(2.0), -1, l.tensor([-1])),
    "index_select of a 0-d tensor, 0-d index": lambda l: l.index_select(l.tensor(2.0), 0, l.tensor(0)),
    "index_select, a float index": lambda l: l.index_select(l.ones(2, 3), 0, l.tensor([0.0])),
    "index_select, a uint8 index": lambda l: l.index_select(l.ones(2, 3), 1, l.tensor([0], dtype=l.uint8)),
    "index_select, an int32 index": lambda l: l.index_select(l.ones(2, 3), 1, l.tensor([2], dtype=l.int32)),
    "index_select, dim out of range first": lambda l: l.index_select(l.ones(2, 3), 5, l.tensor([[0.0]])),
    "index_select, a matrix of indices": lambda l: l.index_select(l.ones(2, 3), 0, l.tensor([[0.0]])),
    "index_select, -1 along dim 0": lambda l: l.index_select(l.ones(2, 3), 0, l.tensor([-1])),
    "index_select, -1 along dim 1": lambda l: l.index_select(l.ones(2, 3, 4), 1, l.tensor([-1])),
    "index_select, 4 along the last dim": lambda l: l.index_select(l.ones(2, 3, 4), 2, l.tensor([4])),
    "index_select, 3 along dim 1": lambda l: l.index_select(l.ones(2, 3), 1, l.tensor([3])),
    "index_add, -1": lambda l: l.ones(3).index_add(0, l.tensor([-1]), l.ones(1)),
    "index_add, 5": lambda l: l.ones(3).index_add(0, l.tensor([5]), l.ones(1)),
}


@pytest.mark.parametrize("case", SELECT_ERRORS)
def test_selections_refuse_as_torch(case):
    _same_as_torch(SELECT_ERRORS[case])


@pytest.mark.parametrize("fn", ["amax", "amin"])
@pytest.mark.parametrize("dim", [(0, 0), (1, 1), (0, 5), (5, 0), (0, 1), (-1, 1), 0, (0, -2), [], ()])
def test_extremes_check_dims_in_torchs_order(fn, dim):
    """an empty dim is refused before a repeated one (IndexError, then RuntimeError), a dim out of range first"""
    for x in (lambda l: l.ones(0, 3), lambda l: l.ones(2, 3), lambda l: l.tensor(1.0)):
        _same_as_torch(lambda l: getattr(l, fn)(x(l), dim))


TORCH_IN_PLACE_CASES = {
    "ceil_(bool, 0)": lambda l: l.ceil_(l.ones(2, dtype=l.bool), 0),
    "round_(bool, 0)": lambda l: l.round_(l.ones(2, dtype=l.bool), 0),
    "trunc_(x, 1.5)": lambda l: l.trunc_(l.ones(2), 1.5),
    "floor_(bool)": lambda l: l.floor_(l.ones(2, dtype=l.bool)),
    "round_(x, decimals=1)": lambda l: l.round_(l.tensor([1.25, 2.5]), decimals=1),
    "ceil_(input=x)": lambda l: l.ceil_(input=l.tensor([1.5])),
    "detach_(input=x)": lambda l: l.detach_(input=l.ones(2)),
    "index_put_": lambda l: l.index_put_(l.ones(3), (l.tensor([0]),), l.tensor(5.0)),
    "clamp_(x, min=)": lambda l: l.clamp_(l.tensor([0.0, 2.0]), min=0.5),
}


@pytest.mark.parametrize("case", TORCH_IN_PLACE_CASES)
def test_torch_in_place_functions_check_arguments_first(case):
    """torch.ceil_(x, 0) is a TypeError for the extra argument before any kernel is looked for"""
    _same_as_torch(TORCH_IN_PLACE_CASES[case])


SPACE_CASES = {
    "0-d tensor bounds": lambda l: l.linspace(l.tensor(0.0), l.tensor(1.0), 3),
    "1-d start": lambda l: l.linspace(l.ones(2), 1, 3),
    "1-d end": lambda l: l.linspace(0, l.ones(1), 3),
    "2-d start, logspace": lambda l: l.logspace(l.ones(2, 3), 0, 5),
    "int tensor bound": lambda l: l.linspace(l.tensor(0, dtype=l.int64), 5, 3),
    "logspace of a 0-d tensor": lambda l: l.logspace(l.tensor(0.0), 1, 3),
    "complex tensor bound": lambda l: l.linspace(l.tensor(1j), 2, 3),
    "complex number bound": lambda l: l.linspace(1j, 2, 3),
    "complex logspace": lambda l: l.logspace(0, 1j, 3),
    "complex bound, float64 asked": lambda l: l.linspace(0, 1j, 3, dtype=l.float64),
    "complex bound, int64 asked": lambda l: l.linspace(l.tensor(1j), 1, 3, dtype=l.int64),
    "complex bound, complex128 asked": lambda l: l.linspace(0, 1j, 3, dtype=l.complex128),
    "int64": lambda l: l.linspace(0, 5, 3, dtype=l.int64),
    "a string": lambda l: l.linspace("a", 1, 3),
    "steps as a 0-d tensor": lambda l: l.linspace(0, 1, l.tensor(3)),
}


@pytest.mark.parametrize("case", SPACE_CASES)
def test_linspace_bounds_as_torch(case):
    """a bound may be a 0-d tensor (torch refuses others with a RuntimeError); a complex bound makes the result
    complex, and refuses a real dtype"""
    _close_to_torch(SPACE_CASES[case])


RANDINT_LIKE_CASES = {
    "high": lambda l: l.randint_like(l.ones(2, 3), 5),
    "low and high": lambda l: l.randint_like(l.ones(2, 3), 2, 5),
    "high=": lambda l: l.randint_like(l.ones(2, 3), high=5),
    "0-d int tensor": lambda l: l.randint_like(l.ones(2, 3), l.tensor(5)),
    "0-d float tensor": lambda l: l.randint_like(l.ones(2, 3), l.tensor(5.0)),
    "1-element low": lambda l: l.randint_like(l.ones(2, 3), l.tensor([1]), 5),
    "tensor bounds": lambda l: l.randint_like(l.ones(2, 3), l.tensor(1), l.tensor(5)),
    "2-element high": lambda l: l.randint_like(l.ones(2, 3), l.ones(2)),
    "matrix high": lambda l: l.randint_like(l.ones(2, 3), l.ones(2, 3)),
    "a float": lambda l: l.randint_like(l.ones(2, 3), 2.5),
    "None": lambda l: l.randint_like(l.ones(2, 3), None),
    "low > high": lambda l: l.randint_like(l.ones(2, 3), 5, 2),
    "a string": lambda l: l.randint_like(l.ones(2, 3), "a"),
}


@pytest.mark.parametrize("case", RANDINT_LIKE_CASES)
def test_randint_like_bounds_as_torch(case):
    """(the values are random: shape and dtype, or the error's type)"""
    assert _shape_or_error(RANDINT_LIKE_CASES[case], mt) == _shape_or_error(RANDINT_LIKE_CASES[case], torch)


FILL_TYPE_CASES = {
    "normal_(matrix)": lambda l: l.ones(2, 3).normal_(l.tensor([[0, 5]])),
    "uniform_(vector)": lambda l: l.ones(2, 3).uniform_(l.ones(2)),
    "log_normal_(vector)": lambda l: l.ones(2, 3).log_normal_(l.ones(4)),
    "cauchy_(vector, 1)": lambda l: l.ones(2, 3).cauchy_(l.ones(3), 1.0),
}


@pytest.mark.parametrize("case", FILL_TYPE_CASES)
def test_random_fills_refuse_a_tensor_parameter_as_torch(case):
    """a tensor where the fill takes a number is a TypeError, not a shape error"""
    assert _same_as_torch(FILL_TYPE_CASES[case]) is TypeError


EMPTY_INDEX_CASES = {"x[[]]": [], "x[([],)]": ([],), "x[:, []]": (slice(None), []), "x[[], []]": ([], [])}


@pytest.mark.parametrize("case", EMPTY_INDEX_CASES)
def test_an_empty_list_indexes_nothing_as_torch(case):
    key = EMPTY_INDEX_CASES[case]
    check_op(lambda l, x: x[key] * 2, V6.reshape(2, 3), grad_fn="MulBackward0", vmap=False)
    for lib in (torch, mt):
        x = lib.ones(2, 3)
        x[key] = 5.0
        assert x.sum().item() == 6.0


FLOAT_POWER_CASES = {
    "float32 base": lambda l: l.ones(2).float_power_(2),
    "float64 base": lambda l: l.tensor([2.0, 3.0], dtype=l.float64).float_power_(2),
    "float64 base, complex exponent": lambda l: l.ones(2, dtype=l.float64).float_power_(1j),
    "complex128 base": lambda l: l.ones(2, dtype=l.complex128).float_power_(2),
    "complex64 base": lambda l: l.ones(2, dtype=l.complex64).float_power_(2),
    "int base": lambda l: l.ones(2, dtype=l.int64).float_power_(2),
    "float64 base, float32 tensor": lambda l: l.tensor([2.0, 3.0], dtype=l.float64).float_power_(l.ones(2) * 2),
    "float32 base, float64 tensor": lambda l: l.ones(2).float_power_(l.ones(2, dtype=l.float64)),
    "exponent=": lambda l: l.tensor([2.0, 3.0], dtype=l.float64).float_power_(exponent=3),
}


@pytest.mark.parametrize("case", FLOAT_POWER_CASES)
def test_float_power_in_place_needs_a_double_base(case):
    _same_as_torch(FLOAT_POWER_CASES[case])


PYTHON_FILL_ORDER = {
    "apply_(0)": lambda l: l.ones(2).apply_(0),
    "apply_(0) on a tensor that requires grad": lambda l: l.ones(2, requires_grad=True).apply_(0),
    "map_(y, 0)": lambda l: l.ones(2).map_(l.ones(2), 0),
    "map_(y, 0) on a tensor that requires grad": lambda l: l.ones(2, requires_grad=True).map_(l.ones(2), 0),
    "map_(0, f)": lambda l: l.ones(2).map_(0, lambda a, b: a),
    "map2_(y, z, 5)": lambda l: l.ones(2).map2_(l.ones(2), l.ones(2), 5),
    "apply_(0) on nothing": lambda l: l.ones(0).apply_(0),
}


@pytest.mark.parametrize("case", PYTHON_FILL_ORDER)
def test_python_fills_refuse_in_torchs_order(case):
    """a tensor that requires grad is refused before a function that is not one (found when it is first called)"""
    _same_as_torch(PYTHON_FILL_ORDER[case])


SVD_FLAG_CASES = {
    "svd(int, 0)": lambda l: l.ones(2, 2, dtype=l.int64).svd(0),
    "svd(int, None)": lambda l: l.ones(2, 2, dtype=l.int64).svd(None),
    "svd(int, True)": lambda l: l.ones(2, 2, dtype=l.int64).svd(True),
    "torch.svd(some=0)": lambda l: l.svd(l.ones(2, 2), some=0),
    "torch.svd(compute_uv=1)": lambda l: l.svd(l.ones(2, 2), compute_uv=1),
    "torch.svd(int, some=0)": lambda l: l.svd(l.ones(2, 2, dtype=l.int64), some=0),
    "qr(some=0)": lambda l: l.qr(l.ones(2, 2), some=0),
    "linalg.svd(full_matrices=0)": lambda l: l.linalg.svd(l.ones(2, 2), full_matrices=0),
}


@pytest.mark.parametrize("case", SVD_FLAG_CASES)
def test_decomposition_flags_are_bools_checked_first(case):
    """some=, compute_uv= and full_matrices= take a bool (torch's parser refuses 0 before any kernel check)"""
    def first(lib):
        return SVD_FLAG_CASES[case](lib)[0]
    assert _shape_or_error(first, mt) == _shape_or_error(first, torch)


LERP_CASES = {
    "lerp(x, 0, 0.5)": lambda l: l.lerp(l.ones(2), 0, 0.5),
    "x.lerp(0, 0.5)": lambda l: l.ones(2).lerp(0, 0.5),
    "x.lerp_(0, 5)": lambda l: l.ones(2).lerp_(0, 5),
    "lerp(x, 0-d tensor, 0.5)": lambda l: l.lerp(l.ones(2), l.tensor(2.0), 0.5),
    "lerp(end=, weight=)": lambda l: l.ones(2).lerp(end=l.zeros(2), weight=0.25),
}


@pytest.mark.parametrize("case", LERP_CASES)
def test_lerp_end_is_a_tensor(case):
    _same_as_torch(LERP_CASES[case])


FILL_ORDER_CASES = {
    "int log_normal_(None)": lambda l: l.ones(2, dtype=l.int64).log_normal_(None),
    "int uniform_(None)": lambda l: l.ones(2, dtype=l.int64).uniform_(None),
    "int normal_('a')": lambda l: l.ones(2, dtype=l.int64).normal_("a"),
    "complex random_(None)": lambda l: l.ones(2, dtype=l.complex64).random_(None),
    "complex bernoulli_(None)": lambda l: l.ones(2, dtype=l.complex64).bernoulli_(None),
    "int uniform_(0, vector)": lambda l: l.ones(2, dtype=l.int64).uniform_(0, l.ones(2)),
    "int log_normal_(0, 1)": lambda l: l.ones(2, dtype=l.int64).log_normal_(0.0, 1.0),
    "int normal_(0-d tensor)": lambda l: l.ones(2, dtype=l.int64).normal_(l.tensor(1.0)),
}


@pytest.mark.parametrize("case", FILL_ORDER_CASES)
def test_random_fills_check_argument_types_before_dtypes(case):
    """x_int.normal_(None) is torch's TypeError for the argument; x_int.normal_(0.0) its NotImplementedError"""
    _same_as_torch(FILL_ORDER_CASES[case])
