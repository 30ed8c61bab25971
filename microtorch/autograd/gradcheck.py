"""gradcheck and gradgradcheck: finite differences against autograd, with the Jacobians kept.

`check(func, inputs, ...)` does the work and returns a `GradcheckReport`: for every
(differentiable output i, differentiable input j) the numerical Jacobian (central differences,
one input element at a time) and the analytical one (one backward per output element), as
numpy arrays of shape (output.numel(), input.numel()), plus the verdict of every extra check.
`gradcheck` keeps torch's contract on top of it: True, or `GradcheckError` with torch's
message ("Jacobian mismatch for output i with respect to input j, numerical: ... analytical:
..."), or False when `raise_exception=False`.

Indices follow torch's messages: output i counts the outputs that require grad, input j the
inputs that require grad. Messages print torch's layout (input.numel(), output.numel()); the
report's arrays are the usual Jacobian (row = output element, column = input element).

Complex numbers, as torch does it. For a complex input z = x + iy and a real output s, the
gradient torch computes is ds/dx + i ds/dy (twice the conjugate Wirtinger derivative
ds/dz*); that is what is compared (pair kind "conj_wirtinger"; its conjugate, the Wirtinger
derivative, is reported as kind "wirtinger"). A complex output f = u + iv is checked as two
real functions u (kind "real_part") and v (kind "imag_part"); from those the report also
derives f's Wirtinger pair, df/dx - i df/dy and df/dx + i df/dy (0 for a holomorphic f).
Fast mode is for real-to-real functions; with complex inputs or outputs it falls back to the
slow mode, as the documentation says. microtorch has no sparse tensors: `masked` is accepted
and has no effect.
"""
import importlib
import sys
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._tensor import Tensor
from . import engine, extension

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "check", "check_gradgrad",
           "GradcheckReport", "JacobianPair", "FastModeResult", "FastPair"]


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


# ---- the report ---------------------------------------------------------------------------------
@dataclass
class JacobianPair:
    """The numerical and analytical Jacobian of one (output, input) pair.

    Arrays have shape (output.numel(), input.numel()). `mask` is True where
    |analytical - numerical| > atol + rtol * |numerical| (the failing entries). `checked` is
    False for the Wirtinger pairs derived from the real and imaginary parts (shown, not
    judged); `mode` is "backward" (reverse mode) or "forward" (check_forward_ad)."""
    output_index: int
    input_index: int
    numerical: np.ndarray
    analytical: np.ndarray
    mask: np.ndarray
    max_abs_error: float
    max_rel_error: float
    worst: tuple
    passed: bool
    output_shape: tuple
    input_shape: tuple
    kind: str = "real"
    checked: bool = True
    mode: str = "backward"
    output_arg: int = 0
    input_arg: int = 0

    def __repr__(self):
        return (f"JacobianPair(output {self.output_index}, input {self.input_index}, kind={self.kind!r}, "
                f"{self.mode}, {'passed' if self.passed else 'FAILED'}, shape={self.numerical.shape}, "
                f"max_abs_error={self.max_abs_error:.3g}, worst={self.worst})")


@dataclass
class FastPair:
    """fast_mode's comparison for one pair: the scalars v^T J u, and the scaled atol used."""
    output_index: int
    input_index: int
    numerical: complex
    analytical: complex
    atol: float
    passed: bool


@dataclass
class FastModeResult:
    """The random vectors of fast_mode (u per input, v per output, flat and unit-norm) and the
    scalars v^T J u it compared, one `FastPair` per (output, input)."""
    u: list
    v: list
    pairs: list = field(default_factory=list)


@dataclass
class GradcheckReport:
    """What gradcheck found. `checks` maps each check to True, False or None (not run)."""
    passed: bool
    message: str
    pairs: list
    checks: dict
    fast: object
    inputs: tuple
    outputs: tuple
    eps: float
    atol: float
    rtol: float
    fast_mode: bool = False

    def __repr__(self):
        failed = [k for k, v in self.checks.items() if v is False]
        ran = [k for k, v in self.checks.items() if v is not None]
        return (f"GradcheckReport({'passed' if self.passed else 'FAILED'}, {len(self.pairs)} Jacobian pairs, "
                f"checks run: {ran}" + (f", failed: {failed}" if failed else "") + ")")

    def pair(self, output_index=0, input_index=0, kind=None, mode="backward"):
        """The pair for (output i, input j): the first checked one unless `kind` is given."""
        for p in self.pairs:
            if (p.output_index, p.input_index, p.mode) == (output_index, input_index, mode) and \
                    (p.kind == kind if kind is not None else p.checked):
                return p
        raise KeyError(f"no {mode} Jacobian pair for output {output_index}, input {input_index}"
                       + (f" of kind {kind!r}" if kind else ""))


CHECK_NAMES = ("no_overlap", "backward_ad", "nondet", "grad_dtypes", "forward_ad", "batched_forward_grad",
               "batched_grad", "mul_by_grad_output", "undefined_grad")


class _Failure(Exception):
    """A failed check inside `check` (becomes GradcheckError, or another type torch uses)."""

    def __init__(self, message, check, exc_type=GradcheckError):
        super().__init__(message)
        self.message, self.check, self.exc_type = message, check, exc_type


# ---- small helpers ------------------------------------------------------------------------------
def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_diff(t):
    return isinstance(t, Tensor) and t.requires_grad


def _is_float_or_complex(t):
    return isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_diff(o))


