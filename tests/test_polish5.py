"""Gaps between microtorch and torch 2.13 found beside torch (fifth round), each checked against torch: Python
numbers that do not fit the dtype tensor() makes, clamp's bounds on half tensors, the fractional max pools'
dtype errors, and the graphs of torch.func's results."""
import numpy as np
import pytest
import torch

import microtorch as mt


def _outcome(fn):
    """fn(torch) and fn(microtorch), each as ("raises", exception type) or ("returns", dtype name, values)."""
    def run(lib):
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return ("raises", e)
        return ("returns", str(out.dtype).split(".")[-1], out.tolist())
    return run(torch), run(mt)


def _same_outcome(fn):
    t, m = _outcome(fn)
    if t[0] == "raises":
        assert m[0] == "raises", f"torch raises {type(t[1]).__name__}: {t[1]}; microtorch returns {m[1:]}"
        assert isinstance(m[1], type(t[1])), f"torch: {type(t[1]).__name__}: {t[1]}; microtorch: {m[1]!r}"
        return m[1]
    assert m[0] == "returns", f"torch returns {t[1:]}; microtorch raises {m[1]!r}"
    assert m[1] == t[1]
    np.testing.assert_array_equal(np.array(m[2]), np.array(t[2]))  # (NaN where torch has NaN)
    return None


# ---- item 2: Python numbers that do not fit the tensor's dtype -------------------------------------------
BIG = 2 ** 63
NUMBERS = {
    # (data, dtype name or None): torch unpacks a Python int as a 64-bit one (ValueError beyond), then converts
    # it, checked, into an integer dtype (uint8 takes down to -255: it wraps); floats are checked against the
    # integer dtype's range (NaN, inf refused); floating and bool dtypes take any number (half: inf)
    "2**63": (BIG, None), "-2**63-1": (-BIG - 1, None), "2**63-1": (BIG - 1, None), "-2**63": (-BIG, None),
    "2**64": (2 ** 64, None), "10**400": (10 ** 400, None), "list": ([1, BIG], None),
    "nested": ([[1], [BIG]], None), "tuple": ((1, -BIG - 1), None), "bool and int": ([True, BIG], None),
    "with a float": ([1.5, BIG], None), "10**400 in floats": ([1.5, 10 ** 400], None),
    "2**63 int64": (BIG, "int64"), "2**63 int32": ([[1, 2], [3, BIG]], "int32"), "10**400 int8": (10 ** 400, "int8"),
    "300 uint8": (300, "uint8"), "-1 uint8": (-1, "uint8"), "-255 uint8": (-255, "uint8"),
    "-256 uint8": (-256, "uint8"), "255 uint8": ([255, 0], "uint8"), "200 int8": (200, "int8"),
    "-129 int8": (-129, "int8"), "-128 int8": (-128, "int8"), "40000 int16": (40000, "int16"),
    "2**40 int32": (2 ** 40, "int32"), "-2**31-1 int32": (-2 ** 31 - 1, "int32"), "bad first": ([300, BIG], "int8"),
    "big first": ([BIG, 300], "int8"), "nested uint8": ([[300]], "uint8"),
    "1e300 int64": (1e300, "int64"), "1.5*2**63 int64": (1.5 * 2.0 ** 63, "int64"), "2.0**63 int64": (2.0 ** 63, "int64"),
    "1e20 int32": (1e20, "int32"), "2147483647.5 int32": (2147483647.5, "int32"), "300.0 uint8": (300.0, "uint8"),
    "255.5 uint8": (255.5, "uint8"), "-1.0 uint8": (-1.0, "uint8"), "-0.5 uint8": (-0.5, "uint8"),
    "-0.0 uint8": (-0.0, "uint8"), "3.7 int64": (3.7, "int64"), "inf int64": (float("inf"), "int64"),
    "-inf int8": (float("-inf"), "int8"), "nan int64": (float("nan"), "int64"), "nan in list": ([1.0, float("nan")], "int32"),
    "ints and floats int8": ([1, 2.5, -3], "int8"), "ints and floats uint8": ([-1, 2.5], "uint8"),
    "numpy int": (np.int64(300), "int8"), "numpy ints": ([np.int64(300)], "int8"), "numpy float": (np.float64(300.0), "uint8"),
    "complex int64": (1 + 2j, "int64"), "True int8": (True, "int8"), "empty int8": ([], "int8"),
    "2**63 float32": (BIG, "float32"), "2**64 float64": (2 ** 64, "float64"), "2**63 bool": (BIG, "bool"),
    "10**400 bool": (10 ** 400, "bool"), "2**63 float16": (BIG, "float16"), "70000 float16": ([70000, 1], "float16"),
    "1e300 float16": (1e300, "float16"), "1e300 float32": (1e300, "float32"), "10**400 float16": (10 ** 400, "float16"),
    "nan bool": (float("nan"), "bool"), "2**63 complex64": (BIG, "complex64"),
}


