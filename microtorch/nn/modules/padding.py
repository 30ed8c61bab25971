"""Padding layers: constant (and zero), reflection, replication, circular, for 1, 2 or 3 trailing dims."""
from .. import functional as F
from .module import Module


def _ntuple(padding, n):
    return tuple(padding) if isinstance(padding, (tuple, list)) else (int(padding),) * (2 * n)


class _PadNd(Module):
    mode, dims = "constant", 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


def _padding_class(base, name, mode, dims, doc):
    return type(name, (base,), {"mode": mode, "dims": dims, "__doc__": doc, "__module__": __name__})


ConstantPad1d, ConstantPad2d, ConstantPad3d = (_padding_class(_ConstantPadNd, f"ConstantPad{k}d", "constant", k,
                                                               f"pads the last {k} dim(s) with a constant value")
                                               for k in (1, 2, 3))
ZeroPad1d, ZeroPad2d, ZeroPad3d = (_padding_class(_ZeroPadNd, f"ZeroPad{k}d", "constant", k,
                                                  f"pads the last {k} dim(s) with zeros") for k in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _padding_class(_PadNd, f"ReflectionPad{k}d", "reflect", k, f"pads the last {k} dim(s) with their mirror image "
                   "(the edge not repeated)") for k in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _padding_class(_PadNd, f"ReplicationPad{k}d", "replicate", k, f"pads the last {k} dim(s) by repeating the "
                   "edge values") for k in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (
    _padding_class(_PadNd, f"CircularPad{k}d", "circular", k, f"pads the last {k} dim(s) with the values from the "
                   "opposite side (periodic)") for k in (1, 2, 3))
