"""Gaps between microtorch and torch 2.13 found last round, each checked beside torch: the grad mode
torch.func runs backward in, and the graphs its results keep."""
import numpy as np
import pytest
import torch

import microtorch as mt

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
REGULAR = [[1.0, 2.0], [3.0, 4.0]]


def _both(fn):
    """fn(torch) and fn(microtorch), each as (values, requires_grad, grad_fn name) per tensor returned."""
    def describe(lib):
        out = fn(lib)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [(o.detach().numpy(), o.requires_grad, type(o.grad_fn).__name__ if o.grad_fn else None)
                for o in outs]
    return describe(torch), describe(mt)


def _same(fn, atol=1e-12):
    t, m = _both(fn)
    assert len(t) == len(m)
    for (tv, treq, tfn), (mv, mreq, mfn) in zip(t, m):
        np.testing.assert_allclose(mv, tv, atol=atol, rtol=1e-7)
        assert (mreq, mfn) == (treq, tfn)


def _m(T, rows=SINGULAR):
    return T.tensor(rows, dtype=T.float64)


# ---- item 1: torch.func runs backward in grad mode -----------------------------------------------------
def _under_no_grad(T, fn):
    with T.no_grad():
        return fn()


FUNC_DET = {
    # grad always differentiates with create_graph=True: det's singular-matrix formula gives the adjugate
    "grad": lambda T: T.func.grad(T.linalg.det)(_m(T)),
    "grad under no_grad": lambda T: _under_no_grad(T, lambda: T.func.grad(T.linalg.det)(_m(T))),
    "grad_and_value": lambda T: T.func.grad_and_value(T.linalg.det)(_m(T)),
    "vjp": lambda T: T.func.vjp(T.linalg.det, _m(T))[1](T.tensor(1.0, dtype=T.float64)),
    # vjp_fn's create_graph defaults to the grad mode of its call, not of vjp's
    "vjp_fn under no_grad": lambda T: _under_no_grad(
        T, lambda: T.func.vjp(T.linalg.det, _m(T))[1](T.tensor(1.0, dtype=T.float64))),
    "vjp made under no_grad": lambda T: _under_no_grad(T, lambda: T.func.vjp(T.linalg.det, _m(T)))[1](
        T.tensor(1.0, dtype=T.float64)),
    "vjp_fn create_graph=False": lambda T: T.func.vjp(T.linalg.det, _m(T))[1](
        T.tensor(1.0, dtype=T.float64), create_graph=False),
    "jacrev": lambda T: T.func.jacrev(T.linalg.det)(_m(T)),
    "jacrev under no_grad": lambda T: _under_no_grad(T, lambda: T.func.jacrev(T.linalg.det)(_m(T))),
    "jacrev batched": lambda T: T.func.jacrev(T.linalg.det)(T.stack([_m(T), _m(T, REGULAR)])),
    "vmap of grad": lambda T: T.func.vmap(T.func.grad(T.linalg.det))(T.stack([_m(T), _m(T, REGULAR)])),
    "autograd.functional.jacobian (no create_graph)": lambda T: T.autograd.functional.jacobian(T.linalg.det, _m(T)),
}


@pytest.mark.parametrize("name", list(FUNC_DET))
def test_func_transforms_run_backward_in_torchs_grad_mode(name):
    _same(FUNC_DET[name])