def _dt(lib, name):
    return None if name is None else getattr(lib, name)


@pytest.mark.parametrize("name", list(NUMBERS))
def test_tensor_converts_python_numbers_as_torch(name):
    data, dtype = NUMBERS[name]
    _same_outcome(lambda T: T.tensor(data, dtype=_dt(T, dtype)))


@pytest.mark.parametrize("name", ["2**63", "-2**63-1", "list", "300 uint8", "70000 float16", "1e300 int64"])
def test_as_tensor_and_new_tensor_convert_as_tensor_does(name):
    data, dtype = NUMBERS[name]
    _same_outcome(lambda T: T.as_tensor(data, dtype=_dt(T, dtype)))
    _same_outcome(lambda T: T.ones(2, dtype=_dt(T, dtype) or T.int64).new_tensor(data))


def test_tensor_of_a_64_bit_overflow_raises_before_requires_grad_is_looked_at():
    _same_outcome(lambda T: T.tensor(BIG, requires_grad=True))


def test_one_element_tensors_in_a_list_are_checked_as_their_numbers():
    _same_outcome(lambda T: T.tensor([T.tensor(300), T.tensor(5)], dtype=T.int8))
    _same_outcome(lambda T: T.tensor([T.tensor([300]), T.tensor([5])], dtype=T.int8))
    _same_outcome(lambda T: T.tensor([T.tensor(-1), T.tensor(5)], dtype=T.uint8))


def test_arrays_and_tensors_are_cast_unchecked_as_in_torch():
    _same_outcome(lambda T: T.tensor(np.array([300, -1]), dtype=T.int8))
    _same_outcome(lambda T: T.tensor(np.array(2.0 ** 70), dtype=T.float16))


FULLS = {"2**63": (BIG, None), "-2**63-1": (-BIG - 1, None), "300 uint8": (300, "uint8"), "-1 uint8": (-1, "uint8"),
         "70000 float16": (70000, "float16"), "2**40 int32": (2 ** 40, "int32"), "1e20 int64": (1e20, "int64"),
         "2**63 bool": (BIG, "bool"), "2**63 float32": (BIG, "float32"), "10**400": (10 ** 400, None)}


@pytest.mark.parametrize("name", list(FULLS))
def test_full_converts_its_value_as_torch(name):
    value, dtype = FULLS[name]
    _same_outcome(lambda T: T.full((2,), value, dtype=_dt(T, dtype)))


def test_the_errors_name_the_op_the_number_and_the_fix():
    with pytest.raises(ValueError, match=r"tensor\(\).*9223372036854775808.*64 bits.*float"):
        mt.tensor([1, BIG])
    with pytest.raises(RuntimeError, match=r"cannot be converted to type int8 without overflow.*tensor\(\).*300.*"
                       r"-128 to 127.*wider dtype"):
        mt.tensor([1, 300], dtype=mt.int8)


