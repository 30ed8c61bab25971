"""default_collate: a list of examples -> one batch (tensors stacked along a new dim 0)."""
import collections.abc

import numpy as np

from ..._tensor import Tensor, as_tensor, tensor


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch):
    """Stack tensors, arrays and numbers; recurse into dicts, named tuples, tuples and lists."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        from ...ops import stack
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "SUO":
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and elem.dtype.kind not in "SUO":
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        from ... import _dtype
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, (bool, int)):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_type(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size (default_collate "
                               f"transposes the batch; got lengths {[len(e) for e in batch]})")
        columns = [default_collate(s) for s in zip(*batch)]  # (each column a tuple: strings stay one, as torch's)
        return columns if isinstance(elem, tuple) else _same_type(elem, columns)  # tuples become lists, as torch
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}. Pass a collate_fn that knows how to batch it.")


def _same_type(elem, value):
    try:
        return type(elem)(value)
    except TypeError:  # the container cannot be rebuilt from one argument: a plain dict or list
        return value


def default_convert(data):
    """For batch_size=None: numpy arrays become tensors; containers are converted item by item."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in "SUO":
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _same_type(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_type(data, [default_convert(d) for d in data])
    return data
