"""microtorch.testing.assert_close, as torch.testing has it."""
import numpy as np

from ._tensor import Tensor

_TOL = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True, msg=None):
    """Raise AssertionError unless actual and expected agree within rtol/atol (torch's defaults per dtype)."""
    a = actual._data if isinstance(actual, Tensor) else np.asarray(actual)
    e = expected._data if isinstance(expected, Tensor) else np.asarray(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor) and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    default = _TOL.get(str(a.dtype), (0.0, 0.0))
    rtol = default[0] if rtol is None else rtol
    atol = default[1] if atol is None else atol
    ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not ok.all():
        diff = np.abs(a.astype(np.complex128) - e)
        idx = np.unravel_index(np.argmax(np.where(ok, 0, diff)), a.shape) if a.ndim else ()
        raise AssertionError(msg or (
            f"Tensor-likes are not close!\n\nMismatched elements: {int((~ok).sum())} / {a.size}\n"
            f"Greatest absolute difference: {diff.max()} at index {tuple(int(i) for i in idx)} "
            f"(up to {atol} allowed)\n"))
