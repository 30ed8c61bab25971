"""save / load of tensors and state dicts as .npz files, never pickle.

A state dict (a flat mapping of names to tensors) round-trips; loading uses
`allow_pickle=False`, so a file from an untrusted source cannot run code.
"""
import zipfile

import numpy as np

from ._tensor import Tensor

_SINGLE = "__microtorch_tensor__"


def save(obj, f):
    """Save a Tensor or a dict of name -> Tensor (e.g. model.state_dict()) to `f`."""
    if isinstance(obj, Tensor):
        arrays = {_SINGLE: obj._data}
    elif isinstance(obj, dict):
        arrays = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"save: keys must be strings, got {type(k).__name__}")
            if isinstance(v, Tensor):
                arrays[k] = v._data
            elif isinstance(v, (int, float, bool, np.ndarray)):
                arrays[k] = np.asarray(v)
            else:
                raise TypeError(f"save: microtorch saves tensors and state dicts of tensors without pickle; the "
                                f"value for {k!r} is a {type(v).__name__}")
    else:
        raise TypeError(f"save: expected a Tensor or a dict of tensors, got {type(obj).__name__}")
    if isinstance(f, str) and not f.endswith(".npz"):
        with open(f, "wb") as fh:
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def load(f, map_location=None, weights_only=True):
    """Load what `save` wrote: a Tensor, or a dict of name -> Tensor."""
    try:
        with np.load(f, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise RuntimeError(f"load: {f!r} is not a microtorch file or is corrupt ({e}); microtorch files are "
                           ".npz archives written by microtorch.save") from None
    if list(arrays) == [_SINGLE]:
        return Tensor._make(arrays[_SINGLE])
    return {k: Tensor._make(v) for k, v in arrays.items()}
