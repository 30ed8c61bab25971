"""Small helpers: which outputs and inputs are differentiable, tolerances and error maps, and
`_Call`, the function with its inputs that every check evaluates."""

import numpy as np

from .. import engine
from ..._tensor import Tensor
from .report import JacobianPair


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