# ---- item 3: clamp_min / clamp_max with a number: torch's promotion and its checked bound -----------------
CLAMP_DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int64", "bool"]
CLAMP_BOUNDS = [1e5, 70000, -70000, 65504, 65519, 1e40, float("inf"), float("-inf"), float("nan"), 300, -300, 2 ** 63,
                2 ** 64, 1.5, 2, True]
CLAMP_FORMS = {
    "clamp_min": lambda T, x, v: T.clamp_min(x, v), "clamp_max": lambda T, x, v: T.clamp_max(x, v),
    "Tensor.clamp_min": lambda T, x, v: x.clamp_min(v), "Tensor.clamp_max": lambda T, x, v: x.clamp_max(v),
    "clamp_min_": lambda T, x, v: x.clone().clamp_min_(v), "clamp_max_": lambda T, x, v: x.clone().clamp_max_(v),
}


@pytest.mark.parametrize("form", list(CLAMP_FORMS))
@pytest.mark.parametrize("dtype", CLAMP_DTYPES)
def test_one_sided_clamps_promote_and_check_the_bound_as_torch(form, dtype):
    for v in CLAMP_BOUNDS:
        if form.endswith("_") and v == 2 ** 64:
            continue  # (torch's parser refuses an int beyond 64 bits before the in-place cast check: ops/inplace.py)
        x = lambda T: T.tensor([[0.5, -2.0], [3.0, float("nan") if "float" in dtype else 1.0]]).to(getattr(T, dtype))
        _same_outcome(lambda T: CLAMP_FORMS[form](T, x(T), v))


def test_a_bound_that_does_not_fit_in_half_names_the_op_and_the_value():
    with pytest.raises(RuntimeError, match=r"c10::Half without overflow.*clamp_min.*100000"):
        mt.ones(2, dtype=mt.float16).clamp_min(1e5)
    with pytest.raises(NotImplementedError, match=r"clamp_max_scalar_cpu.*Bool.*convert"):
        mt.clamp_max(mt.ones(2, dtype=mt.bool), True)


@pytest.mark.parametrize("bound", [0.5, float("nan"), float("inf"), -1])
@pytest.mark.parametrize("op", ["clamp_min", "clamp_max"])
def test_one_sided_clamps_keep_torchs_gradients(op, bound):
    def run(T):
        x = T.tensor([0.5, -2.0, 3.0, 0.25], dtype=T.float64, requires_grad=True)
        y = getattr(T, op)(x, bound)
        (g,) = T.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return y, g, gg, type(y.grad_fn).__name__
    t, m = run(torch), run(mt)
    for a, b in zip(t[:3], m[:3]):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy())
    assert m[3] == t[3]


# ---- item 4: the fractional max pools refuse dtypes as torch, naming torch's kernel and the op called -------
def _fractional_cases(T, d):
    F = T.nn.functional
    pool = getattr(F, f"fractional_max_pool{d}d")
    size = (1, 2) + (6,) * d
    return {
        "F": lambda x: pool(x, 2, output_size=3),
        "indices": lambda x: pool(x, 2, output_size=3, return_indices=True),
        "with_indices": lambda x: getattr(F, f"fractional_max_pool{d}d_with_indices")(x, 2, output_size=3),
        "module": lambda x: getattr(T.nn, f"FractionalMaxPool{d}d")(2, output_size=3)(x),
        "unbatched": lambda x: pool(x[0], 2, output_size=3),
        "too large (the samples are drawn before the shapes are checked)": lambda x: pool(x, 2, output_size=6),
        "empty batch": lambda x: pool(x[:0], 2, output_size=3),
        "samples of another dtype": lambda x: pool(x, 2, output_size=3, _random_samples=T.rand(1, 2, d)),
        "samples of float64": lambda x: pool(x, 2, output_size=3, _random_samples=T.rand(1, 2, d, dtype=T.float64)),
        "samples of the input's dtype": lambda x: pool(x, 2, output_size=3,
                                                       _random_samples=T.full((1, 2, d), 0.5).to(x.dtype)),
        "input without channels": lambda x: pool(x[0, 0], 2, output_size=3),
        "0-d input": lambda x: pool(x[(0,) * (d + 2)], 2, output_size=3),
    }, size


