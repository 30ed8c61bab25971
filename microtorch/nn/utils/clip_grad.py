"""Gradient clipping, in place on each parameter's .grad (outside autograd)."""
import numpy as np

from ..._tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so that their joint norm is at most max_norm; returns the norm before."""
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    dtype = grads[0]._data.dtype
    if norm_type == np.inf:
        norms = [np.abs(g._data).max() if g._data.size else 0.0 for g in grads]
        total = np.asarray(max(norms), dtype=dtype)
    else:
        norms = [(np.abs(g._data) ** norm_type).sum() ** (1.0 / norm_type) for g in grads]
        total = np.asarray((np.asarray(norms) ** norm_type).sum() ** (1.0 / norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    coef = min(float(max_norm) / (float(total) + 1e-6), 1.0)
    for g in grads:
        g._data *= np.asarray(coef, dtype=g._data.dtype)
        g._version_counter[0] += 1
    return Tensor._make(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._version_counter[0] += 1
