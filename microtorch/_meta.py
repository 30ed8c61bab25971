"""The 'meta' device: tensors with a shape and a dtype but no data, as torch's.

`model.to('meta')` keeps a model's structure (what `functional_call` needs for ensembling with
stacked parameters) without its numbers. A meta tensor's storage is one zero broadcast to the
shape (no memory); reading values raises torch's NotImplementedError.
"""
import numpy as np

_NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaArray(np.ndarray):
    """The array behind a meta tensor. Elementwise numpy results of it stay meta."""

    def item(self, *args):
        raise NotImplementedError(_NO_DATA + " (a tensor on the 'meta' device has a shape but no values)")

    def tolist(self):
        raise NotImplementedError(_NO_DATA + " (a tensor on the 'meta' device has a shape but no values)")

    def __array_function__(self, func, types, args, kwargs):
        """numpy's functions of a meta array (tril, concatenate, where, einsum...) give meta arrays, as torch's ops
        of meta tensors give meta tensors: the function runs on the zeros, its arrays are made meta."""
        return _as_meta(super().__array_function__(func, types, args, kwargs))


def _as_meta(result):
    if type(result) is np.ndarray:
        return meta_array(result.shape, result.dtype)
    if isinstance(result, (tuple, list)) and any(type(r) is np.ndarray for r in result):
        return type(result)(_as_meta(r) for r in result)
    return result


def meta_array(shape, np_dtype):
    return np.broadcast_to(np.zeros((), np_dtype), tuple(shape)).view(MetaArray)


def is_meta(t):
    return type(t._data) is MetaArray


def to_meta(t):
    """A meta tensor with t's shape, dtype and requires_grad (a leaf, as torch makes it)."""
    if is_meta(t):
        return t
    out = type(t)._make(meta_array(t.shape, t._data.dtype)) if type(t).__name__ == "Tensor" else \
        t.detach().__class__._make(meta_array(t.shape, t._data.dtype))
    return out.requires_grad_(True) if t.requires_grad else out


def from_meta(t):
    raise NotImplementedError(_NO_DATA + " Build the tensor again on 'cpu' (e.g. torch.empty_like(t, "
                              "device='cpu')) or load values with load_state_dict(..., assign=True).")