def _t(arr):
    """How a message prints an array: as a microtorch Tensor, or a scalar as a Python number."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return arr.item()
    return Tensor._make(np.array(arr, order="C"))


def _allclose_mask(a, n, rtol, atol):
    """True where a and n are NOT close: torch.isclose(a, n, rtol, atol) negated."""
    dt = np.result_type(a, n)
    a, n = np.asarray(a, dt), np.asarray(n, dt)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(a - n) <= atol + rtol * np.abs(n)
        close |= a == n
    return ~close


def _errors(a, n):
    dt = np.result_type(a, n)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(np.asarray(a, dt) - np.asarray(n, dt))
        if diff.size == 0:
            return 0.0, 0.0, None
        scale = np.abs(np.asarray(n, dt))
        rel = np.where(diff == 0, 0.0, diff / scale)
    worst = np.unravel_index(int(np.nanargmax(diff)) if not np.all(np.isnan(diff)) else 0, diff.shape)
    return float(np.nanmax(diff)) if not np.all(np.isnan(diff)) else float("nan"), \
        float(np.nanmax(rel)) if not np.all(np.isnan(rel)) else float("nan"), tuple(int(i) for i in worst)


def _make_pair(i, j, num, ana, rtol, atol, out_t, in_t, kind, checked=True, mode="backward", out_arg=0,
               in_arg=0):
    mask = _allclose_mask(ana, num, rtol, atol)
    max_abs, max_rel, worst = _errors(ana, num)
    return JacobianPair(i, j, num, ana, mask, max_abs, max_rel, worst, not bool(mask.any()),
                        tuple(out_t.shape), tuple(in_t.shape), kind, checked, mode, out_arg, in_arg)


def _derived_wirtinger(real_part, imag_part):
    """From the checked matrices of Re f and Im f (entries d/dx + i d/dy), f's Wirtinger pair:
    df/dx - i df/dy ("wirtinger") and df/dx + i df/dy ("conj_wirtinger")."""
    fx = real_part.real + 1j * imag_part.real
    fy = real_part.imag + 1j * imag_part.imag
    return fx - 1j * fy, fx + 1j * fy


def _notallclose_msg(analytical, numerical, output_idx, input_idx, complex_part=None, forward=False):
    """torch's message. `analytical`/`numerical` are printed as given (torch's layout)."""
    prefix = ""
    if complex_part is not None:
        prefix = f"While considering the {complex_part} part of complex {'inputs' if forward else 'outputs'} only, "
    mode = "computed with forward mode " if forward else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{_t(numerical)}\nanalytical:{_t(analytical)}\n")


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations (results that vary from run to run,
e.g. random numbers or an order-dependent sum in backward), this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, call gradcheck/gradgradcheck with `fast_mode=False`
as a keyword argument.
""".strip()

FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation; the most common failure is a vmap-incompatible operation in the backward.
If this is expected, call gradcheck/gradgradcheck with `check_batched_grad=False`.
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
If this is expected, call gradcheck with `check_batched_forward_grad=False`.
"""


def _batched_msg(output_idx, input_idx, res, exp, forward=False):
    return (f"For output {output_idx} and input {input_idx}:\n\n"
            f"{FAILED_BATCHED_GRAD_MSG_FWD_AD if forward else FAILED_BATCHED_GRAD_MSG}\n\n"
            f"Got:\n{res!r}\n\nExpected:\n{exp!r}").strip()


# ---- the pieces of a check ----------------------------------------------------------------------
class _Call:
    """One call of check(): the function, its inputs and the options."""

    def __init__(self, func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes):
        self.func = func
        self.inputs = _as_tuple(inputs)
        self.eps, self.atol, self.rtol, self.nondet_tol = eps, atol, rtol, nondet_tol
        self.check_grad_dtypes = check_grad_dtypes
        self.diff = [(p, t) for p, t in enumerate(self.inputs) if _is_diff(t)]
        self.diff_tensors = [t for _, t in self.diff]

    def run(self):
        return _as_tuple(self.func(*self.inputs))

    def evaluate(self):
        """func at the current (perturbed) inputs: copies of the outputs' arrays."""
        return [np.array(o._data, copy=True) if isinstance(o, Tensor) else None for o in self.run()]

    def vjp(self, output, grad_output, inputs=None):
        return engine.grad(output, inputs if inputs is not None else self.diff_tensors,
                           Tensor._make(grad_output), retain_graph=True, allow_unused=True)


def _check_same(a, b, eps, idx):
    on_index = f"on index {idx} " if idx is not None else ""
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                             f"{on_index}by {eps}, but got: shapes {a.shape} and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                             f"{on_index}by {eps}, but got: dtypes {a.dtype} and {b.dtype}.")


class _Writable:
    """Perturb a tensor's array in place (a read-only array is swapped for a copy meanwhile)."""

    def __init__(self, t):
        self.t, self.orig = t, None
        if not t._data.flags.writeable:
            self.orig = t._data
            t._data = t._data.copy()

    def restore(self):
        if self.orig is not None:
            self.t._data = self.orig


def _numerical(call, out_positions, eps):
    """Central differences, one input element at a time.

    Returns num[k][j] = (Jx, Jy) for output position out_positions[k] and diff input j:
    d out / dx and (complex inputs only) d out / dy, each (out.numel(), in.numel()), in the
    output's dtype (complex for complex outputs)."""
    result = [[None] * len(call.diff) for _ in out_positions]
    for j, (_, t) in enumerate(call.diff):
        w = _Writable(t)
        try:
            data = t._data
            n = data.size
            cols_x = [None] * len(out_positions)
            cols_y = [None] * len(out_positions)
            directions = (1, 1j) if data.dtype.kind == "c" else (1,)
            for k, idx in enumerate(np.ndindex(data.shape)):
                orig = data[idx].copy()
                for d in directions:
                    data[idx] = orig - eps * d
                    outa = call.evaluate()
                    data[idx] = orig + eps * d
                    outb = call.evaluate()
                    data[idx] = orig
                    for a, b in zip(outa, outb):
                        if a is not None and b is not None:
                            _check_same(a, b, eps, idx)
                    store = cols_x if d == 1 else cols_y
                    for m, pos in enumerate(out_positions):
                        col = ((outb[pos] - outa[pos]) / (2 * eps)).reshape(-1)
                        if store[m] is None:
                            store[m] = np.zeros((col.size, n), dtype=col.dtype)
                        store[m][:, k] = col
        finally:
            w.restore()
        for m, pos in enumerate(out_positions):
            if cols_x[m] is None:  # an input without elements
                out = call.evaluate()[pos]
                cols_x[m] = np.zeros((out.size, 0), dtype=np.result_type(out.dtype, np.float32))
                if len(directions) == 2:
                    cols_y[m] = cols_x[m].copy()
            result[m][j] = (cols_x[m], cols_y[m] if len(directions) == 2 else None)
    return result