def _pool_result(fn):
    """("raises", type, the quoted kernel of a not-implemented message) or ("returns", dtype name)."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 (the type and the kernel named are what is compared)
        kernel = str(e).split('"')[1] if " not implemented for " in str(e) else ""
        return "raises", type(e).__name__, kernel
    return "returns", str((out[0] if isinstance(out, tuple) else out).dtype).split(".")[-1]


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("dtype", ["bool", "complex64", "int64", "int32", "uint8", "float16", "float32", "float64"])
def test_fractional_max_pools_refuse_dtypes_as_torch(d, dtype):
    def outcomes(T):
        cases, size = _fractional_cases(T, d)
        x = T.ones(size).to(getattr(T, dtype))
        return {name: _pool_result(lambda: fn(x)) for name, fn in cases.items()}
    assert outcomes(mt) == outcomes(torch)


@pytest.mark.parametrize("op", ["fractional_max_pool2d", "fractional_max_pool2d_with_indices"])
def test_a_refused_fractional_pool_names_the_op_called_and_the_fix(op):
    F = mt.nn.functional
    with pytest.raises(NotImplementedError, match=rf"\"check_uniform_bounds\" not implemented for 'Bool'.*{op} .*"
                       r"x\.float\(\)"):
        getattr(F, op)(mt.ones(1, 2, 6, 6, dtype=mt.bool), 2, output_size=3)
    with pytest.raises(NotImplementedError, match=rf"\"fractional_max_pool2d_out_frame\" not implemented for "
                       rf"'ComplexFloat'.*{op} "):
        getattr(F, op)(mt.ones(1, 2, 6, 6, dtype=mt.complex64), 2, output_size=3)
    with pytest.raises(RuntimeError, match=rf"{op}.*same dtype as input.*float32.*float64.*dtype=input.dtype"):
        getattr(F, op)(mt.ones(1, 2, 6, 6, dtype=mt.float64), 2, output_size=3, _random_samples=mt.rand(1, 2, 2))


# ---- item 5: the graphs of torch.func's results -------------------------------------------------------------
def _graph(out):
    """(requires_grad, grad_fn name, is a view, values) of each tensor in out."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [(o.requires_grad, type(o.grad_fn).__name__ if o.grad_fn else None, o._base is not None,
             o.detach().numpy().round(12).tolist()) for o in outs]


def _x(T, requires_grad=True):
    return T.tensor([0.5, 1.5], dtype=T.float64, requires_grad=requires_grad)