def test_grad_of_det_at_a_singular_matrix_is_the_adjugate():
    g = mt.func.grad(mt.linalg.det)(_m(mt))
    np.testing.assert_allclose(g.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def _seen_in_backward(T, transform):
    """The grad mode a custom Function's backward runs in under a transform."""
    seen = []

    class Probe(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x.clone()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            seen.append((T.is_grad_enabled(), g.requires_grad))
            return g

    transform(T, lambda x: Probe.apply(x).sum())
    return seen


TRANSFORMS = {
    "grad": lambda T, f: T.func.grad(f)(_m(T)),
    "grad under no_grad": lambda T, f: _under_no_grad(T, lambda: T.func.grad(f)(_m(T))),
    "vjp": lambda T, f: T.func.vjp(f, _m(T))[1](T.tensor(1.0, dtype=T.float64)),
    "jacrev": lambda T, f: T.func.jacrev(f)(_m(T)),
    "backward (no create_graph)": lambda T, f: f(_m(T).requires_grad_()).backward(),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_custom_backward_sees_torchs_grad_mode(name):
    t, m = (_seen_in_backward(T, TRANSFORMS[name]) for T in (torch, mt))
    assert m == t and t


def _y(T, value=2.0):
    return T.tensor(value, dtype=T.float64)


GRAPHS = {
    "grad at the top": lambda T: T.func.grad(lambda x: x.sin().sum())(_m(T)),
    "nested, inner independent of the outer": lambda T: T.func.grad(
        lambda y: T.func.grad(lambda x: (x.sin() * 3).sum())(_m(T)).sum() * y)(_y(T)),
    "nested, inner depends on the outer": lambda T: T.func.grad(
        lambda y: T.func.grad(lambda x: (x.sin() * y).sum())(_m(T)).sum())(_y(T)),
    "nested vjp": lambda T: T.func.grad(
        lambda y: T.func.vjp(lambda x: x * y, _m(T))[1](T.ones(2, 2, dtype=T.float64))[0].sum())(_y(T)),
    "closing over a tensor that requires grad": lambda T: (lambda w: T.func.grad(
        lambda x: (x.sin() * w).sum())(_m(T)))(T.tensor(2.0, dtype=T.float64, requires_grad=True)),
    "input that requires grad": lambda T: T.func.grad(lambda x: (x.sin() * 3).sum())(_m(T).requires_grad_()),
    "vjp_fn of a cotangent that requires grad": lambda T: T.func.vjp(lambda x: x.sin() * 2, _m(T))[1](
        T.ones(2, 2, dtype=T.float64, requires_grad=True)),
    "vjp_fn of a constant cotangent": lambda T: T.func.vjp(lambda x: x.sin() * 2, _m(T))[1](
        T.ones(2, 2, dtype=T.float64)),
    "vjp output": lambda T: T.func.vjp(lambda x: x.sin() * 2, _m(T))[0],
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_results_keep_a_graph_only_where_torchs_do(name):
    _same(GRAPHS[name])


SECOND_ORDER = {
    "hessian of det, regular": lambda T: T.func.hessian(T.linalg.det)(_m(T, REGULAR)),
    "hessian of det, singular": lambda T: T.func.hessian(T.linalg.det)(_m(T)),
    "jacrev of jacrev of det, singular": lambda T: T.func.jacrev(T.func.jacrev(T.linalg.det))(_m(T)),
    "jvp of grad of det, singular": lambda T: T.func.jvp(T.func.grad(T.linalg.det), (_m(T),),
                                                          (T.eye(2, dtype=T.float64),)),
    "hessian of x^3": lambda T: T.func.hessian(lambda x: (x ** 3).sum())(T.tensor([1.0, 2.0, 3.0], dtype=T.float64)),
    "hessian of prod with a zero": lambda T: T.func.hessian(lambda x: x.prod())(
        T.tensor([1.0, 0.0, 3.0], dtype=T.float64)),
    "grad of prod with two zeros": lambda T: T.func.grad(lambda x: x.prod())(
        T.tensor([0.0, 2.0, 0.0, 3.0], dtype=T.float64)),
    "grad of cumprod with a zero": lambda T: T.func.grad(lambda x: x.cumprod(0).sum())(
        T.tensor([1.0, 0.0, 3.0], dtype=T.float64)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_derivatives_through_the_backward_match_torch(name):
    _same(SECOND_ORDER[name], atol=1e-10)


def test_grad_of_slogdet_at_a_singular_matrix_raises_as_torch():
    """torch's slogdet backward solves with linalg.solve in grad mode, which refuses a singular matrix"""
    with pytest.raises(torch.linalg.LinAlgError):
        torch.func.grad(lambda x: torch.linalg.slogdet(x)[1])(_m(torch))
    with pytest.raises(mt.linalg.LinAlgError, match="singular"):
        mt.func.grad(lambda x: mt.linalg.slogdet(x)[1])(_m(mt))


# ---- item 2: max pools refuse the dtypes torch has no kernel for ------------------------------------------
def _pool_outcome(fn):
    """(dtype name) of what fn returns, or (exception type, the quoted kernel and dtype of its message)."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 (the type and the kernel named are what is compared)
        head = str(e).split('"', 1)[-1].split(":")[0] if " not implemented for " in str(e) else ""
        return type(e).__name__, head
    out = out[0] if isinstance(out, tuple) else out
    return str(out.dtype).split(".")[-1]


def _pools(T, d, ind):
    F = T.nn.functional
    return {
        "F": lambda x: getattr(F, f"max_pool{d}d")(x, 2, return_indices=ind),
        "module": lambda x: getattr(T.nn, f"MaxPool{d}d")(2, return_indices=ind)(x),
        "torch": lambda x: getattr(T, f"max_pool{d}d")(x, 2),
        "unbatched": lambda x: getattr(F, f"max_pool{d}d")(x[0], 2, return_indices=ind),
        "with_indices": lambda x: getattr(F, f"max_pool{d}d_with_indices")(x, 2),
        "adaptive": lambda x: getattr(F, f"adaptive_max_pool{d}d")(x, 2, return_indices=ind),
    }


POOL_DTYPES = ["bool", "complex64", "complex128", "int64", "int8", "uint8", "float16", "float32", "float64"]


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("ind", [False, True])
@pytest.mark.parametrize("dtype", POOL_DTYPES)
def test_max_pools_refuse_the_dtypes_torch_has_no_kernel_for(d, ind, dtype):
    """bool and complex everywhere; integers in max_pool1d without indices and in the adaptive pools"""
    def outcomes(T):
        x = T.ones((1, 2) + (4,) * d, dtype=getattr(T, dtype))
        return {name: _pool_outcome(lambda: fn(x)) for name, fn in _pools(T, d, ind).items()}
    assert outcomes(mt) == outcomes(torch)


SHAPES_FIRST = {
    "1d kernel too large": lambda T, x: T.nn.functional.max_pool1d(x[:, :, 0, 0], 9),
    "1d with indices, kernel too large": lambda T, x: T.nn.functional.max_pool1d(x[:, :, 0, 0], 9,
                                                                                 return_indices=True),
    "1d padding too large": lambda T, x: T.nn.functional.max_pool1d(x[:, :, 0, 0], 2, padding=3),
    "1d zero stride": lambda T, x: T.nn.functional.max_pool1d(x[:, :, 0, 0], 2, stride=0),
    "1d 1-D input": lambda T, x: T.nn.functional.max_pool1d(x[0, 0, 0, 0], 2),
    "2d padding too large": lambda T, x: T.nn.functional.max_pool2d(x[:, :, 0], 2, padding=3),
    "2d empty channels": lambda T, x: T.nn.functional.max_pool2d(x[:, :0, 0], 2),
    "2d 1-D input": lambda T, x: T.nn.functional.max_pool2d(x[0, 0, 0, 0], 2),
    "3d kernel too large": lambda T, x: T.nn.functional.max_pool3d(x, 9),
    "3d 2-D input": lambda T, x: T.nn.functional.max_pool3d(x[0, 0, 0], 2),
    "1d empty batch (the dtype, even with nothing to pool)": lambda T, x: T.nn.functional.max_pool1d(
        x[:0, :, 0, 0], 2),
    "2d empty batch": lambda T, x: T.nn.functional.max_pool2d(x[:0, :, 0], 2),
}


@pytest.mark.parametrize("name", list(SHAPES_FIRST))
@pytest.mark.parametrize("dtype", ["bool", "complex64", "int64"])
def test_max_pools_check_shapes_before_the_dtype_as_torch(name, dtype):
    def outcome(T):
        return _pool_outcome(lambda: SHAPES_FIRST[name](T, T.ones(1, 2, 4, 4, 4, dtype=getattr(T, dtype))))
    assert outcome(mt) == outcome(torch)


def test_a_refused_max_pool_names_the_kernel_the_dtype_and_the_fix():
    with pytest.raises(NotImplementedError, match=r"\"max_pool2d\" not implemented for 'Bool'.*x\.float\(\)"):
        mt.nn.functional.max_pool2d(mt.ones(1, 2, 4, 4, dtype=mt.bool), 2)
    with pytest.raises(NotImplementedError, match=r"\"max_pool1d_impl\" not implemented for 'Long'"):
        mt.nn.functional.max_pool1d(mt.ones(1, 2, 4, dtype=mt.int64), 2)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_max_pools_of_floats_still_match_torch(d):
    def run(T):
        x = T.tensor(np.random.default_rng(d).standard_normal((2, 3) + (5,) * d), requires_grad=True)
        out, idx = getattr(T.nn.functional, f"max_pool{d}d")(x, 2, return_indices=True)
        (g,) = T.autograd.grad((out * out).sum(), x)
        return out.detach().numpy(), idx.numpy(), g.numpy(), type(out.grad_fn).__name__
    (to, ti, tg, tn), (mo, mi, mg, mn) = run(torch), run(mt)
    np.testing.assert_allclose(mo, to)
    np.testing.assert_array_equal(mi, ti)
    np.testing.assert_allclose(mg, tg)
    assert mn == tn


# ---- item 3: the fill value's conversion (float16's unchecked one-element fill_) -------------------------
def _fill_outcome(fn):
    """(dtype name, values) of what fn returns, or the type of what it raised."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    return str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _put(x, key, v):
    x[key] = v
    return x


FILLS = {
    "fill_ 1 element": lambda T, d, v: T.zeros(1, dtype=d).fill_(v),
    "fill_ 0-d": lambda T, d, v: T.zeros((), dtype=d).fill_(v),
    "fill_ (1, 1)": lambda T, d, v: T.zeros(1, 1, dtype=d).fill_(v),
    "fill_ a one-element view": lambda T, d, v: (lambda z: (z[1:2].fill_(v), z)[1])(T.zeros(3, dtype=d)),
    "fill_ 3 elements": lambda T, d, v: T.zeros(3, dtype=d).fill_(v),
    "fill_ empty": lambda T, d, v: T.zeros(0, dtype=d).fill_(v),
    "full (1,)": lambda T, d, v: T.full((1,), v, dtype=d),
    "full (2,)": lambda T, d, v: T.full((2,), v, dtype=d),
    "new_full (1,)": lambda T, d, v: T.zeros(3, dtype=d).new_full((1,), v),
    "new_full (2,)": lambda T, d, v: T.zeros(1, dtype=d).new_full((2,), v),
    "full_like 1 element": lambda T, d, v: T.full_like(T.zeros(1, dtype=d), v),
    "index_fill": lambda T, d, v: T.zeros(3, dtype=d).index_fill(0, T.tensor([1]), v),
    "index_fill_ 1 element": lambda T, d, v: T.zeros(1, dtype=d).index_fill_(0, T.tensor([0]), v),
    "masked_fill": lambda T, d, v: T.zeros(3, dtype=d).masked_fill(T.tensor([True, False, True]), v),
    "masked_fill_ 1 element": lambda T, d, v: T.zeros(1, dtype=d).masked_fill_(T.tensor([True]), v),
    "x[0] = v": lambda T, d, v: _put(T.zeros(2, dtype=d), 0, v),
}
FILL_VALUES = {
    "float16": [1e5, -1e5, 65504, 65519.99, 65520, 1e300, float("inf"), float("nan"), 2 ** 63, 1e-8, 1 + 0j],
    "float32": [1e5, 3e38, 4e38, 1e300, float("-inf"), 1 + 2j],
    "float64": [1e300, float("nan"), 2 ** 63 + 1, 1 + 0j],
    "int8": [127, 128, -129, 300, 1.5, float("nan"), 1 + 0j],
    "uint8": [255, 256, -1, -255, -256, 300.0],
    "int64": [2 ** 63 - 1, 2 ** 63, -2 ** 63, 1e300],
    "bool": [2, 0.5, float("nan"), 1 + 2j, 0j],
    "complex64": [1e300, 1 + 2j, complex(1e39, 0)],
}


@pytest.mark.parametrize("op", list(FILLS))
@pytest.mark.parametrize("dtype", list(FILL_VALUES))
def test_fill_values_are_converted_as_torch_converts_them(op, dtype):
    for v in FILL_VALUES[dtype]:
        t = _fill_outcome(lambda: FILLS[op](torch, getattr(torch, dtype), v))
        m = _fill_outcome(lambda: FILLS[op](mt, getattr(mt, dtype), v))
        assert m == t or (repr(m) == repr(t)), f"{op} of {v!r} into {dtype}: torch {t}, microtorch {m}"


def test_fill_of_a_one_element_half_tensor_gives_inf_where_a_larger_one_raises():
    x = mt.zeros(1, dtype=mt.float16).fill_(1e5)
    assert x.dtype == mt.float16 and np.isposinf(x.numpy()).all()
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        mt.zeros(2, dtype=mt.float16).fill_(1e5)


def test_fill_of_a_one_element_half_tensor_records_torchs_node_and_gradient():
    def run(T):
        x = T.ones(1, dtype=T.float16, requires_grad=True)
        y = (x * 2).fill_(-1e6)
        (g,) = T.autograd.grad((y.float() * 3).sum() + (x.float() * 5).sum(), x)
        return y.detach().numpy().tolist(), type(y.grad_fn).__name__, str(g.dtype).split(".")[-1], g.numpy().tolist()
    assert run(mt) == run(torch)


def test_index_fill_refuses_a_complex_number_into_a_real_tensor():
    for T in (torch, mt):
        with pytest.raises(RuntimeError, match="Converting complex Scalar to non-complex type"):
            T.zeros(3).index_fill(0, T.tensor([1]), 1 + 0j)


# ---- item 4: the complex SVD's gradient (conjugate transposes, the phase term, the phase check) --------------
_W = np.random.default_rng(4).standard_normal((5, 5))


def _w(T, rows, cols):
    return T.tensor(_W[:rows, :cols])


SVD_LOSSES = {  # each invariant under U -> U D, V -> V D for a diagonal D of phases
    "S": lambda T, U, S, Vh: (S * T.arange(1.0, S.shape[-1] + 1, dtype=S.dtype)).sum(),
    "|U|^2": lambda T, U, S, Vh: (U.abs() ** 2 * _w(T, *U.shape[-2:])).sum(),
    "|Vh|^2": lambda T, U, S, Vh: (Vh.abs() ** 2 * _w(T, *Vh.shape[-2:])).sum(),
    "U @ Vh": lambda T, U, S, Vh: ((U @ Vh).real * _w(T, U.shape[-2], Vh.shape[-1])).sum() + (U @ Vh).imag.sum(),
    "|U S Vh|^2": lambda T, U, S, Vh: (((U * S.unsqueeze(-2)) @ Vh).abs() ** 2).sum(),
    "all three": lambda T, U, S, Vh: (U.abs() ** 2 * _w(T, *U.shape[-2:])).sum() + (Vh.abs() * _w(
        T, *Vh.shape[-2:])).sum() + (S ** 3).sum(),
}


def _svd_of(T, A, how):
    if how == "linalg.svd":
        return T.linalg.svd(A, full_matrices=False)
    U, S, V = T.svd(A)
    return U, S, V.mH


def _svd_grads(T, a, loss, how, v):
    """(gradient, and the gradient of <gradient, v> for the second order) of loss at a"""
    A = T.tensor(a, requires_grad=True)
    (g,) = T.autograd.grad(loss(T, *_svd_of(T, A, how)), A, create_graph=True)
    (h,) = T.autograd.grad((g * T.tensor(v)).real.sum(), A)
    return g.detach().numpy(), h.numpy(), str(g.dtype).split(".")[-1]


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("loss", list(SVD_LOSSES))
@pytest.mark.parametrize("how", ["linalg.svd", "svd"])
def test_complex_svd_gradients_match_torch_for_phase_invariant_losses(shape, loss, how):
    rng = np.random.default_rng(sum(shape))
    a, v = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape) for _ in range(2))
    (tg, th, td), (mg, mh, md) = (_svd_grads(T, a, SVD_LOSSES[loss], how, v) for T in (torch, mt))
    np.testing.assert_allclose(mg, tg, atol=1e-10)
    np.testing.assert_allclose(mh, th, atol=1e-8)
    assert md == td == "complex128"


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
def test_real_svd_gradients_are_unchanged(shape):
    rng = np.random.default_rng(7)
    a, v = rng.standard_normal(shape), rng.standard_normal(shape)
    loss = SVD_LOSSES["all three"]
    (tg, th, _), (mg, mh, _) = (_svd_grads(T, a, loss, "linalg.svd", v) for T in (torch, mt))
    np.testing.assert_allclose(mg, tg, atol=1e-10)
    np.testing.assert_allclose(mh, th, atol=1e-8)


@pytest.mark.parametrize("loss", ["U.real", "Vh.imag", "U[0, 0] * Vh[1, 0]"])
def test_a_loss_that_depends_on_the_phases_raises_as_torch(loss):
    fns = {"U.real": lambda U, Vh: U.real.sum(), "Vh.imag": lambda U, Vh: Vh.imag.sum(),
           "U[0, 0] * Vh[1, 0]": lambda U, Vh: (U[0, 0] * Vh[1, 0]).real}  # (column 0's phase, row 1's)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    for T in (torch, mt):
        A = T.tensor(a, requires_grad=True)
        U, _, Vh = T.linalg.svd(A)
        with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex case"):
            T.autograd.grad(fns[loss](U, Vh), A)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
@pytest.mark.parametrize("out", ["U", "S", "Vh"])
def test_complex_svd_jvp_matches_torch(shape, out):
    rng = np.random.default_rng(len(shape) + shape[0])
    a, t = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape) for _ in range(2))
    k = "U S Vh".split().index(out)
    (_, tt), (_, mt_) = (T.func.jvp(lambda A: T.linalg.svd(A, full_matrices=False)[k], (T.tensor(a),),
                                    (T.tensor(t),)) for T in (torch, mt))
    assert str(mt_.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    np.testing.assert_allclose(mt_.numpy(), tt.resolve_conj().numpy(), atol=1e-10)


def test_torch_svd_gives_v_as_the_conjugate_transpose_of_vh():
    a = np.random.default_rng(2).standard_normal((3, 3)) * (1 - 2j)
    tv, mv = torch.svd(torch.tensor(a, requires_grad=True)).V, mt.svd(mt.tensor(a, requires_grad=True)).V
    np.testing.assert_allclose(mv.detach().numpy(), tv.detach().resolve_conj().numpy(), atol=1e-12)
    assert type(mv.grad_fn).__name__ == type(tv.grad_fn).__name__ == "ConjBackward0"
    real = mt.svd(mt.tensor(a.real, requires_grad=True)).V
    assert type(real.grad_fn).__name__ == "TransposeBackward0"


def test_gradcheck_and_gradgradcheck_pass_on_a_complex_svd():
    a = mt.tensor(np.random.default_rng(3).standard_normal((3, 3)) * (1 + 0.5j), requires_grad=True)

    def f(A):
        U, S, Vh = mt.linalg.svd(A)
        return (U.abs() ** 2 * _w(mt, 3, 3)).sum() + (U @ Vh).real.sum() + S.sum()
    assert mt.autograd.gradcheck(f, (a,)) and mt.autograd.gradgradcheck(f, (a,))


@pytest.mark.parametrize("which", ["S of a complex A", "|U| of a complex A", "U, S, Vh of a real A", "torch.svd"])
def test_gradcheck_runs_the_svd_backward_with_undefined_gradients(which):
    """gradcheck's undefined-gradient stage calls the node with no gradient at all: torch's svd_backward
    returns nothing then"""
    a = np.random.default_rng(0).standard_normal((3, 3))
    cases = {"S of a complex A": (lambda T, A: T.linalg.svd(A)[1], 1 + 1j),
             "|U| of a complex A": (lambda T, A: T.linalg.svd(A)[0].abs(), 1 - 1j),
             "U, S, Vh of a real A": (lambda T, A: T.linalg.svd(A), 1), "torch.svd": (lambda T, A: T.svd(A), 1)}
    fn, scale = cases[which]
    for T in (torch, mt):
        A = T.tensor(a * scale, requires_grad=True)
        assert T.autograd.gradcheck(lambda A: fn(T, A), (A,), check_undefined_grad=True)
