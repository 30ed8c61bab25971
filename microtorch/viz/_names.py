"""Names for the tensors in a picture: from `names=`, `params=`, a module, or the caller's
variables.

A leaf called `w` in the notebook should be labelled `w` in the DAG, and a Parameter
`layer1.weight` should carry its module path. `Names` maps tensors (by identity) to names,
and backward nodes to the names of the tensors they produced.
"""
import sys


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


class Names:
    """id(tensor) -> name, plus (id(grad_fn), output_nr) -> name for non-leaf tensors."""

    def __init__(self):
        self.by_tensor = {}
        self.by_output = {}
        self.param_paths = {}   # id(tensor) -> dotted module path of a Parameter
        self.module_types = {}    # module path -> class name, for cluster labels
        self.module_paths = {}    # id(module) -> its path ("" for the root), for hook labels
        self.output_tensors = {}  # (id(grad_fn), output_nr) -> the named non-leaf tensor
        self._keep = []          # keep named tensors alive while the picture is built

    def add(self, name, t, param=False, override=True):
        if not _is_tensor(t) or not isinstance(name, str):
            return
        key = id(t)
        if not override and key in self.by_tensor:
            return
        self.by_tensor[key] = name
        self._keep.append(t)
        if param:
            self.param_paths[key] = name
        fn = t.grad_fn
        if fn is not None:
            k = (id(fn), getattr(t, "_output_nr", 0))
            if override or k not in self.by_output:
                self.by_output[k] = name
                self.output_tensors[k] = t

    def tensor(self, t):
        return self.by_tensor.get(id(t))

    def output(self, node, output_nr=0):
        return self.by_output.get((id(node), output_nr))

    def output_tensor(self, node, output_nr=0):
        return self.output_tensors.get((id(node), output_nr))

    def outputs(self, node, n):
        return [self.by_output.get((id(node), i)) for i in range(n)]


def _items(mapping, what):
    """Accept {name: tensor} or {tensor: name}; anything else is a one-line TypeError."""
    if mapping is None:
        return []
    if hasattr(mapping, "items"):
        pairs = list(mapping.items())
    else:
        try:
            pairs = list(mapping)
        except TypeError:
            raise TypeError(f"{what} must be a dict of name -> tensor (e.g. dict(model.named_parameters())), "
                            f"got {type(mapping).__name__}") from None
    out = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"{what} must be a dict of name -> tensor, got an item {pair!r}")
        a, b = pair
        if isinstance(a, str) and _is_tensor(b):
            out.append((a, b))
        elif isinstance(b, str) and _is_tensor(a):
            out.append((b, a))
        else:
            raise TypeError(f"{what} must map names (str) to tensors; got {type(a).__name__} -> "
                            f"{type(b).__name__}")
    return out


def collect(names="auto", params=None, module=None, frame_depth=2, extra=()):
    """Build a Names from the arguments of a public `viz` call.

    names: "auto" (the caller's variables), False/None (none), or a dict.
    params: dict(model.named_parameters()); module: a Module (its named_parameters()).
    frame_depth: how many frames up the user's code is from this function's caller."""
    result = Names()
    if names == "auto":
        try:
            frame = sys._getframe(frame_depth)
        except ValueError:
            frame = None
        # skip frames inside microtorch.viz itself (public helpers calling each other)
        while frame is not None and frame.f_globals.get("__name__", "").startswith("microtorch.viz"):
            frame = frame.f_back
        if frame is not None:
            for scope in (frame.f_globals, frame.f_locals):
                for k, v in list(scope.items()):
                    if not k.startswith("_") and _is_tensor(v):
                        result.add(k, v)
        frame = None
    elif names not in (None, False):
        for k, v in _items(names, "names"):
            result.add(k, v)
    for k, v in extra:
        result.add(k, v, override=False)
    if module is not None:
        if not hasattr(module, "named_parameters"):
            raise TypeError(f"module= must be an nn.Module (with named_parameters()), got "
                            f"{type(module).__name__}")
        for k, v in module.named_parameters():
            result.add(k, v, param=True)
        if hasattr(module, "named_modules"):
            for path, sub in module.named_modules():
                result.module_paths[id(sub)] = path or "model"
                if path:
                    result.module_types[path] = type(sub).__name__
    for k, v in _items(params, "params"):
        result.add(k, v, param=True)
    return result