FUNC_GRAPHS = {
    # jvp's primal output is a view of f's (AliasBackward0 where it has a history); the tangent and aux are not
    "jvp": lambda T: T.func.jvp(lambda a: a.sin(), (_x(T),), (T.ones(2, dtype=T.float64),)),
    "jvp of the identity": lambda T: T.func.jvp(lambda a: a, (_x(T),), (T.ones(2, dtype=T.float64),)),
    "jvp without a history": lambda T: T.func.jvp(lambda a: a.sin(), (_x(T, False),), (T.ones(2, dtype=T.float64),)),
    "jvp has_aux": lambda T: T.func.jvp(lambda a: (a.exp(), a.cos()), (_x(T),), (T.ones(2, dtype=T.float64),),
                                        has_aux=True),
    "jvp of grad": lambda T: T.func.jvp(T.func.grad(lambda a: a.sin().sum()), (_x(T),), (T.ones(2, dtype=T.float64),)),
    # grad(grad(f)) ends in the op that computed the derivative, not in a reshape of it
    "grad of grad": lambda T: T.func.grad(lambda b: T.func.grad(lambda a: a.sin().sum())(b).sum())(_x(T)),
    "grad of grad, a cube": lambda T: T.func.grad(lambda b: T.func.grad(lambda a: (a ** 3).sum())(b).sum())(_x(T)),
    "grad of grad, a product": lambda T: T.func.grad(lambda b: T.func.grad(lambda a: (a * a * a).sum())(b).sum())(
        _x(T)),
    "grad of grad of grad": lambda T: T.func.grad(lambda c: T.func.grad(lambda b: T.func.grad(
        lambda a: (a ** 4).sum())(b).sum())(c).sum())(_x(T)),
    "grad": lambda T: T.func.grad(lambda a: (a * a).sum())(_x(T)),
    "grad_and_value": lambda T: T.func.grad_and_value(lambda a: (a * a.exp()).sum())(_x(T)),
    "vjp of grad": lambda T: T.func.vjp(T.func.grad(lambda a: a.sin().sum()), _x(T))[1](T.ones(2, dtype=T.float64)),
    "jacrev": lambda T: T.func.jacrev(lambda a: a.sin())(_x(T)),
    # a tensor f makes with requires_grad=True is on the transform's level: no graph to it from the results ...
    "grad, a tensor made in f": lambda T: T.func.grad(lambda a: (a * _w(T)).sum())(_x(T, False)),
    "grad of x, a tensor made in f": lambda T: T.func.grad(lambda a: (a * _w(T)).sum())(_x(T)),
    "grad of x, a factory in f": lambda T: T.func.grad(lambda a: (a * a * T.ones(2, dtype=T.float64,
                                                                                 requires_grad=True)).sum())(_x(T)),
    "grad, factories in f": lambda T: T.func.grad(lambda a: (a * T.full((2,), 2.0, dtype=T.float64, requires_grad=True)
                                                          * T.hann_window(2, dtype=T.float64, requires_grad=True)
                                                          * T.asarray([2.0, 3.0], dtype=T.float64, requires_grad=True)
                                                          ).sum())(_x(T)),
    "grad_and_value, a tensor made in f": lambda T: T.func.grad_and_value(lambda a: (a * _w(T)).sum())(_x(T, False)),
    "vjp, a tensor made in f": lambda T: T.func.vjp(lambda a: a * _w(T), _x(T, False))[0],
    "vjp_fn, a tensor made in f": lambda T: T.func.vjp(lambda a: a * _w(T), _x(T, False))[1](
        T.ones(2, dtype=T.float64)),
    "jacrev, a tensor made in f": lambda T: T.func.jacrev(lambda a: a * _w(T))(_x(T, False)),
    "jvp, a tensor made in f": lambda T: T.func.jvp(lambda a: a * _w(T), (_x(T, False),),
                                                    (T.ones(2, dtype=T.float64),)),
    # ... while one made outside (a parameter f closes over) is differentiated by the caller
    "grad, a captured tensor": lambda T: T.func.grad(lambda a: (a * a * _W[T.__name__]).sum())(_x(T, False)),
    "grad, one made from a captured tensor": lambda T: T.func.grad(lambda a: (a * (_W[T.__name__] * 2)).sum())(
        _x(T, False)),
    "grad, a made and a captured tensor": lambda T: T.func.grad(lambda a: (a * _w(T) * _W[T.__name__]).sum())(
        _x(T, False)),
    "jvp, a captured tensor": lambda T: T.func.jvp(lambda a: a * _W[T.__name__], (_x(T, False),),
                                                   (T.ones(2, dtype=T.float64),)),
    "jvp returning a captured tensor": lambda T: T.func.jvp(lambda a: _W[T.__name__], (_x(T, False),),
                                                            (T.ones(2, dtype=T.float64),)),
}


def _w(T):
    return T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)


_W = {"torch": _w(torch), "microtorch": _w(mt)}


@pytest.mark.parametrize("name", list(FUNC_GRAPHS))
def test_func_results_have_torchs_graph_ends(name):
    assert _graph(FUNC_GRAPHS[name](mt)) == _graph(FUNC_GRAPHS[name](torch))