def _analytical(call, output, scale=1):
    """One backward per output element: row r of J[j] is the gradient wrt diff input j of
    output.flat[r] (times `scale`, 1j for the imaginary part of a complex output).

    Returns (jacobians, sizes_ok, types_ok)."""
    numel = output.numel()
    dt = output.dtype.np
    jac = [np.zeros((numel, t.numel()), dtype=t.dtype.np) for t in call.diff_tensors]
    sizes_ok = types_ok = True
    for r in range(numel):
        go = np.zeros(output._data.shape, dtype=dt)
        go.reshape(-1)[r] = scale
        grads = call.vjp(output, go)
        for j, (g, t) in enumerate(zip(grads, call.diff_tensors)):
            if g is None:
                continue
            if g.shape != t.shape:
                sizes_ok = False
                continue
            if g.dtype is not t.dtype:
                types_ok = False
            jac[j][r, :] = g._data.reshape(-1)
    return jac, sizes_ok, types_ok


def _reentrant(j1, j2, tol):
    for a, b in zip(j1, j2):
        if a.size and np.max(np.abs(a - b)) > tol:
            return False
    return True


def _attribute_failures(sizes_ok, types_ok, reentrant, call):
    """torch's _check_analytical_jacobian_attributes verdicts, in its order."""
    fails = []
    if not types_ok and call.check_grad_dtypes:
        fails.append(_Failure("Gradient has dtype mismatch", "grad_dtypes"))
    if not sizes_ok:
        fails.append(_Failure("Analytical gradient has incorrect size", "backward_ad"))
    if not reentrant:
        fails.append(_Failure(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {call.nondet_tol}." + FAILED_NONDET_MSG, "nondet"))
    return fails


def _analytical_checked(call, output, scale):
    """The analytical Jacobian, computed twice to check for nondeterminism (reentrancy)."""
    jac1, sizes_ok, types_ok = _analytical(call, output, scale)
    jac2, _, _ = _analytical(call, output, scale)
    return jac1, _attribute_failures(sizes_ok, types_ok, _reentrant(jac1, jac2, call.nondet_tol), call)


class _Result:
    """Failures in torch's order, the pairs and the check verdicts."""

    def __init__(self):
        self.failures = []
        self.pairs = []
        self.checks = {name: None for name in CHECK_NAMES}
        self.fast = None

    def fail(self, failure):
        self.failures.append(failure)
        if failure.check in self.checks:
            self.checks[failure.check] = False

    def ok(self, *names):
        for name in names:
            if self.checks.get(name) is None:
                self.checks[name] = True

    def ok_backward(self, call):
        self.ok("backward_ad", "nondet")
        if call.check_grad_dtypes:
            self.ok("grad_dtypes")


# ---- slow mode, reverse ------------------------------------------------------------------------
def _slow_backward(call, outputs, out_positions, res, build_pairs=True):
    """Every pair's Jacobians; failures in the order torch raises them."""
    num = _numerical(call, out_positions, call.eps)
    any_complex_out = any(o.is_complex() for o in outputs)
    # analytical[i] = {"real": jacobians} or {"real_part": ..., "imag_part": ...}, one per diff input
    analytical, attr_fails = [], []
    for o in outputs:
        if o.is_complex():
            ji, fi = _analytical_checked(call, o, 1j)
            jr, fr = _analytical_checked(call, o, 1)
            analytical.append({"imag_part": ji, "real_part": jr})
            attr_fails.append({"imag_part": fi, "real_part": fr})
        else:
            jr, fr = _analytical_checked(call, o, 1)
            analytical.append({"real": jr})
            attr_fails.append({"real": fr})

    def numerical_part(i, j, part):
        jx, jy = num[i][j]
        if part == "real":
            return jx if jy is None else jx + 1j * jy
        f = np.real if part == "real_part" else np.imag
        return f(jx) if jy is None else f(jx) + 1j * f(jy)

    # torch checks the imaginary parts first (over all outputs), then the real parts; a real
    # output is the same in both passes, so it can only fail in the first
    passes = ("imag_part", "real_part") if any_complex_out else (None,)
    for which in passes:
        for i, o in enumerate(outputs):
            if not o.is_complex() and which == "real_part":
                continue
            part = "real" if not o.is_complex() else which
            for f in attr_fails[i][part]:
                res.fail(f)
            for j, t in enumerate(call.diff_tensors):
                a = analytical[i][part][j]
                n = numerical_part(i, j, part)
                if _allclose_mask(a, n, call.rtol, call.atol).any():
                    part_name = {"imag_part": "imaginary", "real_part": "real"}.get(which) if o.is_complex() else None
                    res.fail(_Failure(_notallclose_msg(a.T, n.T, i, j, part_name), "backward_ad"))
    res.ok_backward(call)
    if build_pairs:
        res.pairs.extend(_backward_pairs(call, outputs, out_positions, num, analytical, numerical_part))
    return num, analytical


def _backward_pairs(call, outputs, out_positions, num, analytical, numerical_part):
    pairs = []
    for i, o in enumerate(outputs):
        for j, (in_arg, t) in enumerate(call.diff):
            common = dict(out_t=o, in_t=t, out_arg=out_positions[i], in_arg=in_arg)
            if not o.is_complex():
                a, n = analytical[i]["real"][j], numerical_part(i, j, "real")
                kind = "conj_wirtinger" if t.is_complex() else "real"
                pairs.append(_make_pair(i, j, n, a, call.rtol, call.atol, kind=kind, **common))
                if t.is_complex():
                    pairs.append(_make_pair(i, j, n.conj(), a.conj(), call.rtol, call.atol, kind="wirtinger",
                                            checked=False, **common))
                continue
            parts = {}
            for part in ("real_part", "imag_part"):
                a, n = analytical[i][part][j], numerical_part(i, j, part)
                parts[part] = (n, a)
                pairs.append(_make_pair(i, j, n, a, call.rtol, call.atol, kind=part, **common))
            if t.is_complex():
                wn, cn = _derived_wirtinger(parts["real_part"][0], parts["imag_part"][0])
                wa, ca = _derived_wirtinger(parts["real_part"][1], parts["imag_part"][1])
                pairs.append(_make_pair(i, j, wn, wa, call.rtol, call.atol, kind="wirtinger", checked=False,
                                        **common))
                pairs.append(_make_pair(i, j, cn, ca, call.rtol, call.atol, kind="conj_wirtinger",
                                        checked=False, **common))
    return pairs


def _no_differentiable_outputs(call, func_out, res, fast_u=None):
    """No output requires grad: the numerical gradient must then be zero."""
    positions = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]
    if fast_u is None:
        num = _numerical(call, positions, call.eps)
        bad = any(np.any(m != 0) for row in num for jx_jy in row for m in jx_jy if m is not None)
    else:
        bad = False
        for j, u in enumerate(fast_u):
            for jvp in _numerical_jvp(call, j, u, call.eps):
                if jvp is not None and jvp.size and np.max(np.abs(jvp)) > call.nondet_tol:
                    bad = True
    if bad:
        res.fail(_Failure("Numerical gradient for function expected to be zero", "backward_ad"))
    else:
        res.ok("backward_ad")


# ---- fast mode, reverse ------------------------------------------------------------------------
_FAST_SEED = 67280421310721  # torch's default generator seed; a fixed stream leaves the user's RNG alone


def _unit(rng, n, dtype):
    v = rng.random(n).astype(dtype)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def _numerical_jvp(call, j, u, eps):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for diff input j, every output (flat)."""
    t = call.diff_tensors[j]
    w = _Writable(t)
    try:
        data = t._data
        orig = data.copy()
        delta = (u * eps).astype(data.dtype).reshape(data.shape)
        data[...] = orig - delta
        outa = call.evaluate()
        data[...] = orig + delta
        outb = call.evaluate()
        data[...] = orig
    finally:
        w.restore()
    jvps = []
    for a, b in zip(outa, outb):
        if a is None or b is None:
            jvps.append(None)
            continue
        _check_same(a, b, eps, None)
        jvps.append(((b - a) / (2 * eps)).reshape(-1))
    return jvps


def _fast_backward(call, func_out, outputs, out_positions, res):
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), t.dtype.np) for t in call.diff_tensors]
    all_v = [_unit(rng, o.numel(), o.dtype.np) for o in outputs]
    res.fast = FastModeResult(all_u, all_v)
    if not outputs:
        _no_differentiable_outputs(call, func_out, res, fast_u=all_u)
        return
    # numerical v^T (J u), one pair of evaluations per input
    numerical = []
    for j, u in enumerate(all_u):
        jvps = _numerical_jvp(call, j, u, call.eps)
        numerical.append([np.sum(v * jvps[pos]) for v, pos in zip(all_v, out_positions)])
    # analytical (v^T J) u: one backward per output, twice (reentrancy); torch checks the
    # attributes of every output before comparing any pair
    analytical = []
    for o, v in zip(outputs, all_v):
        runs = [call.vjp(o, v.reshape(o._data.shape)) for _ in range(2)]
        flat = [[np.zeros(t.numel(), t.dtype.np) if g is None else g._data.reshape(-1).copy()
                 for g, t in zip(grads, call.diff_tensors)] for grads in runs]
        sizes_ok = all(g is None or g.shape == t.shape for g, t in zip(runs[0], call.diff_tensors))
        types_ok = all(g is None or g.dtype is t.dtype for g, t in zip(runs[0], call.diff_tensors))
        for f in _attribute_failures(sizes_ok, types_ok, _reentrant(flat[0], flat[1], call.nondet_tol), call):
            res.fail(f)
        analytical.append([np.dot(x, u) if x.shape == u.shape else np.nan for x, u in zip(flat[0], all_u)])
    first_bad = None
    for j, u in enumerate(all_u):          # torch's order: inputs outer, outputs inner
        for i, v in enumerate(all_v):
            a, n = analytical[i][j], numerical[j][i]
            tol = call.atol * float(np.sum(u)) * float(np.sum(v))
            passed = not bool(_allclose_mask(np.asarray(a), np.asarray(n), call.rtol, tol))
            res.fast.pairs.append(FastPair(i, j, np.asarray(n).item(), np.asarray(a).item(), tol, passed))
            if not passed and first_bad is None:
                first_bad = (i, j, a, n)
    if first_bad is None:
        res.ok_backward(call)
        return
    # on failure, report what the slow mode finds (all pairs; the message names the first)
    i, j, a, n = first_bad
    scratch = _Result()
    _slow_backward(call, outputs, out_positions, scratch)
    res.pairs.extend(scratch.pairs)
    slow = next(p for p in scratch.pairs if (p.output_index, p.input_index) == (i, j))
    slow_allclose = slow.passed
    msg = (_notallclose_msg(np.asarray(a), np.asarray(n), i, j) +
           "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_t(slow.numerical.T)}\nAnalytical:\n{_t(slow.analytical.T)}\n\n"
           f"The max per-element difference (slow mode) is: {slow.max_abs_error}.\n")
    if slow_allclose:
        msg += FAST_FAIL_SLOW_OK_MSG
    res.fail(_Failure(msg, "backward_ad"))
    res.ok_backward(call)


# ---- forward mode and vmap ------------------------------------------------------------------------
def _forward_ad():
    from . import forward_ad
    return forward_ad


def _vmap(option):
    return extension.transforms().vmap


def _tangent_of(fwAD, out):
    unpacked = fwAD.unpack_dual(out)
    return unpacked[0], unpacked[1]


def _jvp_outputs(call, fwAD, j, tangent):
    """Run func with diff input j dual (tangent) and the other diff inputs dual with zeros;
    the tangents of the float/complex outputs (None where there is none)."""
    from .._creation import zeros_like
    with fwAD.dual_level():
        args = list(call.inputs)
        for k, (pos, t) in enumerate(call.diff):
            tan = tangent if k == j else zeros_like(t.detach())
            args[pos] = fwAD.make_dual(t.detach(), tan)
        outs = _as_tuple(call.func(*args))
        result = []
        for o in outs:
            if not _is_float_or_complex(o):
                continue
            primal, tan = _tangent_of(fwAD, o)
            if call.check_grad_dtypes and tan is not None and primal.is_complex() != tan.is_complex():
                raise _Failure("Forward AD gradient has dtype mismatch.", "grad_dtypes")
            result.append(None if tan is None else np.array(tan._data, copy=True).reshape(-1))
        return result


def _slow_forward(call, res, num=None):
    """Forward-mode Jacobians (one jvp per input element) against the numerical ones."""
    fwAD = _forward_ad()
    fo = [o for o in call.run()]
    positions = [k for k, o in enumerate(fo) if _is_float_or_complex(o)]
    diff_positions = [k for k in positions if fo[k].requires_grad]
    if num is None or len(num) != len(diff_positions):
        num = _numerical(call, diff_positions, call.eps)
    any_complex_in = any(t.is_complex() for t in call.diff_tensors)
    # analytical columns: for each diff input j and direction (1 or 1j), per output
    ana = []
    for j, t in enumerate(call.diff_tensors):
        dirs = {}
        for d in ((1, 1j) if t.is_complex() else (1,)):
            cols = None
            for k in range(t.numel()):
                tan = np.zeros(t._data.shape, t.dtype.np)
                tan.reshape(-1)[k] = d
                outs = _jvp_outputs(call, fwAD, j, Tensor._make(tan))
                outs = [outs[positions.index(p)] for p in diff_positions]
                if cols is None:
                    cols = [np.zeros((fo[p].numel(), t.numel()), dtype=np.result_type(fo[p].dtype.np, np.float32))
                            for p in diff_positions]
                for m, c in enumerate(outs):
                    if c is not None:
                        cols[m] = cols[m].astype(np.result_type(cols[m], c), copy=False)
                        cols[m][:, k] = c
            if cols is None:
                cols = [np.zeros((fo[p].numel(), 0)) for p in diff_positions]
            dirs[d] = cols
        ana.append(dirs)
    # torch perturbs the imaginary parts of complex inputs first, then the real parts; a real
    # input is the same in both passes, so it can only fail in the first
    passes = ("imaginary", "real") if any_complex_in else ("real",)
    for which in passes:
        for i in range(len(diff_positions)):
            for j, t in enumerate(call.diff_tensors):
                if not t.is_complex() and which != passes[0]:
                    continue
                slot = 1 if t.is_complex() and which == "imaginary" else 0
                a, n = ana[j][(1, 1j)[slot]][i], num[i][j][slot]
                if _allclose_mask(a, n, call.rtol, call.atol).any():
                    res.fail(_Failure(_notallclose_msg(a.T, n.T, i, j, which if t.is_complex() else None,
                                                       forward=True), "forward_ad"))
    # the pairs: for a complex input, its real and imaginary parts as the perturbed direction
    for i, p in enumerate(diff_positions):
        for j, t in enumerate(call.diff_tensors):
            kinds = [("real_part", 0), ("imag_part", 1)] if t.is_complex() else [("real", 0)]
            for kind, slot in kinds:
                res.pairs.append(_make_pair(i, j, num[i][j][slot], ana[j][(1, 1j)[slot]][i], call.rtol,
                                            call.atol, fo[p], t, kind, mode="forward", out_arg=p,
                                            in_arg=call.diff[j][0]))
    res.ok("forward_ad")
    if call.check_grad_dtypes:
        res.ok("grad_dtypes")


def _fast_forward(call, res):
    fwAD = _forward_ad()
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), t.dtype.np) for t in call.diff_tensors]
    fo = call.run()
    positions = [k for k, o in enumerate(fo) if _is_float_or_complex(o)]
    diff_positions = [k for k in positions if fo[k].requires_grad]
    ok = True
    for j, u in enumerate(all_u):
        n_all = _numerical_jvp(call, j, u, call.eps)
        a_all = _jvp_outputs(call, fwAD, j, Tensor._make(u.reshape(call.diff_tensors[j]._data.shape)))
        for i, p in enumerate(diff_positions):
            n = n_all[p]
            a = a_all[positions.index(p)]
            a = np.zeros_like(n) if a is None else a
            tol = call.atol * float(np.sum(u))
            if _allclose_mask(a, n, call.rtol, tol).any():
                ok = False
                # report the slow mode's Jacobians for this pair, as torch does
                scratch = _Result()
                _slow_forward(call, scratch)
                res.pairs.extend(scratch.pairs)
                slow = next(q for q in scratch.pairs if (q.output_index, q.input_index) == (i, j))
                msg = (_notallclose_msg(a, n, i, j, forward=True) +
                       "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
                       "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
                       "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
                       f"Numerical:\n {_t(slow.numerical.T)}\nAnalytical:\n{_t(slow.analytical.T)}\n\n"
                       f"The max per-element difference (slow mode) is: {slow.max_abs_error}.\n")
                if slow.passed:
                    msg += FAST_FAIL_SLOW_OK_MSG
                res.fail(_Failure(msg, "forward_ad"))
                return
    res.checks["forward_ad"] = ok


def _undefined_forward(call, res):
    """A dual input with a zero tangent and a plain input must give the same output tangents."""
    fwAD = _forward_ad()
    from .._creation import zeros_like
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), np.float64).astype(t.dtype.np) for t in call.diff_tensors]
    with fwAD.dual_level():
        duals = list(call.inputs)
        for (pos, t), u in zip(call.diff, all_u):
            duals[pos] = fwAD.make_dual(t.detach(), Tensor._make(u.reshape(t._data.shape)))
        for pos, t in call.diff:
            keep = duals[pos]
            duals[pos] = fwAD.make_dual(t.detach(), zeros_like(t.detach()))
            outs1 = [o for o in _as_tuple(call.func(*duals)) if _is_float_or_complex(o)]
            duals[pos] = t.detach()
            outs2 = [o for o in _as_tuple(call.func(*duals)) if _is_float_or_complex(o)]
            duals[pos] = keep
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                r1, r2 = _tangent_of(fwAD, o1)[1], _tangent_of(fwAD, o2)[1]
                if r1 is not None and r2 is not None and \
                        _allclose_mask(r1._data, r2._data, 1e-5, 1e-8).any():
                    res.fail(_Failure(f"Mismatch in tangent values for output with index: {index_o} when input: "
                                      f"{t!r} has an undefined tangent value.  Got: {r1!r} but expected: {r2!r}",
                                      "undefined_grad"))
                    return
    res.ok("undefined_grad")


def _batched_forward(call, res):
    fwAD = _forward_ad()
    vmap = _vmap("check_batched_forward_grad")
    from ..ops.shape import stack
    rng = np.random.default_rng(_FAST_SEED + 1)
    for j, (pos, t) in enumerate(call.diff):
        def jvp(tangent, pos=pos, t=t):
            with fwAD.dual_level():
                args = [a.detach() if isinstance(a, Tensor) else a for a in call.inputs]
                args[pos] = fwAD.make_dual(t.detach(), tangent)
                outs = []
                for o in _as_tuple(call.func(*args)):
                    if o is None:
                        continue
                    primal, tan = _tangent_of(fwAD, o)
                    outs.append(tan if tan is not None else
                                Tensor._make(np.zeros(primal._data.shape, primal.dtype.np)))
                return tuple(outs)
        tangents = [Tensor._make(rng.standard_normal(t._data.shape).astype(t.dtype.np)) for _ in range(2)]
        expected = [jvp(tn) for tn in tangents]
        expected = [stack(list(shards)) for shards in zip(*expected)]
        try:
            result = vmap(jvp)(stack(tangents))
        except Exception as ex:  # noqa: BLE001 - torch catches RuntimeError; microtorch's vmap may raise others
            res.fail(_Failure(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}",
                              "batched_forward_grad"))
            return
        for k, (r, e) in enumerate(zip(_as_tuple(result), expected)):
            if _allclose_mask(r._data, e._data, 1e-5, 1e-8).any():
                res.fail(_Failure(_batched_msg(k, k, r, e, forward=True), "batched_forward_grad"))
                return
    res.ok("batched_forward_grad")


# ---- the remaining reverse-mode checks ----------------------------------------------------------
def _batched_grad(call, output, output_idx, res):
    """vmap over the vjp agrees with a loop over two random grad_outputs."""
    vmap = _vmap("check_batched_grad")
    from ..ops.shape import stack

    def vjp(v):
        grads = engine.grad(output, call.diff_tensors, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else Tensor._make(np.zeros(t._data.shape, t.dtype.np))
                     for g, t in zip(grads, call.diff_tensors))

    rng = np.random.default_rng(_FAST_SEED + 2 + output_idx)
    grad_outputs = []
    for _ in range(2):
        g = rng.standard_normal(output._data.shape)
        if output.is_complex():
            g = g + 1j * rng.standard_normal(output._data.shape)
        grad_outputs.append(Tensor._make(g.astype(output.dtype.np)))
    expected = [vjp(g) for g in grad_outputs]
    expected = [stack(list(shards)) for shards in zip(*expected)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = vmap(vjp)(stack(grad_outputs))
        except Exception as ex:  # noqa: BLE001 - torch catches RuntimeError; microtorch's vmap may raise others
            return res.fail(_Failure(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}",
                                     "batched_grad"))
    for input_idx, (r, e) in enumerate(zip(_as_tuple(result), expected)):
        if _allclose_mask(r._data, e._data, 1e-5, 1e-8).any():
            return res.fail(_Failure(_batched_msg(output_idx, input_idx, r, e), "batched_grad"))
    res.ok("batched_grad")


def _mul_by_grad_output(call, outputs, res):
    """With zero grad_outputs every input gradient must be zero (backward uses its grad)."""
    if not call.diff_tensors:
        return res.fail(_Failure("no Tensors requiring grad found in input", "mul_by_grad_output"))
    if outputs:
        zeros = tuple(Tensor._make(np.zeros(o._data.shape, o.dtype.np)) for o in outputs)
        grads = engine.grad(outputs, call.diff_tensors, zeros, allow_unused=True, retain_graph=True)
    else:
        grads = (None,) * len(call.diff_tensors)
    for gi, di in zip(grads, call.diff_tensors):
        if gi is None:
            continue
        if not np.all(gi._data == 0):
            return res.fail(_Failure("backward not multiplied by grad_output", "mul_by_grad_output"))
        if gi.dtype is not di.dtype:
            return res.fail(_Failure("grad is incorrect type", "mul_by_grad_output"))
        if gi.shape != di.shape:
            return res.fail(_Failure("grad is incorrect size", "mul_by_grad_output"))
    res.ok("mul_by_grad_output")


def _undefined_grad_cls():
    from .function import Function

    class UndefinedGrad(Function):
        """The identity, whose backward passes on an undefined (None) gradient."""

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return None

    return UndefinedGrad


_UNDEFINED = []

_UNDEFINED_MSG = ('Expected backward function to handle undefined output grads. Please look at "Notes about '
                  'undefined output gradients" in "tools/autograd/derivatives.yaml"')
_BC_WARNING = ("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
               "but it may break existing callers of this function. If this is true for you, you can call this "
               'function with "check_undefined_grad=False" to disable the feature')


def _undefined_backward(call, outputs, res, quiet=False):
    """Backward copes with output gradients that are undefined (None): all of them, then one
    at a time. (microtorch's engine never runs a node whose incoming gradients are all
    undefined, so the first case can only fail through the nodes it does run.)"""
    if not _UNDEFINED:
        _UNDEFINED.append(_undefined_grad_cls())
    undefined = _UNDEFINED[0]
    if not call.diff_tensors:
        return res.fail(_Failure("no Tensors requiring grad found in input", "undefined_grad"))

    def bc_warn():
        if not quiet:
            warnings.warn(_BC_WARNING, stacklevel=5)

    def check_one(outs):
        zeros = tuple(Tensor._make(np.zeros(o._data.shape, o.dtype.np)) for o in outs)
        try:
            grads = engine.grad(outs, call.diff_tensors, zeros, allow_unused=True) if outs else ()
        except RuntimeError as e:  # other exception types propagate, as in torch
            bc_warn()
            raise _Failure(_UNDEFINED_MSG + f"\n(backward raised {type(e).__name__}: {e})",
                           "undefined_grad") from e
        for gi in grads:
            if gi is not None and not np.all(gi._data == 0):
                bc_warn()
                raise _Failure("Expected all input grads to be undefined or zero when all output grads are "
                               'undefined or zero. Please look at "Notes about undefined output gradients" in '
                               '"tools/autograd/derivatives.yaml"', "undefined_grad")

    def check_nodes(outs):
        # torch still calls a Function's backward when all its output gradients are undefined
        # (None, or zeros if it materializes them); microtorch's engine skips such a node, so
        # call the nodes that made the outputs directly, as torch's engine would.
        from .function import BackwardFunction
        seen = set()
        for o in outs:
            node = o.grad_fn
            if not isinstance(node, BackwardFunction) or id(node) in seen:
                continue
            seen.add(id(node))
            try:
                from .grad_mode import no_grad
                with no_grad():
                    grads = node._backward([None] * node._num_outputs)
            except RuntimeError as e:  # other exception types propagate, as in torch
                bc_warn()
                raise _Failure(_UNDEFINED_MSG + f"\n(backward raised {type(e).__name__}: {e})",
                               "undefined_grad") from e
            for gi in grads:
                if isinstance(gi, Tensor) and not np.all(gi._data == 0):
                    bc_warn()
                    raise _Failure("Expected all input grads to be undefined or zero when all output grads are "
                                   'undefined or zero. Please look at "Notes about undefined output gradients" '
                                   'in "tools/autograd/derivatives.yaml"', "undefined_grad")

    try:
        outs = _differentiable_outputs(call.run())
        check_nodes(outs)
        check_one([undefined.apply(o) for o in outs])
        if len(outputs) > 1:
            for k in range(len(outputs)):
                outs = _differentiable_outputs(call.run())
                check_one([undefined.apply(o) if m == k else o for m, o in enumerate(outs)])
    except _Failure as f:
        return res.fail(f)
    res.ok("undefined_grad")


# ---- inputs -------------------------------------------------------------------------------------
def _check_inputs(inputs, stacklevel):
    """torch's _check_inputs: warn on non-double inputs; an input with a stride-0 dimension
    (e.g. from expand) is refused, since perturbing one element would move others too."""
    any_diff = False
    for idx, inp in enumerate(inputs):
        if not _is_diff(inp):
            continue
        if inp.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                          "complex. This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex. ", stacklevel=stacklevel)
        if not all(st != 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
            return (f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck.")
        any_diff = True
    if not any_diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return None


def _validate_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad):
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    # fail early, before any work, when a needed transform does not exist yet
    if check_forward_ad:
        _forward_ad()
    if check_batched_grad:
        _vmap("check_batched_grad")
    if check_batched_forward_grad:
        _vmap("check_batched_forward_grad")


# ---- the public functions ---------------------------------------------------------------------
def check(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
          check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
          check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
          masked=None, _stacklevel=3):
    """Run gradcheck and return a `GradcheckReport` instead of a verdict.

    Takes gradcheck's options (`raise_exception` is accepted and ignored: a mismatch never
    raises here). Errors that are not mismatches still raise as in torch: no input requiring
    grad (ValueError), an option that needs a missing transform (NotImplementedError), or an
    exception from `func` or its backward."""
    _validate_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad)
    res = _Result()
    tupled = _as_tuple(inputs)
    overlap = _check_inputs(tupled, _stacklevel)
    snapshot_inputs = tuple(Tensor._make(t._data.copy()) if isinstance(t, Tensor) else t for t in tupled)
    if overlap is not None:
        res.fail(_Failure(overlap, "no_overlap", RuntimeError))
        return _report(res, snapshot_inputs, (), eps, atol, rtol, fast_mode)
    res.ok("no_overlap")

    call = _Call(func, tupled, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    func_out = call.run()
    outputs = _differentiable_outputs(func_out)
    out_positions = [k for k, o in enumerate(func_out) if _is_diff(o)]
    snapshot_outputs = tuple(Tensor._make(o._data.copy()) for o in outputs)
    complex_anywhere = any(o.is_complex() for o in func_out if isinstance(o, Tensor)) or \
        any(t.is_complex() for t in call.diff_tensors)

    def stage(fn, *args, **kwargs):
        """Run one check; once a check has failed, later ones only add information."""
        if not res.failures:
            try:
                return fn(*args, **kwargs)
            except _Failure as f:
                res.fail(f)
                return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return fn(*args, **kwargs)
            except _Failure as f:
                res.fail(f)
            except Exception:  # noqa: BLE001 - torch would have stopped at the earlier failure
                pass
        return None

    num = None
    if check_backward_ad:
        if not outputs:
            stage(_no_differentiable_outputs, call, func_out, res)
        elif fast_mode and not complex_anywhere:
            stage(_fast_backward, call, func_out, outputs, out_positions, res)
        else:
            got = stage(_slow_backward, call, outputs, out_positions, res)
            num = got[0] if got else None
    if check_forward_ad:
        if fast_mode and not complex_anywhere:
            stage(_fast_forward, call, res)
        else:
            stage(_slow_forward, call, res, num)
        if check_undefined_grad:
            stage(_undefined_forward, call, res)
    if check_batched_forward_grad:
        stage(_batched_forward, call, res)
    if check_backward_ad:
        if check_batched_grad:
            for i, o in enumerate(outputs):
                stage(_batched_grad, call, o, i, res)
        stage(_mul_by_grad_output, call, outputs, res)
        if check_undefined_grad:
            stage(_undefined_backward, call, outputs, res, quiet=bool(res.failures))
    return _report(res, snapshot_inputs, snapshot_outputs, eps, atol, rtol, fast_mode)


def _report(res, inputs, outputs, eps, atol, rtol, fast_mode):
    first = res.failures[0] if res.failures else None
    report = GradcheckReport(passed=first is None, message=first.message if first else "", pairs=res.pairs,
                             checks=res.checks, fast=res.fast, inputs=inputs, outputs=outputs, eps=eps,
                             atol=atol, rtol=rtol, fast_mode=fast_mode)
    report._exc_type = first.exc_type if first else None
    return report


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check gradients computed via small finite differences against analytical gradients wrt
    the tensors in `inputs` that are of floating point or complex type and require grad.

    Returns True if all differences satisfy |a - n| <= atol + rtol * |n|; otherwise raises
    GradcheckError (or returns False with raise_exception=False). `check(...)` returns the
    Jacobians themselves."""
    return _verdict(check(func, inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                          check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                          check_batched_grad=check_batched_grad,
                          check_batched_forward_grad=check_batched_forward_grad, check_forward_ad=check_forward_ad,
                          check_backward_ad=check_backward_ad, fast_mode=fast_mode, masked=masked, _stacklevel=4),
                    raise_exception)


