"""microtorch.fft (microtorch/fft.py, the FFT ops of ops/spectral.py and spectral_inverse.py) against torch 2.13:
values and dtypes over a grid of shapes, dims, n/s and norms; gradients (first, second, forward mode, vmap);
grad_fn names, graphs and saved values; errors; fftfreq/fftshift; out=; and an FNet mixing layer and a Fourier
neural operator's spectral convolution trained with Adam beside torch."""
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch
from tests.torch_errors import same_error
import microtorch.fft as mt_fft
from op_oracle import check_op, close, graph_names

LIBS = (real_torch, microtorch)
rng = np.random.default_rng(23)
NORMS = (None, "backward", "forward", "ortho")
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
TWO_D = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
N_D = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _input(shape, dtype):
    a = rng.standard_normal(shape)
    if dtype in ("complex64", "complex128"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _value(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, real_torch.Tensor) else t.detach().numpy()


def _same_values(got, want, single):
    """float32 to 1e-6 of the result's scale (numpy's pocketfft against torch's MKL), float64 to 1e-12"""
    got, want = _value(got), _value(want)
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    tol = 1e-6 if single else 1e-12
    scale = max(float(np.abs(want).max()) if want.size else 1.0, 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _grid():
    """(function, shape, keyword arguments) over n/s, dims and norms"""
    cases = []
    for name in ONE_D:
        for shape, dim in (((8,), -1), ((4, 6), -1), ((4, 6), 0), ((3, 4, 5), 1), ((3, 4, 5), -3)):
            for n in (None, 3, 11):
                cases += [(name, shape, dict(n=n, dim=dim, norm=norm)) for norm in NORMS]
    for name in TWO_D + N_D:
        many = name.endswith("n")
        for shape, s, dim in (((4, 6), None, None), ((4, 6), (3, 8), None), ((3, 4, 5), None, (0, 2)),
                              ((3, 4, 5), (5, -1), (-1, 0)), ((3, 4, 5), (2, 7), None),
                              ((2, 3, 4, 5), None, (1, 2, 3))):
            kw = {"s": s} if s is not None else {}
            if dim is not None:
                kw["dim"] = dim
            elif many and s is None and len(shape) > 2:
                continue
            cases += [(name, shape, dict(kw, norm=norm)) for norm in NORMS]
    return cases


GRID = [(name, shape, kw, dtype) for name, shape, kw in _grid()
        for dtype in ("float32", "float64", "complex64", "complex128")
        if not (name in REAL_ONLY and dtype.startswith("complex"))]  # (their error for a complex input: below)


@pytest.mark.parametrize("name,shape,kw,dtype", GRID, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in GRID])
def test_values_and_dtypes_as_torch(name, shape, kw, dtype):
    a = _input(shape, dtype)
    want = getattr(real_torch.fft, name)(real_torch.tensor(a), **kw)
    got = getattr(microtorch.fft, name)(microtorch.tensor(a), **kw)
    _same_values(got, want, dtype in ("float32", "complex64"))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
@pytest.mark.parametrize("name", ONE_D + TWO_D + N_D)
def test_integer_inputs_are_promoted_as_torch(name, dtype):
    a = (rng.integers(0, 5, (4, 6)) % (2 if dtype == "bool" else 5)).astype(dtype)
    want = getattr(real_torch.fft, name)(real_torch.tensor(a))
    got = getattr(microtorch.fft, name)(microtorch.tensor(a))
    _same_values(got, want, True)


def test_default_dtype_float64_promotes_integers_to_double():
    for lib in LIBS:
        old = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            assert str(lib.fft.fft(lib.arange(6)).dtype).split(".")[-1] == "complex128"
            assert str(lib.fft.irfft(lib.arange(6)).dtype).split(".")[-1] == "float64"
        finally:
            lib.set_default_dtype(old)


def test_zero_d_fftn_and_empty_dims_copy_as_torch():
    a, b = _input((3, 4), "float64"), _input((3, 4), "complex64")
    for make in (lambda L: L.fft.fftn(L.tensor(2.5, dtype=L.float64)),
                 lambda L: L.fft.fftn(L.tensor(a), dim=()),
                 lambda L: L.fft.ifftn(L.tensor(b), dim=(), norm="ortho")):
        _same_values(make(microtorch), make(real_torch), False)


# ---- gradients ----
def _as_real(lib, y):
    """a complex result as (real, imag) pairs (torch's lazy conjugate included), a real one as it is"""
    return lib.stack((y.real, y.imag), -1) if y.is_complex() else y


GRAD_CASES = {
    "fft": lambda L, x: L.fft.fft(x),
    "fft n pad": lambda L, x: L.fft.fft(x, n=9, norm="ortho"),
    "fft n trim dim0": lambda L, x: L.fft.fft(x, n=3, dim=0, norm="forward"),
    "ifft": lambda L, x: L.fft.ifft(x, dim=-1),
    "rfft": lambda L, x: L.fft.rfft(x),
    "rfft odd n": lambda L, x: L.fft.rfft(x, n=7, norm="ortho"),
    "irfft": lambda L, x: L.fft.irfft(x),
    "irfft n": lambda L, x: L.fft.irfft(x, n=5, norm="forward"),
    "hfft": lambda L, x: L.fft.hfft(x, n=9),
    "ihfft": lambda L, x: L.fft.ihfft(x, norm="ortho"),
    "fft2": lambda L, x: L.fft.fft2(x),
    "ifft2 s": lambda L, x: L.fft.ifft2(x, s=(6, 3)),
    "rfft2": lambda L, x: L.fft.rfft2(x, norm="ortho"),
    "rfft2 reversed dims": lambda L, x: L.fft.rfft2(x, dim=(1, 0)),
    "irfft2 s": lambda L, x: L.fft.irfft2(x, s=(5, 7)),
    "hfft2": lambda L, x: L.fft.hfft2(x),
    "ihfft2": lambda L, x: L.fft.ihfft2(x, s=(3, 5), norm="forward"),
    "fftn": lambda L, x: L.fft.fftn(x, s=(-1, 8)),
    "ifftn": lambda L, x: L.fft.ifftn(x, norm="ortho"),
    "rfftn": lambda L, x: L.fft.rfftn(x, dim=0),
    "irfftn": lambda L, x: L.fft.irfftn(x, s=(4, 9)),
    "hfftn": lambda L, x: L.fft.hfftn(x, dim=(1, 0)),
    "ihfftn": lambda L, x: L.fft.ihfftn(x),
    "fftshift": lambda L, x: L.fft.fftshift(x),
    "ifftshift dim": lambda L, x: L.fft.ifftshift(x, dim=-1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_of_a_real_input_as_torch(name):
    """values, gradients, second order (through a sine: the FFTs are linear), forward mode and vmap"""
    f = GRAD_CASES[name]  # (torch's vmap has no rule for the lazy conjugate of ifft and ihfft of a real input)
    check_op(lambda L, x: _as_real(L, f(L, x)).sin(), rng.standard_normal((4, 6)), grad_tol=1e-9,
             vmap=name not in ("ifft", "ihfft"))


@pytest.mark.parametrize("name", [n for n in GRAD_CASES if not any(n.startswith(r) for r in REAL_ONLY)])
def test_gradients_of_a_complex_input_as_torch(name):
    f = GRAD_CASES[name]
    check_op(lambda L, re, im: _as_real(L, f(L, L.complex(re, im))).sin(), rng.standard_normal((4, 6)),
             rng.standard_normal((4, 6)), grad_tol=1e-9)


@pytest.mark.parametrize("loss", ["real", "abs", "power"])
def test_grad_of_real_inputs_through_real_and_abs_as_torch(loss):
    a = rng.standard_normal((3, 8)).astype("float32")
    grads = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        y = lib.fft.fft(lib.fft.fft(x, dim=-1), dim=-2)
        out = {"real": y.real, "abs": y.abs(), "power": lib.fft.rfft(x).abs() ** 2}[loss]
        (out * lib.tensor(np.linspace(0.5, 1.5, out.numel(), dtype="float32").reshape(out.shape))).sum().backward()
        grads.append(x.grad)
    _same_values(grads[1], grads[0], True)


@pytest.mark.parametrize("name,real", [("fft", False), ("ifft", False), ("rfft", True), ("irfft", False),
                                       ("hfft", False), ("ihfft", True), ("fft2", False), ("rfftn", True),
                                       ("irfft2", False), ("hfftn", False), ("ihfftn", True), ("fft", True)])
def test_gradcheck_and_gradgradcheck_as_torch(name, real):
    a = _input((3, 4), "float64" if real else "complex128")
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        fn = getattr(lib.fft, name)
        assert lib.autograd.gradcheck(fn, (x,))
        assert lib.autograd.gradgradcheck(fn, (x,))


# ---- graphs: node names and what each node shows ----
GRAPH_CASES = {
    "fft real": lambda L, x, z: L.fft.fft(x),
    "ifft real": lambda L, x, z: L.fft.ifft(x),
    "fft complex n pad": lambda L, x, z: L.fft.fft(z, n=8),
    "fft complex n trim": lambda L, x, z: L.fft.ifft(z, n=3, dim=0),
    "rfft pad": lambda L, x, z: L.fft.rfft(x, n=9),
    "irfft": lambda L, x, z: L.fft.irfft(z, norm="ortho"),
    "irfft n trim": lambda L, x, z: L.fft.irfft(z, n=5),
    "irfft n pad": lambda L, x, z: L.fft.irfft(z, n=20),
    "irfft real": lambda L, x, z: L.fft.irfft(x),
    "hfft": lambda L, x, z: L.fft.hfft(z),
    "hfft real n": lambda L, x, z: L.fft.hfft(x, n=7, norm="ortho"),
    "irfft real n": lambda L, x, z: L.fft.irfft(x, n=14, dim=0),
    "ihfft": lambda L, x, z: L.fft.ihfft(x, norm="forward"),
    "fft2 real": lambda L, x, z: L.fft.fft2(x),
    "fft2 s pad and trim": lambda L, x, z: L.fft.fft2(z, s=(6, 3)),
    "rfft2 dims reversed": lambda L, x, z: L.fft.rfft2(x, dim=(1, 0)),
    "irfft2 s": lambda L, x, z: L.fft.irfft2(z, s=(5, 7)),
    "irfftn s trims": lambda L, x, z: L.fft.irfftn(z, s=(3, 5)),
    "hfft2": lambda L, x, z: L.fft.hfft2(z),
    "ihfft2": lambda L, x, z: L.fft.ihfft2(x),
    "ihfftn s": lambda L, x, z: L.fft.ihfftn(x, s=(2, 3), norm="forward"),
    "hfftn one dim": lambda L, x, z: L.fft.hfftn(z, dim=0),
    "ihfftn one dim": lambda L, x, z: L.fft.ihfftn(x, dim=0),
    "fftn no dims": lambda L, x, z: L.fft.fftn(x, dim=()),
    "fftshift": lambda L, x, z: L.fft.fftshift(x),
    "ifftshift": lambda L, x, z: L.fft.ifftshift(z, dim=(0, -1)),
}


def _nodes(y):
    """each node breadth first: its name and the values it shows (tensors by shape and values)"""
    out, queue, seen = [], [y.grad_fn], set()
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        shown = {}
        for attr in dir(node):
            if attr.startswith("_saved_") and attr not in ("_saved_names", "_saved_values"):
                v = getattr(node, attr)
                shown[attr] = (tuple(v.shape), v.detach().reshape(-1).tolist()) if hasattr(v, "shape") else v
        out.append((node.name().replace("torch::autograd::", ""), shown))
        queue.extend(n for n, _ in node.next_functions)
    return out


@pytest.mark.parametrize("name", list(GRAPH_CASES))
def test_graph_names_and_saved_values_as_torch(name):
    a, b = _input((4, 6), "float64"), _input((4, 6), "complex128")
    graphs = []
    for lib in LIBS:
        x, z = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        graphs.append(_nodes(GRAPH_CASES[name](lib, x, z)))
    assert graphs[1] == graphs[0]


@pytest.mark.parametrize("make,twice", [(lambda L, x, z: L.fft.rfft(x).abs(), "raises"),
                                        (lambda L, x, z: L.fft.fft(z).abs(), "ok"),
                                        (lambda L, x, z: L.fft.irfft(z), "ok")])
def test_a_second_backward_through_the_fft_nodes_as_torch(make, twice):
    """FftR2C keeps its input (torch's _saved_self); FftC2C and FftC2R keep nothing"""
    for lib in LIBS:
        x = lib.tensor(_input((4, 6), "float64"), requires_grad=True)
        z = lib.tensor(_input((4, 6), "complex128"), requires_grad=True)
        y = make(lib, x, z)
        y.sum().backward(retain_graph=False)
        try:
            y.sum().backward()
            got = "ok"
        except RuntimeError as e:
            got = "raises" if "second time" in str(e) else str(e)
        if twice == "ok" and lib is real_torch:
            continue  # (AbsBackward0 saves its input too: only microtorch's node under it is checked here)
        if twice == "ok":
            assert make(lib, x, z).grad_fn.name() in ("AbsBackward0", "FftC2RBackward0")
        else:
            assert got == twice


def test_gradient_graphs_under_create_graph_match_in_node_kinds():
    """the gradient of each op is the adjoint transform, itself recorded (so a second derivative exists)"""
    a = rng.standard_normal((4, 6))
    for f in (lambda L, x: L.fft.rfft(x), lambda L, x: L.fft.irfft(L.fft.rfft(x), n=6),
              lambda L, x: L.fft.fft(L.complex(x, x * 2))):
        names = []
        for lib in LIBS:
            x = lib.tensor(a, requires_grad=True)
            y = _as_real(lib, f(lib, x))
            v = lib.ones_like(y).requires_grad_()
            (g,) = lib.autograd.grad(y, x, v, create_graph=True)
            names.append({n for n in graph_names(g) if n.startswith("Fft")})
        assert names[1] == names[0]


# ---- errors ----
ERRORS = {
    "norm string": lambda L: L.fft.fft(L.randn(4, 6), norm="bad"),
    "norm type": lambda L: L.fft.fft(L.randn(4, 6), norm=1),
    "n zero": lambda L: L.fft.fft(L.randn(4, 6), n=0),
    "n negative": lambda L: L.fft.rfft(L.randn(4, 6), n=-2),
    "irfft n zero": lambda L: L.fft.irfft(L.randn(4, 6, dtype=L.cfloat), n=0),
    "irfft one bin": lambda L: L.fft.irfft(L.randn(4, 1, dtype=L.cfloat)),
    "n float": lambda L: L.fft.fft(L.randn(4, 6), n=3.0),
    "n float by position": lambda L: L.fft.fft(L.randn(4, 6), 3.0),
    "norm by position": lambda L: L.fft.ihfft(L.randn(4, 6), 3, 0, 1),
    "n bool": lambda L: L.fft.irfft(L.randn(4, 6), n=True),
    "dims with a float": lambda L: L.fft.fft2(L.randn(4, 6), dim=[0, 1.5]),
    "dims with a float first": lambda L: L.fft.rfftn(L.randn(4, 6), dim=[0.5, 1]),
    "s a float": lambda L: L.fft.fftn(L.randn(4, 6), s=2.0),
    "fftshift dims a string": lambda L: L.fft.fftshift(L.randn(4, 6), dim="a"),
    "dim out of range": lambda L: L.fft.fft(L.randn(4, 6), dim=2),
    "dim out of range negative": lambda L: L.fft.ifft(L.randn(4, 6), dim=-3),
    "dim tuple for fft": lambda L: L.fft.fft(L.randn(4, 6), dim=(0,)),
    "dims repeated": lambda L: L.fft.fft2(L.randn(4, 6), dim=(0, 0)),
    "dims repeated negative": lambda L: L.fft.fftn(L.randn(4, 6), dim=(1, -1)),
    "s and dim lengths": lambda L: L.fft.fftn(L.randn(4, 6), s=(2,), dim=(0, 1)),
    "fft2 s of one": lambda L: L.fft.fft2(L.randn(4, 6), s=(3,)),
    "s longer than ndim": lambda L: L.fft.fftn(L.randn(4, 6), s=(2, 2, 2)),
    "s zero": lambda L: L.fft.fftn(L.randn(4, 6), s=(0, 2)),
    "s negative": lambda L: L.fft.ifftn(L.randn(4, 6), s=(-2, 2)),
    "fft of 0-d": lambda L: L.fft.fft(L.tensor(1.0)),
    "fft2 of 1-d": lambda L: L.fft.fft2(L.randn(5)),
    "fft of empty": lambda L: L.fft.fft(L.randn(0)),
    "rfft of complex": lambda L: L.fft.rfft(L.randn(4, 6, dtype=L.cfloat)),
    "ihfft of complex": lambda L: L.fft.ihfft(L.randn(4, 6, dtype=L.cfloat)),
    "rfft2 of complex": lambda L: L.fft.rfft2(L.randn(4, 6, dtype=L.cfloat)),
    "ihfftn of complex": lambda L: L.fft.ihfftn(L.randn(4, 6, dtype=L.cfloat)),
    "rfftn no dims": lambda L: L.fft.rfftn(L.randn(4, 6), dim=()),
    "irfftn no dims": lambda L: L.fft.irfftn(L.randn(4, 6, dtype=L.cfloat), dim=()),
    "hfftn no dims": lambda L: L.fft.hfftn(L.randn(4, 6, dtype=L.cfloat), dim=()),
    "ihfftn no dims": lambda L: L.fft.ihfftn(L.randn(4, 6), dim=()),
    "half": lambda L: L.fft.fft(L.randn(4).half()),
    "half rfft": lambda L: L.fft.rfft(L.randn(4).half()),
    "half before the norm": lambda L: L.fft.fft(L.randn(4).half(), norm="bad"),
    "a list": lambda L: L.fft.fft([1.0, 2.0]),
    "empty batch": lambda L: L.fft.rfft(L.randn(0, 4)),
    "out real for fft": lambda L: L.fft.fft(L.randn(4, 6), out=L.empty(4, 6)),
    "out real for fft2": lambda L: L.fft.fft2(L.randn(4, 6), out=L.empty(4, 6)),
    "out complex for irfft": lambda L: L.fft.irfft(L.randn(4, 6, dtype=L.cfloat), out=L.empty(4, 10, dtype=L.cfloat)),
    "out complex for irfft2": lambda L: L.fft.irfft2(L.randn(4, 6, dtype=L.cfloat), out=L.empty(1, dtype=L.cfloat)),
    "fftfreq negative": lambda L: L.fft.fftfreq(-1),
    "fftfreq float n": lambda L: L.fft.fftfreq(4.0),
    "fftfreq integer dtype": lambda L: L.fft.fftfreq(4, dtype=L.int64),
    "rfftfreq integer dtype": lambda L: L.fft.rfftfreq(4, dtype=L.int32),
    "fftfreq complex dtype": lambda L: L.fft.fftfreq(4, dtype=L.complex64),
    "fftfreq d a string": lambda L: L.fft.fftfreq(4, d="a"),
    "fftshift dim out of range": lambda L: L.fft.fftshift(L.randn(4, 6), dim=3),
    "fftshift 0-d": lambda L: L.fft.fftshift(L.tensor(1.0)),
    "fftshift 0-d with dim": lambda L: L.fft.ifftshift(L.tensor(1.0), dim=0),
    "out= and requires grad": lambda L: L.fft.fft(L.randn(4, requires_grad=True), out=L.empty(4, dtype=L.cfloat)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(ERRORS[name])


# ---- frequencies, shifts, out= ----
@pytest.mark.parametrize("fname", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d,dtype", [(1, 1.0, None), (5, 1.0, None), (8, 0.1, None), (7, 0.3, "float64"),
                                       (10, 2.5, "float32"), (0, 1.0, None), (6, 0.0, None), (9, 1e-3, "float16"),
                                       (4, 2, "float64")])
def test_frequencies_bit_for_bit(fname, n, d, dtype):
    got, want = (getattr(lib.fft, fname)(n, d, dtype=None if dtype is None else getattr(lib, dtype))
                 for lib in (microtorch, real_torch))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.numpy().tobytes() == want.numpy().tobytes(), (got, want)


def test_frequencies_keywords_as_torch():
    for lib in LIBS:
        f = lib.fft.fftfreq(4, d=lib.tensor(2.0), requires_grad=True)
        assert f.requires_grad and f.is_leaf and f.tolist() == [0.0, 0.125, -0.25, -0.125]
        out = lib.empty(3, dtype=lib.float64)
        assert lib.fft.rfftfreq(5, out=out) is out and out.tolist() == [0.0, 0.2, 0.4]
        assert lib.fft.fftfreq(3, device="cpu").device.type == "cpu"


@pytest.mark.parametrize("shape,dim", [((7,), None), ((4, 6), None), ((4, 5), 0), ((3, 4, 5), (-1, 0)),
                                       ((4, 6), [0, 1]), ((4, 6), (0, 0))])
@pytest.mark.parametrize("fname", ["fftshift", "ifftshift"])
def test_shifts_as_torch(fname, shape, dim):
    a = np.arange(np.prod(shape)).reshape(shape)
    want = getattr(real_torch.fft, fname)(real_torch.tensor(a), dim=dim)
    got = getattr(microtorch.fft, fname)(microtorch.tensor(a), dim=dim)
    assert got.dtype == microtorch.int64 and got.tolist() == want.tolist()
    freqs = [lib.fft.fftshift(lib.fft.fftfreq(shape[-1], dtype=lib.float64)).tolist() for lib in LIBS]
    assert freqs[0] == freqs[1]


def test_shift_round_trip_and_node_as_torch():
    for lib in LIBS:
        x = lib.arange(30.0).reshape(5, 6).requires_grad_()
        y = lib.fft.ifftshift(lib.fft.fftshift(x))
        assert y.tolist() == x.tolist()
        assert y.grad_fn.name() == "RollBackward0"
        assert (y.grad_fn._saved_dims, y.grad_fn._saved_shifts) == ((0, 1), (3, 3))


@pytest.mark.parametrize("name,kw,out_dtype", [("fft", {}, "complex64"), ("rfft", {}, "complex128"),
                                               ("ifft2", {}, "complex64"), ("irfft", {}, "float32"),
                                               ("irfftn", {"s": (4, 6)}, "float64"), ("hfft", {"n": 7}, "float32")])
def test_out_as_torch(name, kw, out_dtype):
    a = _input((4, 6), "complex64" if name.startswith(("i", "h")) and name != "ifft2" else "float32")
    results = []
    for lib in LIBS:
        out = lib.empty(2, dtype=getattr(lib, out_dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = getattr(lib.fft, name)(lib.tensor(a), out=out, **kw)
        assert r is out
        results.append((r, len(caught)))
    _same_values(results[1][0], results[0][0], True)
    assert results[1][1] == results[0][1]


def test_import_forms():
    import microtorch.fft as F
    from microtorch import fft as G
    assert F is G is microtorch.fft is mt_fft
    assert sorted(F.__all__) == sorted(n for n in dir(real_torch.fft) if not n.startswith("_")
                                       and callable(getattr(real_torch.fft, n)) and n != "Tensor")


def test_stft_keeps_its_nodes_and_values():
    """stft and istft call the generalized ops over the frame dim"""
    a = rng.standard_normal(64)
    got = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        w = lib.hann_window(16, dtype=lib.float64)
        s = lib.stft(x, 16, 4, window=w, return_complex=True, normalized=True)
        y = lib.istft(s, 16, 4, window=w, normalized=True)
        c = lib.istft(lib.stft(x * (1 + 0.5j), 16, 4, window=w, return_complex=True, onesided=False), 16, 4,
                      window=w, return_complex=True, onesided=False)
        (y.sum() + c.abs().sum()).backward()
        ffts = [[n for n in graph_names(t) if n.startswith("Fft")] for t in (y, c)]
        got.append((_value(s), _value(y), _value(c), x.grad.numpy(), ffts))
    for m, t in zip(got[1][:4], got[0][:4]):
        close(m, t, "stft", 1e-12)
    assert got[1][4:] == got[0][4:]


# ---- the layers of the teaching code ----
def _fnet_losses(lib, steps=4):
    """an FNet encoder block: the token mixing is the real part of a 2-d FFT over (tokens, features)"""
    g = np.random.default_rng(5)
    x = lib.tensor(g.standard_normal((2, 8, 16)).astype("float32"))
    target = lib.tensor(g.standard_normal((2, 8, 16)).astype("float32"))
    lin1, lin2, norm = lib.nn.Linear(16, 32), lib.nn.Linear(32, 16), lib.nn.LayerNorm(16)
    with lib.no_grad():
        for p, shape in ((lin1.weight, (32, 16)), (lin1.bias, (32,)), (lin2.weight, (16, 32)), (lin2.bias, (16,))):
            p.copy_(lib.tensor(g.standard_normal(shape).astype("float32") * 0.2))
    params = list(lin1.parameters()) + list(lin2.parameters()) + list(norm.parameters())
    opt = lib.optim.Adam(params, lr=1e-2)
    losses = []
    for _ in range(steps):
        mixed = lib.fft.fft(lib.fft.fft(x, dim=-1), dim=-2).real
        h = norm(x + mixed)
        y = norm(h + lin2(lib.nn.functional.gelu(lin1(h))))
        loss = ((y - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_fnet_block_trains_as_torch():
    want, got = _fnet_losses(real_torch), _fnet_losses(microtorch)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _spectral_conv(lib, x, w1, w2, modes):
    """a Fourier neural operator's layer: the lowest modes (both signs along the first dim) times complex weights"""
    b, _, h, w = x.shape
    x_ft = lib.fft.rfft2(x)
    out_ft = lib.zeros(b, w1.shape[1], h, w // 2 + 1, dtype=lib.cfloat)
    out_ft[:, :, :modes, :modes] = lib.einsum("bixy,ioxy->boxy", x_ft[:, :, :modes, :modes], w1)
    out_ft[:, :, -modes:, :modes] = lib.einsum("bixy,ioxy->boxy", x_ft[:, :, -modes:, :modes], w2)
    return lib.fft.irfft2(out_ft, s=(h, w))


def _fno_run(lib, steps=5):
    g = np.random.default_rng(7)
    x = lib.tensor(g.standard_normal((3, 2, 8, 8)).astype("float32"))
    target = lib.tensor(g.standard_normal((3, 2, 8, 8)).astype("float32"))
    scale = 1 / 4

    def weight():
        return lib.nn.Parameter(lib.tensor((scale * (g.random((2, 2, 3, 3)) + 1j * g.random((2, 2, 3, 3))))
                                           .astype("complex64")))
    w1, w2 = weight(), weight()
    opt = lib.optim.Adam([w1, w2], lr=5e-2)
    losses = []
    for _ in range(steps):
        loss = ((_spectral_conv(lib, x, w1, w2, 3) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, w1.detach(), w1.grad


def test_fourier_neural_operator_layer_trains_as_torch():
    (want, tw, tg), (got, mw, mg) = _fno_run(real_torch), _fno_run(microtorch)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert str(mw.dtype).endswith("complex64") and str(mg.dtype).endswith("complex64")
    _same_values(mw, tw, True)
    _same_values(mg, tg, True)


def test_conj_physical_has_its_own_node_as_torch():
    """torch.conj_physical (ihfft2 and ihfftn use it): ConjPhysicalBackward0, the gradient conjugated back"""
    a = _input((3, 4), "complex128")
    seen = []
    for lib in LIBS:
        z = lib.tensor(a, requires_grad=True)
        y = lib.conj_physical(z)
        (y * lib.tensor(a)).abs().sum().backward()
        x = lib.tensor(a.real, requires_grad=True)
        seen.append((y.grad_fn.name(), z.grad.numpy(), z.conj_physical().grad_fn.name(), lib.conj_physical(x) is x))
    assert seen[1][0] == seen[0][0] and seen[1][2:] == seen[0][2:]
    close(seen[1][1], seen[0][1], "grad", 1e-12)


@pytest.mark.parametrize("opt,kw", [(opt, kw) for opt in ("Adam", "AdamW")
                                    for kw in ({}, {"weight_decay": 0.1}, {"amsgrad": True}, {"maximize": True})]
                         + [("Adam", {"weight_decay": 0.1, "decoupled_weight_decay": True})])
def test_adam_steps_a_complex_parameter_as_torch(opt, kw):
    """torch views a complex parameter, its gradient and the moments as real pairs: each part its own moments"""
    g = np.random.default_rng(3)
    w0 = (g.standard_normal((3, 4)) + 1j * g.standard_normal((3, 4))).astype("complex64")
    x = (g.standard_normal((5, 3)) + 1j * g.standard_normal((5, 3))).astype("complex64")
    runs = []
    for lib in LIBS:
        w = lib.nn.Parameter(lib.tensor(w0))
        o = getattr(lib.optim, opt)([w], lr=0.05, **kw)
        for _ in range(4):
            loss = (lib.tensor(x) @ w).abs().pow(2).mean()
            o.zero_grad()
            loss.backward()
            o.step()
        runs.append(w.detach())
    _same_values(runs[1], runs[0], True)
