"""torch-like repr: tensor([1., 2.], requires_grad=True) with 4 decimals."""
import numpy as np

from ._dtype import get_default_dtype

_options = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    for k, v in dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth).items():
        if v is not None:
            _options[k] = v
    _options["sci_mode"] = sci_mode


def _float_formatter(values):
    p = _options["precision"]
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: str(v).replace("inf", "inf").replace("nan", "nan")
    absmax, absmin = np.abs(finite).max(), np.abs(finite[finite != 0]).min() if (finite != 0).any() else 0
    ints = np.all(finite == np.round(finite))
    sci = _options["sci_mode"]
    if sci is None:
        sci = absmax >= 1e8 or (absmin != 0 and absmin < 1e-4) or (absmin != 0 and absmax / absmin > 1000 and not ints)
    if ints and not sci:
        width = max(len(f"{v:.0f}") for v in finite) + 1
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v)).rjust(width)
    if sci:
        return lambda v: f"{v:.{p}e}" if np.isfinite(v) else str(v)
    width = max(len(f"{v:.{p}f}") for v in finite)
    return lambda v: (f"{v:.{p}f}" if np.isfinite(v) else str(v)).rjust(width)


def format_array(a):
    if a.dtype == np.bool_:
        width = 5 if a.ndim and not a.all() else 4  # torch right-aligns True beside False
        fmt = {"bool": lambda v: str(bool(v)).rjust(width)}
    elif a.dtype.kind in "iu":
        fmt = {"int": lambda v: str(v)}
    elif a.dtype.kind == "c":
        fr = _float_formatter(np.concatenate([a.real.ravel(), a.imag.ravel()]))
        fmt = {"complexfloat": lambda v: f"{fr(v.real).strip()}{'+' if v.imag >= 0 else '-'}{fr(abs(v.imag)).strip()}j"}
    else:
        fr = _float_formatter(a.ravel().astype(np.float64)) if a.size else str
        fmt = {"float": fr}
    if a.ndim == 0:
        return list(fmt.values())[0](a.item() if a.dtype.kind != "c" else a.item())
    return np.array2string(a, separator=", ", formatter=fmt, threshold=_options["threshold"],
                           edgeitems=_options["edgeitems"], max_line_width=_options["linewidth"],
                           prefix="tensor(")


def tensor_repr(t):
    a = t._data
    if getattr(a, "__vmap_batched__", False):  # inside vmap: the batch, as torch prints it
        return a.batched_repr()
    body = format_array(a) if a.size or a.ndim == 0 else "[]"
    extras = []
    if a.size == 0 and a.shape != (0,):
        extras.append(f"size={tuple(a.shape)}")
    default = get_default_dtype()
    name = t.dtype.name
    implicit = {default.name, "int64", "bool", default.to_complex().name}
    if name not in implicit:
        extras.append(f"dtype=microtorch.{name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    body = "tensor(" + body
    return body + "".join(", " + e for e in extras) + ")"
