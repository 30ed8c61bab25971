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
        """An elementwise function or a matrix product of meta arrays, without running it on the whole (a meta
        tensor may stand for terabytes): the function of one zero of each meta input (the value every element of
        the zeros would give) broadcast to the result's shape. Anything else runs on the zeros."""
        outs = kwargs.get("out")
        outs = outs if isinstance(outs, tuple) else (outs,) if outs is not None else ()
        if outs and all(isinstance(o, MetaArray) for o in outs) and method == "__call__":
            return outs if len(outs) > 1 else outs[0]  # (written in place: a meta array has nothing to write)
        shape = _ufunc_shape(ufunc, method, inputs, kwargs)
        if shape is None:
            return _run_on_zeros(ufunc, method, inputs, kwargs)
        if ufunc is np.matmul:
            dtype = np.result_type(*[i.dtype for i in inputs])
            return np.broadcast_to(np.zeros((), dtype), shape).view(MetaArray)
        if any(isinstance(i, MetaArray) and i.size > 1 and any(i.strides) for i in inputs):
            return _run_on_zeros(ufunc, method, inputs, kwargs)  # (one made with values: numpy runs it)
        ones = [(i.view(np.ndarray)[(0,) * i.ndim] if i.size else np.zeros((), i.dtype)) if isinstance(i, MetaArray)
                else i for i in inputs]  # (each meta input is one value broadcast: its value, read without a copy)
        values = ufunc(*ones, **kwargs)
        values = values if ufunc.nout > 1 else (values,)
        made = tuple(np.broadcast_to(np.asarray(v), shape).view(MetaArray) for v in values)
        return made if ufunc.nout > 1 else made[0]

    def __array_function__(self, func, types, args, kwargs):
        """numpy's functions of a meta array (tril, concatenate, where, einsum...) give meta arrays, as torch's ops
        of meta tensors give meta tensors: the function runs on the zeros, its arrays are made meta."""
        return _as_meta(super().__array_function__(func, types, args, kwargs))


def _run_on_zeros(ufunc, method, inputs, kwargs):
    """A ufunc's method run on the zeros behind meta arrays (a reduction, say), its result made meta (a number
    too: a reduction to one value is a 0-d meta tensor)."""
    plain = [i.view(np.ndarray) if isinstance(i, MetaArray) else i for i in inputs]
    if "out" in kwargs:
        kwargs = dict(kwargs, out=tuple(o.view(np.ndarray) if isinstance(o, MetaArray) else o
                                        for o in (kwargs["out"] if isinstance(kwargs["out"], tuple) else
                                                  (kwargs["out"],))))
    result = getattr(ufunc, method)(*plain, **kwargs)  # (its values kept: checks on zeros read them, as before)
    if isinstance(result, (np.ndarray, np.generic)):
        return np.asarray(result).view(MetaArray)
    if isinstance(result, tuple):
        return tuple(np.asarray(r).view(MetaArray) for r in result)
    return result


def _ufunc_shape(ufunc, method, inputs, kwargs):
    """The shape of an elementwise call (broadcast) or of matmul, or None where numpy must run it."""
    if method != "__call__" or kwargs.get("out") is not None or kwargs.get("where", True) is not True or \
            any(isinstance(i, np.ndarray) and not isinstance(i, MetaArray) and i.size > 1 for i in inputs):
        return None  # (an array with values among the inputs: its values matter, numpy runs it)
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

