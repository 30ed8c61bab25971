"""save / load to .npz files; pickle only for what nothing else can store, read only on request.

A state dict (a flat mapping of names to tensors) is stored as one array per name, so the
file is an ordinary .npz that `numpy.load` opens. Anything else made of tensors, numbers,
strings, None, lists, tuples and dicts (an optimizer's state dict, a checkpoint
`{"model": ..., "optim": ..., "epoch": 3}`) is stored as numbered arrays plus a JSON
description of the structure. Any other object (a whole model, as PyTorch's "Save and Load the
Model" tutorial saves one) is pickled into the archive, as torch.save pickles it, and `load` reads
it only with `weights_only=False`, as torch.load: by default a file from an untrusted source cannot
run code. numpy reads the archive with `allow_pickle=False`, and a damaged file raises a
RuntimeError that says so.

`load` also reads the zip files torch.save writes (tensors, Parameters and containers of them, as
torch.load(weights_only=True) accepts): `_torch_format.py`, imported only when such a file comes.
"""
import _compat_pickle
import io
import json
import os
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from ._tensor import Tensor

_SINGLE = "__microtorch_tensor__"        # save(tensor)
_STRUCTURE = "__microtorch_structure__"  # JSON description of a nested object
_PICKLED = "__microtorch_pickled__"      # the bytes of a pickled object (a whole model)
_FORMAT_VERSION = 1


