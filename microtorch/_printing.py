"""torch's repr, `tensor([1., 2.], requires_grad=True)`, following torch/_tensor_str.py: one
formatter per tensor picks integer, fixed (4 decimals) or scientific notation and a common
width; long tensors are summarized with `...`; suffixes (dtype, grad_fn) wrap at 80 columns."""
import math

import numpy as np

from ._dtype import get_default_dtype

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_options = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """As torch.set_printoptions (profile: "default", "short" or "full")."""
    if profile == "default":
        _options.update(_DEFAULTS)
    elif profile == "short":
        _options.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _options.update(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for k, v in dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth).items():
        if v is not None:
            _options[k] = v
    _options["sci_mode"] = sci_mode


class _Formatter:
    """How every element of one tensor is written: the mode and the width they share."""

    def __init__(self, a):
        self.floating = a.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        p = _options["precision"]
        flat = a.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        absv = np.abs(vals)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        sci = _options["sci_mode"]
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if sci is None else sci
        for v in vals.tolist():
            if self.sci_mode:
                s = f"{v:.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}" + "."
            else:
                s = f"{v:.{p}f}"
            self.max_width = max(self.max_width, len(s))

    def format(self, v):
        p = _options["precision"]
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f"{v:{self.max_width}.{p}e}"
        elif self.int_mode:
            s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            s = f"{v:.{p}f}"
        return " " * (self.max_width - len(s)) + s


def _summarized(a):
    """The elements that will be shown (the edges of every long dimension)."""
    e = _options["edgeitems"]
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        a = np.concatenate([a[:e], a[-e:]]) if e else a[:0]
    if a.ndim == 1:
        return a
    return np.stack([_summarized(x) for x in a]) if len(a) else a


def _bool_list(a):
    return [bool(v) for v in a.tolist()] if a.dtype == np.bool_ else a.tolist()


def _vector_str(a, indent, summarize, fmt, fmt_imag):
    width = fmt.max_width + 2 + (fmt_imag.max_width + 1 if fmt_imag else 0)
    per_line = max(1, math.floor((_options["linewidth"] - indent) / width))

    def one(v):
        if fmt_imag is None:
            return fmt.format(v)
        re, im = fmt.format(v.real), (fmt_imag.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im

    e = _options["edgeitems"]
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [one(v) for v in _bool_list(a[:e])] + [" ..."] + [one(v) for v in _bool_list(a[-e:])]
    else:
        data = [one(v) for v in _bool_list(a)]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(a, indent, summarize, fmt, fmt_imag=None):
    if a.ndim == 0:
        v = a.item()
        if a.dtype == np.bool_:
            v = bool(v)
        if fmt_imag is None:
            return fmt.format(v)
        re, im = fmt.format(v.real), (fmt_imag.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt, fmt_imag)
    e = _options["edgeitems"]
    if summarize and a.shape[0] > 2 * e:
        rows = list(range(e)) + [None] + list(range(a.shape[0] - e, a.shape[0]))
    else:
        rows = range(a.shape[0])
    slices = ["..." if i is None else _tensor_str(a[i], indent + 1, summarize, fmt, fmt_imag) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_array(a, indent=7):
    """The bracketed contents of a tensor's repr for the array `a`."""
    if a.size == 0:
        return "[]"
    summarize = a.size > _options["threshold"]
    shown = _summarized(a) if summarize else a
    if a.dtype.kind == "c":
        return _tensor_str(a, indent, summarize, _Formatter(shown.real), _Formatter(shown.imag))
    return _tensor_str(a, indent, summarize, _Formatter(shown))


def _add_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > _options["linewidth"]:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t):
    a = t._data
    if getattr(a, "__vmap_batched__", False):  # inside vmap: the batch, as torch prints it
        return a.batched_repr()
    user_class = type(t).__module__.split(".")[0] != "microtorch"  # (a user's subclass prints its name, as torch's)
    prefix = f"{type(t).__name__}(" if user_class else "tensor("
    indent = len(prefix)
    default = get_default_dtype()
    name = t.dtype.name
    suffixes = []
    if t.is_meta:  # no values to show, as torch prints it
        suffixes.append(f"device='meta', size={tuple(a.shape)}")
        if name != default.name:
            suffixes.append(f"dtype=microtorch.{name}")
        body = "..."
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if name != default.name:
            suffixes.append(f"dtype=microtorch.{name}")
        body = "[]"
    else:
        if not _options["edgeitems"]:
            suffixes.append(f"size={tuple(a.shape)}")
        if name not in (default.name, default.to_complex().name, "int64", "bool"):
            suffixes.append(f"dtype=microtorch.{name}")
        body = format_array(a, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")  # (torch shows <CopySlices>)
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
