"""parameters_to_vector / vector_to_parameters."""
import numpy as np

from ..._tensor import Tensor


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one (differentiable) vector."""
    from ... import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of vec into the parameters (in place, outside autograd)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p._data[...] = np.asarray(vec._data[offset:offset + n]).reshape(p.shape)
        p._version_counter[0] += 1
        offset += n