def _encode(obj, arrays):
    """obj -> a JSON-able tree; tensors and arrays go into `arrays` and are referred to by name."""
    if isinstance(obj, Tensor):
        name = f"t{len(arrays)}"
        arrays[name] = obj._data
        node = {"tensor": name}
        from .nn.parameter import Parameter
        if isinstance(obj, Parameter):
            node["parameter"] = True
        if obj.requires_grad:
            node["requires_grad"] = True
        return node
    if isinstance(obj, (np.ndarray, np.generic)) and not isinstance(obj, (np.integer, np.floating)) or \
            type(obj) in _NUMPY_NUMBERS:  # (an array, or a numpy number: loaded as one, as torch's pickle does)
        if obj.dtype.kind in "OV":
            raise TypeError("save: numpy arrays of Python objects cannot be saved without pickle")
        name = f"t{len(arrays)}"
        arrays[name] = np.asarray(obj)
        return {"ndarray" if isinstance(obj, np.ndarray) else "numpy_scalar": name}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return {"float": repr(float(obj))}  # repr round-trips exactly, inf and nan included
    if isinstance(obj, (list, tuple)):
        return {"tuple" if isinstance(obj, tuple) else "list": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, dict):
        kind = "ordered_dict" if isinstance(obj, OrderedDict) else "dict"
        return {kind: [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    from ._dtype import dtype
    if isinstance(obj, dtype):
        return {"dtype": obj.name}
    hint = (f"; save its state dict instead: microtorch.save(obj.state_dict(), f), and load it with "
            f"obj.load_state_dict(microtorch.load(f))" if hasattr(obj, "state_dict") else "")
    raise TypeError(f"save: cannot save a {type(obj).__name__} without pickle; microtorch saves tensors, numpy "
                    f"arrays, numbers, strings, None, and lists, tuples and dicts of them{hint}")


_NUMPY_NUMBERS = {np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG"}
# the global torch's pickle of a numpy value names, which weights_only refuses unless allowed (add_safe_globals)
_NUMPY_GLOBALS = {"ndarray": ("numpy._core.multiarray", "_reconstruct"),
                  "numpy_scalar": ("numpy._core.multiarray", "scalar")}


def _numpy_allowed(name, weights_only):
    """The check _decode makes of a numpy value: torch's weights-only load refuses the globals that rebuild one."""
    def check(kind):
        module, attr = _NUMPY_GLOBALS[kind]
        if weights_only and safe_global(module, attr) is None:
            raise pickle.UnpicklingError(weights_only_refusal(name, f"{module}.{attr}"))
    return check


def _decode(node, arrays, numpy_allowed=None):
    if node is None or isinstance(node, (bool, int, str)):
        return node
    if isinstance(node, dict) and len(node) >= 1:
        if "tensor" in node:
            t = Tensor._make(arrays[node["tensor"]])
            if node.get("parameter"):
                from .nn.parameter import Parameter
                return Parameter(t, requires_grad=node.get("requires_grad", False))
            if node.get("requires_grad"):
                t.requires_grad_(True)
            return t
        for kind in ("ndarray", "numpy_scalar"):
            if kind in node:
                if numpy_allowed is not None:
                    numpy_allowed(kind)
                return arrays[node[kind]] if kind == "ndarray" else arrays[node[kind]][()]
        if "float" in node:
            return float(node["float"])
        if "list" in node:
            return [_decode(v, arrays, numpy_allowed) for v in node["list"]]
        if "tuple" in node:
            return tuple(_decode(v, arrays, numpy_allowed) for v in node["tuple"])
        if "dict" in node or "ordered_dict" in node:
            out = OrderedDict() if "ordered_dict" in node else {}
            for k, v in node.get("dict", node.get("ordered_dict")):
                out[_decode(k, arrays, numpy_allowed)] = _decode(v, arrays, numpy_allowed)
            return out
        if "dtype" in node:
            from . import _dtype
            return _dtype.to_dtype(node["dtype"])
    raise ValueError(f"unknown entry {str(node)[:80]!r} in the structure description")


def _is_flat_state_dict(obj):
    return (isinstance(obj, dict) and obj and all(isinstance(k, str) and isinstance(v, Tensor)
                                                  and not k.startswith("__microtorch") for k, v in obj.items()))


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Save a Tensor, a state dict, or a nested structure of them (e.g. a checkpoint dict) to `f`
    (a path or a binary file object) as a .npz archive; any other object (a whole model) pickled into it."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):  # torch's type for this mistake
        raise AttributeError(f"save: expected 'f' to be a string, a path, or a file-like object with a 'write' "
                             f"attribute, got {type(f).__name__}; e.g. microtorch.save(obj, 'model.pt')")
    if isinstance(obj, Tensor) and type(obj) is Tensor and not obj.requires_grad:
        arrays = {_SINGLE: obj._data}
    elif isinstance(obj, OrderedDict) and _is_flat_state_dict(obj) and all(
            type(v) is Tensor and not v.requires_grad for v in obj.values()):
        arrays = {k: v._data for k, v in obj.items()}  # a state dict as a plain .npz: one array per name (a dict
        # goes with its structure, so that it loads as a dict, as torch's)
    else:
        arrays = _structure_or_pickle(obj, pickle_module or pickle, pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path that lacks it
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _structure_or_pickle(obj, pickle_module, protocol):
    """The arrays of obj and the JSON description of its structure, or, for an object that has none (a module, a
    function), its pickled bytes (pickle's own error for what cannot be pickled, as torch.save's)."""
    arrays = {}
    try:
        structure = _encode(obj, arrays)
    except TypeError:
        data = pickle_module.dumps(obj, protocol=2 if protocol is None else protocol)
        return {_PICKLED: np.frombuffer(data, dtype=np.uint8)}
    doc = json.dumps({"format": "microtorch", "version": _FORMAT_VERSION, "object": structure})
    arrays[_STRUCTURE] = np.frombuffer(doc.encode("utf-8"), dtype=np.uint8)
    return arrays


# The globals add_safe_globals allowed (torch.serialization's allowlist): classes and functions, or (object, name)
_SAFE_GLOBALS = []
# What a pickled part of microtorch's own needs to rebuild tensors and containers
_OWN_GLOBALS = {("microtorch._tensor", "_rebuild"), ("microtorch._tensor", "Size"), ("microtorch._tensor", "device"),
                ("microtorch._dtype", "_by_name"), ("microtorch.nn.parameter", "Parameter"), ("numpy", "ndarray"),
                ("numpy", "dtype"), ("numpy._core.multiarray", "_reconstruct"),
                ("numpy.core.multiarray", "_reconstruct"),
                ("collections", "OrderedDict"), ("_codecs", "encode"), ("builtins", "set"), ("builtins", "frozenset"),
                ("builtins", "complex"), ("builtins", "slice")}


def safe_global(module, name):
    """The object add_safe_globals allowed under module.name, or None."""
    for entry in _SAFE_GLOBALS:
        obj, full = entry if isinstance(entry, tuple) else (entry, f"{entry.__module__}.{entry.__qualname__}")
        if full == f"{module}.{name}":
            return obj
    return None


def weights_only_refusal(name, global_name):
    """torch's two ways out of a weights-only refusal, for a file that names a global outside the allowlist."""
    whole_model = ".nn." in f".{global_name}" and "Parameter" not in global_name
    return (f"Weights only load failed: {name!r} names the global {global_name}. WeightsUnpickler error: Unsupported "
            f"global: GLOBAL {global_name} was not an allowed global by default"
            f"{' (a whole model, as save(model, f) writes)' if whole_model else ''}. This file can still be "
            "loaded, if you trust its source: (1) re-run load with weights_only=False (unpickling can run arbitrary "
            f"code), or (2) allow the global with microtorch.serialization.add_safe_globals([{global_name}]) or the "
            f"microtorch.serialization.safe_globals([{global_name}]) context manager. Or save and load the model's "
            "state dict: save(model.state_dict(), f), then model.load_state_dict(load(f)).")


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """load(weights_only=True) of microtorch's pickled part: tensors, containers and the allowed globals only."""

    def __init__(self, file, name):
        super().__init__(file)
        self._name = name

    def find_class(self, module, name):
        # (a protocol-2 pickle, as torch.save writes, names Python 2's modules: __builtin__.set is builtins.set)
        renamed = (_compat_pickle.IMPORT_MAPPING.get(module, module), name)
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), renamed)
        if (module, name) == ("numpy", "dtype"):
            return self._numbers_dtype
        if (module, name) in _OWN_GLOBALS:
            return super().find_class(module, name)
        allowed = safe_global(module, name)
        if allowed is None:
            raise pickle.UnpicklingError(weights_only_refusal(self._name, f"{module}.{name}"))
        return allowed

    def _numbers_dtype(self, *args):
        """numpy's dtype of a pickled array: numbers only (an array of objects holds pickles of its own)"""
        dtype = np.dtype(*args)
        if dtype.hasobject:
            raise pickle.UnpicklingError(weights_only_refusal(self._name, "numpy.ndarray of objects"))
        return dtype


def _unpickled(arrays, name, weights_only, pickle_module):
    """The object save pickled: with weights_only, only what the allowlist rebuilds (as torch's default)."""
    data = arrays[_PICKLED].tobytes()
    if weights_only:
        return _WeightsOnlyUnpickler(io.BytesIO(data), name).load()
    return (pickle_module or pickle).loads(data)


def _refuse_foreign_members(arrays, name):
    """Every member of a microtorch archive is a .npy array; numpy hands any other member over as bytes (torch.save's
    zip files were recognized before numpy read the file)."""
    if all(isinstance(v, np.ndarray) for v in arrays.values()):
        return
    raise RuntimeError(f"load: {name!r} is a zip archive but not a microtorch file (a member is not a numpy array). "
                       "microtorch files are .npz archives written by microtorch.save, or zip files written by "
                       "torch.save.")


def _torch_archive_folder(zf):
    """The folder of a torch.save zip file (its first member's, as torch reads it: `archive` since torch 2.x, the
    file's stem before), or None when zf is not one (a microtorch archive's members are .npy files, in no folder)."""
    names = zf.namelist()
    if not names or "/" not in names[0]:
        return None
    folder = names[0].split("/", 1)[0]
    return folder if f"{folder}/data.pkl" in names else None


def _torch_zip(f):
    """(the open zip file, its folder) when f is a zip file written by torch.save, else None, with f rewound."""
    start = None if isinstance(f, (str, os.PathLike)) else f.tell()
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        zf = None
    if zf is not None:
        folder = _torch_archive_folder(zf)
        if folder is not None:
            return zf, folder
        zf.close()
    if start is not None:
        f.seek(start)
    return None


def _load_torch_zip(found, name, map_location, weights_only):
    from ._torch_format import load_zip  # (only when a torch file comes)
    zf, folder = found
    with zf:
        return load_zip(zf, folder, name, map_location, weights_only)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what `save` wrote, or what torch.save wrote (tensors and containers of them, on the CPU). Unpickles a
    pickled object of microtorch's only with weights_only=False, as torch."""
    if not isinstance(f, (str, os.PathLike)) and not (hasattr(f, "read") and hasattr(f, "seek")):
        raise AttributeError(f"load: expected 'f' to be a string, a path, or a seekable file-like object, got "
                             f"{type(f).__name__}; e.g. microtorch.load('model.pt'), or wrap bytes in io.BytesIO")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", type(f).__name__)
    if isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: {str(name)!r}")
    found = _torch_zip(f)
    if found is not None:
        return _load_torch_zip(found, name, map_location, weights_only)
    try:
        with np.load(f, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise ValueError("it is a single .npy array, not an .npz archive")
            arrays = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise
    except Exception as e:  # truncated zip, bad CRC, pickled content, not a zip at all, ...
        if "pickle" in str(e):
            raise RuntimeError(f"load: {name!r} contains pickled data, which microtorch never loads (unpickling an "
                               "untrusted file can run arbitrary code). microtorch reads .npz archives written by "
                               "microtorch.save and zip files written by torch.save; a plain pickle, as torch.save "
                               "wrote before torch 1.6 (or with _use_new_zipfile_serialization=False), cannot be "
                               "read: in torch, save it again with torch.save(torch.load(path), path).") from None
        raise RuntimeError(f"load: {name!r} is not a microtorch file or is corrupt ({type(e).__name__}: {e}). "
                           "microtorch reads .npz archives written by microtorch.save and zip files written by "
                           "torch.save (not the plain pickles it wrote before torch 1.6).") from None
    _refuse_foreign_members(arrays, name)
    if list(arrays) == [_PICKLED]:
        return _unpickled(arrays, name, weights_only, pickle_module)
    if _STRUCTURE in arrays:
        try:
            doc = json.loads(bytes(arrays.pop(_STRUCTURE)).decode("utf-8"))
            if doc.get("format") != "microtorch":
                raise ValueError("missing format marker")
            if doc.get("version", 0) > _FORMAT_VERSION:
                raise ValueError(f"format version {doc.get('version')} is newer than this microtorch "
                                 f"understands ({_FORMAT_VERSION})")
            return _decode(doc["object"], arrays, _numpy_allowed(name, weights_only))
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
            raise RuntimeError(f"load: {name!r} is corrupt: its structure description cannot be read ({e})") \
                from None
        except RecursionError:  # json and _decode recurse; no file microtorch.save writes nests that deep
            raise RuntimeError(f"load: {name!r} is corrupt: its structure description nests deeper than Python's "
                               f"recursion limit ({sys.getrecursionlimit()})") from None
    if list(arrays) == [_SINGLE]:
        return Tensor._make(arrays[_SINGLE])
    for k, v in arrays.items():
        if v.dtype.kind in "OV":
            raise RuntimeError(f"load: {name!r} holds an array {k!r} of Python objects, which microtorch never loads")
    return OrderedDict((k, Tensor._make(v)) for k, v in arrays.items())
