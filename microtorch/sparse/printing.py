"""A sparse tensor's repr, in torch's form: its indices and values as tensors, then size, nnz, dtype and layout."""
from .._dtype import get_default_dtype
from .._printing import _options, format_array

_PREFIX = "tensor("
_INDENT = len(_PREFIX)


def _part(name, a):
    """`indices=tensor([[...]])`: the array as a tensor prints it, its lines indented under its first."""
    prefix = f"{name}=tensor("
    body = format_array(a, _INDENT + len(prefix))
    if a.size == 0:
        body += f", size={tuple(a.shape)}"
    return prefix + body + ")"


def sparse_repr(t):
    sa = t._data
    name, default = t.dtype.name, get_default_dtype()
    suffixes = [f"nnz={sa.nnz}"]
    if name not in (default.name, default.to_complex().name, "int64", "bool"):
        suffixes.append(f"dtype=microtorch.{name}")
    suffixes.append("layout=microtorch.sparse_coo")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    text = (_PREFIX + _part("indices", sa.indices) + ",\n" + " " * _INDENT + _part("values", sa.values) + ",\n"
            + " " * _INDENT + f"size={tuple(sa.shape)}")
    return _joined(text, suffixes)


def _joined(text, suffixes):
    """The suffixes after text, each on the line while it fits in the line width, as torch breaks them: measured
    with torch's names (`torch.sparse_coo`), so that the lines break where torch's do."""
    out, last = [text], len(text) - text.rfind("\n") - 1
    for s in suffixes:
        width = len(s.replace("microtorch.", "torch."))
        if last + width + 2 > _options["linewidth"]:
            out.append(",\n" + " " * _INDENT + s)
            last = _INDENT + width
        else:
            out.append(", " + s)
            last += width + 2
    return "".join(out) + ")"
