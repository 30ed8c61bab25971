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
        raise RuntimeError("Tensor.item() cannot be called on meta tensors (a tensor on the 'meta' device has a shape "
                           "but no values)")

    def tolist(self):
        raise NotImplementedError(_NO_DATA + " (a tensor on the 'meta' device has a shape but no values)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """An elementwise function or a matrix product of meta arrays: the result's shape and dtype, computed
        without running it (a meta tensor may stand for terabytes). Anything else runs on the zeros."""
        shape = _ufunc_shape(ufunc, method, inputs, kwargs)
        if shape is None:
            return _run_on_zeros(ufunc, method, inputs, kwargs)
        dtypes = [np.asarray(i).dtype if not isinstance(i, np.ndarray) else i.dtype for i in inputs]
        try:
            out = ufunc.resolve_dtypes((*dtypes, *[None] * ufunc.nout))[ufunc.nin:]
        except (TypeError, ValueError, np._core._exceptions._UFuncNoLoopError):
            return _run_on_zeros(ufunc, method, inputs, kwargs)
        results = tuple(meta_array(shape, d) for d in out)
        return results[0] if ufunc.nout == 1 else results

    def __array_function__(self, func, types, args, kwargs):
        """numpy's functions of a meta array (tril, concatenate, where, einsum...) give meta arrays, as torch's ops
        of meta tensors give meta tensors: the function runs on the zeros, its arrays are made meta."""
        return _as_meta(super().__array_function__(func, types, args, kwargs))


def _run_on_zeros(ufunc, method, inputs, kwargs):
    """A ufunc's method run on the zeros behind meta arrays (a reduction, say), its result made meta (a number
    too: a reduction to one value is a 0-d meta tensor)."""
    plain = [i.view(np.ndarray) if isinstance(i, MetaArray) else i for i in inputs]
    result = getattr(ufunc, method)(*plain, **kwargs)
    return meta_array((), result.dtype) if isinstance(result, np.generic) else _as_meta(result)


def _ufunc_shape(ufunc, method, inputs, kwargs):
    """The shape of an elementwise call (broadcast) or of matmul, or None where numpy must run it."""
    if method != "__call__" or kwargs.get("out") is not None or kwargs.get("where", True) is not True:
        return None
    shapes = [np.shape(i) for i in inputs]
    if ufunc.signature is None:
        return np.broadcast_shapes(*shapes)
    if ufunc is np.matmul and len(shapes) == 2 and min(len(shapes[0]), len(shapes[1])) >= 2:
        (a, b), batch = (shapes[0][-2:], shapes[1][-2:]), np.broadcast_shapes(shapes[0][:-2], shapes[1][:-2])
        return batch + (a[0], b[1]) if a[1] == b[0] else None
    return None


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