def test_grad_of_grad_differentiates_back_to_the_input_as_torch():
    def third(T):
        x = _x(T)
        g2 = T.func.grad(lambda b: T.func.grad(lambda a: (a ** 4 * a.sin()).sum())(b).sum())(x)
        (g3,) = T.autograd.grad(g2.sum(), x)
        return g2, g3
    for m, t in zip(third(mt), third(torch)):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-12)


def test_jvps_primal_output_is_a_view_that_backpropagates_to_the_input():
    def run(T):
        x = _x(T)
        p, t = T.func.jvp(lambda a: a.sin(), (x,), (T.ones(2, dtype=T.float64),))
        (g,) = T.autograd.grad((p * t).sum(), x)
        return g
    np.testing.assert_allclose(run(mt).numpy(), run(torch).numpy(), rtol=1e-12)


# ---- tensor() refuses what is not numbers with torch's exception types ----------------------------------------
NOT_NUMBERS = {"a string": ("a", None), "a string into float32": ("a", "float32"), "a string into bool": ("a", "bool"),
               "bytes": (b"ab", None), "None": (None, None), "None in a list": ([1, None], None),
               "a function": (len, None), "a dict": ({1: 2}, None), "a string after a number": ([1, "b"], None),
               "an object": (object(), None)}


@pytest.mark.parametrize("name", list(NOT_NUMBERS))
def test_tensor_refuses_what_is_not_numbers_as_torch(name):
    data, dtype = NOT_NUMBERS[name]
    _same_outcome(lambda T: T.tensor(data, dtype=_dt(T, dtype)))
    _same_outcome(lambda T: T.ones(2, dtype=_dt(T, dtype) or T.float32).new_tensor(data))


def test_tensor_takes_its_dtype_by_keyword_only_as_torch():
    _same_outcome(lambda T: T.tensor([1.0], T.float64))
    assert mt.tensor([1, 2], dtype=mt.float64).dtype == mt.float64