def _verdict(report, raise_exception):
    if report.passed:
        return True
    if report._exc_type is not GradcheckError:  # e.g. overlapping inputs: raised whatever raise_exception says
        raise report._exc_type(report.message)
    if raise_exception:
        raise GradcheckError(report.message)
    return False


def _random_grad_outputs(outputs, noncontiguous):
    """torch.testing.make_tensor(low=-1, high=1, requires_grad=True) for each output."""
    from .._random import generator
    from .._dtype import float64
    rng = generator()
    gos = []
    for o in outputs:
        dt = o.dtype if (o.dtype.is_floating_point or o.dtype.is_complex) else float64
        shape = o._data.shape
        if dt.is_complex:
            arr = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
        else:
            arr = rng.uniform(-1, 1, shape)
        arr = np.asarray(arr).astype(dt.np)
        if noncontiguous and arr.size > 1:
            arr = np.repeat(arr, 2, axis=-1)[..., ::2]
        gos.append(Tensor._make(arr, requires_grad=True))
    return tuple(gos)


def _gradgrad_function(func, inputs, grad_outputs, gen_non_contig_grad_outputs):
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = _random_grad_outputs(outputs, gen_non_contig_grad_outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_diff(x)}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if _is_diff(x)}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = engine.grad(outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return new_func, tupled_inputs + tupled_grad_outputs


def _gradgrad_options(check_fwd_over_rev, check_rev_over_rev, check_undefined_grad, check_batched_grad):
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")


def check_gradgrad(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                   gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                   check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                   check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False,
                   _stacklevel=4):
    """gradgradcheck's report: `check` on (inputs, grad_outputs) -> first-order gradients."""
    _gradgrad_options(check_fwd_over_rev, check_rev_over_rev, check_undefined_grad, check_batched_grad)
    new_func, all_inputs = _gradgrad_function(func, inputs, grad_outputs, gen_non_contig_grad_outputs)
    return check(new_func, all_inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                 check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                 check_batched_grad=check_batched_grad, fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                 check_backward_ad=check_rev_over_rev, masked=masked, _stacklevel=_stacklevel)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check gradients of gradients: gradcheck of the function (inputs, grad_outputs) ->
    the gradients of func computed with create_graph=True. Random grad_outputs (uniform in
    [-1, 1), non-contiguous if asked) are made when none are given."""
    report = check_gradgrad(func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol,
                            gen_non_contig_grad_outputs=gen_non_contig_grad_outputs, nondet_tol=nondet_tol,
                            check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                            check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev,
                            check_rev_over_rev=check_rev_over_rev, fast_mode=fast_mode, masked=masked,
                            _stacklevel=5)
    return _verdict(report, raise_exception)


# `microtorch.autograd.gradcheck` is the function (as in torch) once the package has forwarded
# it, and this module otherwise; both answer `.check`, `.gradgradcheck`, `.GradcheckError`, ...
for _name in __all__:
    if _name != "gradcheck":
        setattr(gradcheck, _name, globals()[_name])
gradcheck.gradcheck = gradcheck


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
