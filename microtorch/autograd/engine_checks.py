"""What the engine checks on the way: the gradients a backward returned (torch's
validate_outputs, where broadcasting is undone) and, in anomaly mode, NaNs and the forward
stack of a node that failed."""
import numpy as np

from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ..ops.shape import broadcasts_to, sum_to
from . import anomaly_mode


def validate_outputs(node, outs):
    """The right number of gradients, each a Tensor (or None) summed back to its input's shape
    when broadcasting widened it, and cast to its dtype."""
    edges = node.next_functions
    n = len(edges)
    if len(outs) != n:
        if len(outs) > n and all(o is None for o in outs[n:]):
            outs = outs[:n]
        else:
            raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(outs)}): return one gradient (or None) per "
                               "input of forward")
    out = outs  # copied on the first gradient that changes (the common case changes none)
    for i, g in enumerate(outs):
        if g is None:
            continue
        nxt, nr = edges[i]
        if nxt is None:  # a gradient for an input that takes none is dropped
            out = out if out is not outs else list(outs)
            out[i] = None
            continue
        meta = nxt._out_meta[nr] if nxt._out_meta is not None else None  # (None: a node that raises when run)
        if meta is not None and (type(g) is not Tensor or g._data.shape != meta[0] or g._data.dtype is not meta[1]):
            out = out if out is not outs else list(outs)
            out[i] = _validate_one(node, i, g, meta)
    return out


def _validate_one(node, i, g, meta):
    if not isinstance(g, Tensor):
        raise RuntimeError(f"expected Variable or None (got {type(g).__name__}): function {node.name()} "
                           f"returned it as gradient {i}; return a Tensor or None per input")
    shape, dtype = meta[0], None if meta[1] is None else from_numpy_dtype(meta[1])  # (None: a leaf's grad_dtype=None)
    if g._data.shape != shape:
        if not broadcasts_to(shape, g._data.shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                               f"got {list(g.shape)} but expected shape compatible with {list(shape)}")
        g = sum_to(g, shape)
    if dtype is not None and g._data.dtype is not dtype.np and g.dtype is not dtype:  # (identity: the fast path)
        if g.dtype.is_complex and not dtype.is_complex:
            g = g.real
        g = g.to(dtype)
    return g


def check_nan(node, outgoing):
    for i, g in enumerate(outgoing):
        if g is not None and np.isnan(g._data).any():
            trace = node._anomaly_trace
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output."
                               + (f"\nThe forward call that created {node.name()} (recorded by anomaly mode):\n"
                                  f"{trace}" if trace else ""))


def run_with_anomaly(node, step, *args):
    """step(*args) for `node`; on any error warn with the forward stack that created the node (and
    the node whose backward created it), as torch's anomaly mode does."""
    prev = anomaly_mode._state.__dict__.get("current_node")
    anomaly_mode._state.current_node = node
    try:
        return step(*args)
    except Exception:
        _warn_anomaly(node)
        raise
    finally:
        anomaly_mode._state.current_node = prev


def _warn_anomaly(node):
    if node._anomaly_trace is None:
        return
    anomaly_mode.warn_at_user_code(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{node._anomaly_trace}")
    parent = node._anomaly_parent
    while parent is not None and parent._anomaly_trace is not None:
        anomaly_mode.warn_at_user_code(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                                       f"forward call that induced the previous calculation:\n{parent._anomaly_trace}")
        parent = parent._anomaly_parent