JAC_FUNCS = {
    "matrix to scalar": (lambda T: lambda a: (a.sin() ** 2).sum(), [(2, 3)]),
    "matrix to vector": (lambda T: lambda a: a.sum(0).exp(), [(2, 3)]),
    "vector to matrix": (lambda T: lambda b: T.outer(b, b), [(4,)]),
    "0-d to 0-d": (lambda T: lambda c: c.sin(), [()]),
    "0-d to vector": (lambda T: lambda c: c * T.ones(3, dtype=T.float64), [()]),
    "two arguments": (lambda T: lambda a, b: a.sum() * b, [(2, 3), (4,)]),
    "a 0-d and a vector": (lambda T: lambda c, b: c * b, [(), (4,)]),
}


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("how", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("name", list(JAC_FUNCS))
def test_jacobians_end_in_torchs_view(name, how, requires_grad):
    """torch unflattens the Jacobian's columns (a view; a 0-d input's column is squeezed), not a reshape"""
    make, shapes = JAC_FUNCS[name]
    arrays = [np.random.default_rng(len(s)).standard_normal(s) for s in shapes]

    def run(T):
        xs = [T.tensor(a, requires_grad=requires_grad) for a in arrays]
        jac = getattr(T.func, how)(make(T), argnums=tuple(range(len(xs))) if len(xs) > 1 else 0)(*xs)
        flat = jac if isinstance(jac, tuple) else (jac,)
        return [(tuple(j.shape), j.requires_grad, type(j.grad_fn).__name__ if j.grad_fn else None, j._base is not None,
                 j.detach().numpy().round(12).tolist()) for f in flat for j in (f if isinstance(f, tuple) else (f,))]
    t, m = _outcome_types(lambda: run(torch), lambda: run(mt))
    assert m == t


def _outcome_types(t_fn, m_fn):
    """(torch's, microtorch's) results, or the types of what they raised."""
    def one(fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return type(e).__name__
    return one(t_fn), one(m_fn)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_an_input_f_returns_comes_back_as_the_tensor_passed(requires_grad):
    for T in (torch, mt):
        x = _x(T, requires_grad)
        assert T.func.vjp(lambda a: a, x)[0] is x
        assert T.func.vjp(lambda a: (a, a.sin()), x)[0][0] is x
        assert T.func.vjp(lambda a: (a.sin(), a), x, has_aux=True)[2] is x
        assert T.func.grad(lambda a: (a.sum(), a), has_aux=True)(x)[1] is x
        with T.no_grad():
            assert T.func.vjp(lambda a: a, x)[0] is x


FUNC_ERRORS = {
    "vjp of an integer output": lambda T: T.func.vjp(lambda a: (a * 2).long(), _x(T)),
    "vjp of a bool output beside a float one": lambda T: T.func.vjp(lambda a: (a, a > 0), _x(T)),
    "jacrev of an integer output": lambda T: T.func.jacrev(lambda a: (a * 2).long())(_x(T)),
    "hessian of an integer output": lambda T: T.func.hessian(lambda a: (a * 2).long().sum())(_x(T)),
    "grad of an integer sum (torch takes it)": lambda T: T.func.grad(lambda a: (a * 2).long().sum() + a.sum())(_x(T)),
    "jacfwd of an integer output (torch takes it)": lambda T: T.func.jacfwd(lambda a: (a * 2).long())(_x(T)),
    "vjp with an integer aux (torch takes it)": lambda T: T.func.vjp(lambda a: (a * 2, a.long()), _x(T),
                                                                     has_aux=True)[2],
    "hessian argnums out of range": lambda T: T.func.hessian(lambda a: a.sum(), argnums=5)(_x(T)),
    "grad argnums of a bad type": lambda T: T.func.grad(lambda a: a.sum(), argnums="a")(_x(T)),
    "jacrev argnums repeated": lambda T: T.func.jacrev(lambda a, b: a * b, argnums=(0, 0))(_x(T), _x(T)),
    "jacrev of a number": lambda T: T.func.jacrev(lambda a: 1.5)(_x(T)),
    "jacfwd of a number": lambda T: T.func.jacfwd(lambda a: 1.5)(_x(T)),
    "hessian of a number": lambda T: T.func.hessian(lambda a: 1.5)(_x(T)),
}


@pytest.mark.parametrize("name", list(FUNC_ERRORS))
def test_func_transforms_refuse_as_torch(name):
    err = _same_outcome(FUNC_ERRORS[name])
    if err is not None:  # microtorch's message names the transform called
        op = name.split()[0]
        assert op in str(err), str(err)


@pytest.mark.parametrize("thing", [None, "a", 3, 2.5, [1.0]])
def test_debug_unwrap_takes_tensors_only_as_torch(thing):
    _same_outcome(lambda T: T.func.debug_unwrap(thing))


# ---- logit's eps as torch's kernel reads it ------------------------------------------------------------------
@pytest.mark.parametrize("eps", [None, 1, float("nan"), 0.1, 0.6, 0.5, -0.2, 1e-6])
def test_logit_clamps_and_differentiates_as_torch(eps):
    """torch tests x < eps before x > 1 - eps (with eps > 1/2 the bounds cross), clamps nothing for a NaN eps, and
    its derivative is NaN outside [0, 1] without eps, 0 where x was clamped (or is NaN) with one"""
    data = np.array([-0.0068, 1.0461, 0.7416, 0.3, 0.0, 1.0, np.nan])

    def run(T):
        x = T.tensor(data, requires_grad=True)
        y = T.logit(x, eps)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        with T.autograd.forward_ad.dual_level():
            dual = T.autograd.forward_ad.make_dual(x.detach(), T.ones(7, dtype=T.float64))
            tangent = T.autograd.forward_ad.unpack_dual(T.logit(dual, eps)).tangent
        return [v.detach().numpy() for v in (y, g, gg, tangent)]
    for m, t in zip(run(mt), run(torch)):
        np.testing.assert_allclose(m, t, rtol=1e-12)


# ---- lerp: torch's dtype rules and its formula from the nearer end --------------------------------------------
def _lerp_args(T):
    f = T.tensor([1.0, 2.0])
    return {"f": f, "d": f.double(), "i": T.tensor([1, 2]), "b": T.tensor([True, False]), "h": f.half(),
            "c": f.to(T.complex64), "f0": T.tensor(1.0), "d0": T.tensor(0.5, dtype=T.float64)}


LERPS = [("i", "f", "f"), ("i", "f", 0.5), ("f", "i", 0.5), ("i", "i", 0.5), ("i", "i", "i"), ("f", "d", 0.5),
         ("f", "f", "i"), ("h", "h", 0.5), ("h", "h", 1e5), ("h", "h", 1e40),
         ("f", "f", 1e40), ("f", "c", 0.5), ("c", "c", 0.5), ("c", "c", 0.5 + 1j), ("f", "f", 1 + 1j), ("f0", "d", 0.5),
         ("f", "f", 2), ("b", "b", 0.5), ("f", "f", "d0"), ("h", "h", "h")]


@pytest.mark.parametrize("start,end,weight", LERPS)
def test_lerp_takes_the_dtypes_torch_takes(start, end, weight):
    def run(T):
        a = _lerp_args(T)
        return T.lerp(a[start], a[end] * 3 if end != "b" else a[end], a.get(weight, weight))
    _same_outcome(run)


@pytest.mark.parametrize("weight", [0.7, 0.2, "tensor"])
def test_lerp_of_infinities_and_its_gradients_match_torch(weight):
    def run(T):
        s = T.tensor([float("inf"), -float("inf"), 1.0, 0.5, 3.0], requires_grad=True)
        e = T.tensor([1.0, 2.0, float("inf"), -1.0, 4.0], requires_grad=True)
        w = T.tensor([0.7, 0.2, 0.9, 0.4, 1.5], requires_grad=True) if weight == "tensor" else weight
        out = T.lerp(s, e, w)
        grads = T.autograd.grad((out * T.arange(5.0)).sum(), [s, e] + ([w] if weight == "tensor" else []))
        return [out.detach().numpy()] + [g.numpy() for g in grads]
    for m, t in zip(run(mt), run(torch)):
        np.testing.assert_allclose(m, t, rtol=1e-6)


@pytest.mark.parametrize("args", [(), (5, None), (None,), (5,), (1, 4), (1, 4, 2), (1.0, 2, 0.5)])
def test_arange_takes_the_argument_lists_torch_takes(args):
    _same_outcome(lambda T: T.arange(*args))
    _same_outcome(lambda T: T.arange(end=3))


LP_POOLS = {
    "a tensor norm, a tensor kernel": lambda T, x, a: T.nn.functional.lp_pool1d(a, a, a),
    "a tensor norm, a float kernel": lambda T, x, a: T.nn.functional.lp_pool1d(a, a, 0.5),
    "2d, a float kernel": lambda T, x, a: T.nn.functional.lp_pool2d(a, a, 0.5),
    "3d, a float kernel": lambda T, x, a: T.nn.functional.lp_pool3d(a, a, 0.5),
    "a 0-d tensor norm": lambda T, x, a: T.nn.functional.lp_pool1d(x, T.tensor(2.0), 2),
    "inf": lambda T, x, a: T.nn.functional.lp_pool1d(x, float("inf"), 2),
    "-inf": lambda T, x, a: T.nn.functional.lp_pool1d(x, -float("inf"), 2),
}


@pytest.mark.parametrize("name", list(LP_POOLS))
def test_lp_pool_reads_a_tensor_norm_as_torch(name):
    """torch only raises the input to norm_type: a tensor norm is no comparison with inf (an ambiguous bool)"""
    rng = np.random.default_rng(3)
    a, x = rng.standard_normal((2, 3)).astype(np.float32), np.abs(rng.standard_normal((1, 2, 6))).astype(np.float32)
    _same_outcome(lambda T: LP_POOLS[name](T, T.tensor(x), T.tensor(a)))
