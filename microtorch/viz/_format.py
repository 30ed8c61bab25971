"""Turning tensors and gradients into short strings: labels, summaries and tooltips.

Every picture in `viz` shows numbers through these helpers, so that a scalar always reads
the same way (4 significant digits) and a tensor always shows its shape and a compact range,
with the full value kept for hover tooltips.
"""
import html
import re

import numpy as np


def values(value):
    """The numbers of a tensor (detached: numpy, as torch, refuses a tensor that requires grad), an array or a
    number, as a numpy array."""
    detach = getattr(value, "detach", None)
    return np.asarray(value if detach is None else detach())


def snapshot(value):
    """A private numpy copy of a tensor (or array / number), or None.

    The tape keeps snapshots, not the tensors, because the engine may later change a
    `.grad` in place and the picture must show the value at the time of the event."""
    if value is None or isinstance(value, (tuple, list)):
        return None
    try:
        return np.array(values(value), copy=True)
    except Exception:
        return None


def num(x):
    """One number, 4 significant digits: 2.959, -0.4161, 1e-08, 3."""
    if isinstance(x, (complex, np.complexfloating)):
        x = complex(x)
        if x.imag == 0:
            return num(x.real)
        sign = "+" if x.imag >= 0 else "-"
        return f"{num(x.real)}{sign}{num(abs(x.imag))}j"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    s = f"{x:.4g}"
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant}e{int(exp)}"
    return s


def saved_label(node, j):
    """What the viz calls a node's j-th saved tensor: torch's name for it ("self", "other", "result", as
    grad_fn._saved_self reads it), else its place (a custom Function's saved_tensors[j])."""
    names = node.saved_names() if hasattr(node, "saved_names") else ()
    return f"saved {names[j]}" if j < len(names) else f"saved[{j}]"


def shape_str(shape):
    """(3, 4) -> '3×4'; () -> 'scalar'."""
    shape = tuple(shape)
    if not shape:
        return "scalar"
    return "×".join(str(int(s)) for s in shape)


def dtype_str(arr):
    return str(getattr(arr, "dtype", ""))


def summary(arr, width=4):
    """A short text for a value: the number for a scalar, the elements for up to `width`
    elements, otherwise the range: '[-1.24 … 3.4]'."""
    if arr is None:
        return "—"
    arr = values(arr)
    if arr.size == 1:
        return num(arr.reshape(()).item())
    if arr.size == 0:
        return "[]"
    if arr.size <= width and arr.ndim == 1:
        return "[" + ", ".join(num(v) for v in arr.tolist()) + "]"
    flat = arr.reshape(-1)
    if np.iscomplexobj(flat):
        return f"‖·‖ {num(np.linalg.norm(flat))}"
    if flat.dtype == bool:
        return f"{int(flat.sum())} of {flat.size} true"
    if flat.dtype.kind == "f" and np.isnan(flat).all():
        return "[nan …]"
    with np.errstate(all="ignore"):
        lo, hi = np.nanmin(flat), np.nanmax(flat)
    return f"[{num(lo)} … {num(hi)}]"


def full(arr, precision=4, threshold=120):
    """The whole value as numpy prints it (truncated for big arrays): for tooltips."""
    if arr is None:
        return "None"
    arr = values(arr)
    body = np.array2string(arr, precision=precision, threshold=threshold, suppress_small=False,
                           max_line_width=72)
    if arr.ndim == 0:
        return body
    return f"{shape_str(arr.shape)} {arr.dtype}\n{body}"


def same(a, b):
    """True when two snapshots hold the same value (both None counts as the same)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = values(a), values(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def esc(text):
    """HTML-escape."""
    return html.escape(str(text), quote=True)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def esc_name(text):
    """HTML-escape a node's name; a long one gets a line-break opportunity (<wbr>) between its words, so
    that a panel narrower than ScaledDotProductFlashAttentionForCpuBackward0 wraps it, not cuts it off."""
    text = esc(text)
    return _CAMEL.sub("<wbr>", text) if len(text) > 24 else text


_RECORD_SPECIAL = set('{}|<>"\\')


def rec(text):
    """Escape text for a Graphviz record label field."""
    out = []
    for ch in str(text):
        if ch in _RECORD_SPECIAL:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    s = "".join(out)
    # leading/trailing spaces are eaten by records; keep them visible as no-break spaces
    return s if s.strip() == s else s.replace(" ", "\u00a0")


def node_title(node):
    """The `name()` of a backward node, robust to odd objects."""
    try:
        return str(node.name())
    except Exception:
        return type(node).__name__


def shown_name(title):
    """A node's name as pictures label it: 'torch::autograd::CopySlices' -> 'CopySlices', the class
    name torch's repr of a grad_fn shows (the full `name()` stays in the node's tooltip)."""
    return title.rpartition("::")[2] or title


def is_accumulate(node):
    """True for the AccumulateGrad node of a leaf (it carries `.variable`)."""
    return getattr(node, "variable", None) is not None and "AccumulateGrad" in node_title(node)


def short_op(name):
    """'MulBackward0' -> 'Mul', 'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'."""
    name = shown_name(name)
    base = name.rstrip("0123456789")
    if base.endswith("Backward"):
        base = base[: -len("Backward")]
    return base or name


# hook values are a tensor, or a tuple of them for node hooks
def same_values(a, b):
    """Whether a hook left its value(s) unchanged."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        a = a if isinstance(a, tuple) else (a,)
        b = b if isinstance(b, tuple) else (b,)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return same(a, b)


def summary_values(v):
    """summary() of a value or of each value in a tuple."""
    if isinstance(v, tuple):
        return "(" + ", ".join(summary(x) for x in v) + ")"
    return summary(v)


def full_values(v):
    """full() of a value or of each value in a tuple."""
    if isinstance(v, tuple):
        return "(" + ", ".join(full(x) for x in v) + ")"
    return full(v)
