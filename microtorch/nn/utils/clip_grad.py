"""Gradient clipping, in place on each parameter's .grad (outside autograd)."""
import numpy as np

from ..._tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all the tensors' entries together (as if concatenated into one vector)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    dtype = tensors[0]._data.dtype
    if norm_type == np.inf:
        norms = [np.abs(t._data).max() if t._data.size else 0.0 for t in tensors]
        total = np.asarray(max(norms), dtype=dtype)
    else:
        norms = [(np.abs(t._data) ** norm_type).sum() ** (1.0 / norm_type) for t in tensors]
        total = np.asarray((np.asarray(norms) ** norm_type).sum() ** (1.0 / norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return Tensor._make(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by max_norm / (total_norm + 1e-6) when that is below 1 (total_norm given)."""
    coef = min(float(max_norm) / (float(total_norm) + 1e-6), 1.0)
    for g in _grads(parameters):
        g._data *= np.asarray(coef, dtype=g._data.dtype)
        g._version_counter[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so that their joint norm is at most max_norm; returns the norm before."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated name of clip_grad_norm_ (torch warns the same way)."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._version_counter[0] += 1
