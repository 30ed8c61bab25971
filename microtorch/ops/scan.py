"""Cumulative ops along a dim: cumprod, cummax, cummin, logcumsumexp.

Their derivatives pair each output k with the inputs i <= k. Where a closed form would divide by
an input (cumprod at a zero), the derivative is written with the n x n matrix of those pairs instead:
exact, and itself differentiable (logcumsumexp's tangent too; its gradient is torch's formula in log
space, which sums each sign of the gradient from the end). cumprod's gradient at a zero takes
torch's two forms (a scan, and under create_graph a loop over the inputs), so that a nan or inf
gradient spreads as in torch."""
import numpy as np

from .._dtype import cast
from .._tensor import Tensor
from ..autograd import grad_mode
from ._kernels import _NAMES
from ._op import Op, dim_passed_on, normalize_dims, shown_dim, zeros_for
from .elementwise import where
from .order import savable
from .reduce import c_order
from .shape import cat, stack


def _upper(n):
    """[i, k] = (k >= i): output k depends on input i."""
    return Tensor._make(np.triu(np.ones((n, n), dtype=bool)))


def _cumprod_pairs(x, dim):
    """P[..., i, k] = prod_{j <= k, j != i} x_j for k >= i, else 0 (dim moved last)."""
    xm = x.movedim(dim, -1)
    n = xm.shape[-1]
    eye = Tensor._make(np.eye(n, dtype=bool))
    rows = xm.unsqueeze(-2).expand(*xm.shape[:-1], n, n)
    rows = where(eye, 1.0, rows)
    return where(_upper(n), Cumprod.apply(rows, rows.ndim - 1), 0.0)


def _cumprod_grad_at_zeros(x, out, grad, d):
    """torch's first-order cumprod gradient for an x with zeros: before the first zero z1 of a slice, the
    reversed cumsum of grad * out over x; at z1, sum_{z1 <= k < z2} grad_k prod_{z1 < j <= k} x_j times
    out_{z1 - 1}; after it, 0 (whatever grad is there, even nan or inf)."""
    zeros = np.cumsum(x == 0, axis=d)
    before, upto_z2 = zeros == 0, zeros == 1
    first = upto_z2 & (np.cumsum(upto_z2, axis=d) == 1)
    with np.errstate(all="ignore"):
        w = np.where(before, out * grad, 0)
        res = np.where(before, np.flip(np.cumsum(np.flip(w, d), axis=d), d) / x, 0)
        inner = np.cumprod(np.where(upto_z2 & ~first, x, 1), axis=d) * np.where(upto_z2, grad, 0)
        z1 = np.argmax(first, axis=d, keepdims=True)
        prev = np.where(z1 == 0, 1, np.take_along_axis(out, np.maximum(z1 - 1, 0), axis=d))
        return np.where(first, inner.sum(axis=d, keepdims=True) * prev, res).astype(grad.dtype, copy=False)


def _cumprod_grad_graph(x, grad, d):
    """torch's create_graph form, one slice k at a time: sum_{j >= k} grad_j prod_{i <= j, i != k} x_i,
    from the product of the inputs before k and the cumprod of those after it (the terms j < k are
    left out, never multiplied by 0)."""
    n = x.shape[d]
    ones = Tensor._make(np.ones(x.shape[:d] + (1,) + x.shape[d + 1:], x._data.dtype))
    slices = []
    for k in range(n):
        after = x.narrow(d, k + 1, n - k - 1).cumprod(d) if k < n - 1 else None
        before = ones if k == 0 else x.narrow(d, 0, k).prod(d, keepdim=True)
        omitted = before if after is None else cat([before, before.expand_as(after) * after if k else after], d)
        slices.append((grad.narrow(d, k, n - k) * omitted).sum(d))
    return stack(slices, d)


_REAL_INPUT_COMPLEX_GRAD = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to "
                            "be true, but got false.  (Could this error message be improved?  If so, please report an "
                            "enhancement request to PyTorch.)")
_IN_DOUBLE = {np.dtype(np.float16): np.float64, np.dtype(np.float32): np.float64,
              np.dtype(np.complex64): np.complex128}


class Cumprod(Op):
    """d out_k / d x_i = prod_{j <= k, j != i} x_j for i <= k. dtype= casts inside the op, as torch's (its node links
    to the input and saves it uncast); backward casts the gradient back to the input's dtype first."""
    _grad_fn_name = "CumprodBackward0"
    _saved_names, _saved_values = ("self", "result"), {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim, dtype=None, given_dim=None):
        ctx.dim, ctx.given_dim = dim, dim if given_dim is None else given_dim
        y = x if dtype is None else cast(x.real if x.dtype.kind == "c" and dtype.kind != "c" else x, dtype)
        if not y.ndim:  # (0-d: its one number, recorded as torch)
            out = y.copy()
        elif y.dtype in _IN_DOUBLE:  # torch's CPU scan multiplies in double (its accumulate type), rounding each result
            out = np.cumprod(y, axis=dim, dtype=_IN_DOUBLE[y.dtype]).astype(y.dtype)
        else:  # (in y's dtype: numpy would give uint8 uint64)
            out = np.cumprod(y, axis=dim, dtype=y.dtype)
        out = c_order(out)  # (torch's scans give C order, whatever x's layout)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        d = ctx.dim
        if grad.dtype != x.dtype:  # (dtype= was given: torch casts the gradient back first)
            grad = grad.to(x.dtype)
        if x.numel() <= 1 or x.shape[d] <= 1:  # each output is its input (or there is none), as torch
            return grad, None
        complex_of_real = out.is_complex() and not x.is_complex()  # (dtype=complex: the forms below fail in torch)
        if not (x._data == 0).any():  # the closed form: reversed cumsum of grad * out, over x
            if complex_of_real:
                raise RuntimeError(_REAL_INPUT_COMPLEX_GRAD)
            return (grad * out.conj()).flip(d).cumsum(d).flip(d) / x.conj(), None
        if not grad_mode.is_grad_enabled():  # torch's O(n) form: nan and inf land where its do
            if complex_of_real:
                raise RuntimeError(f"result type {_NAMES[out.dtype.name]} can't be cast to the desired output type "
                                   f"{_NAMES[x.dtype.name]}")
            return Tensor._make(_cumprod_grad_at_zeros(x._data.conj(), out._data.conj(), grad._data, d)), None
        return _cumprod_grad_graph(x.conj(), grad, d), None

    @staticmethod
    def jvp(ctx, t, _dim):
        x, d, out = ctx.inputs[0], ctx.dim, ctx.output
        if not x.ndim:
            tangent = t * 1
        elif x.numel() and not (x._data == 0).any():
            tangent = out * (t / x).cumsum(d)
        else:
            pairs = _cumprod_pairs(x, d)
            tangent = (pairs * t.movedim(d, -1).unsqueeze(-1)).sum(-2).movedim(-1, d)
        return tangent if tangent.dtype == out.dtype else tangent.to(out.dtype)  # (dtype=: in the result's, as torch)


class Logcumsumexp(Op):
    """d out_k / d x_i = exp(x_i - out_k) for i <= k. torch's node shows the dim as given (`given_dim`)"""
    _grad_fn_name = "LogcumsumexpBackward0"
    _saved_names, _saved_values = ("self", "result"), {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim, given_dim=None):
        ctx.dim, ctx.given_dim = dim, dim if given_dim is None else given_dim
        if x.dtype.kind == "c":  # numpy's logaddexp is real only: shift by the running real maximum
            top = np.maximum.accumulate(np.where(np.isfinite(x.real), x.real, 0), axis=dim)
            out = np.log(np.cumsum(np.exp(x - top.max(axis=dim, keepdims=True)), axis=dim)) + \
                top.max(axis=dim, keepdims=True)
        else:
            out = np.logaddexp.accumulate(x, axis=dim) if x.size and x.ndim else x.copy()
            if x.size and x.ndim:  # (torch's scan starts from -inf: its first value is x + log1p(0), so -0 is +0)
                out[(slice(None),) * dim + (0,)] += 0.0
        out = c_order(out)  # (torch's scans give C order, whatever x's layout)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not x.ndim or not x.numel():
            return grad * 1, None
        return Logcumsumexp._adjoint(grad, x, out, ctx.dim), None

    @staticmethod
    def _adjoint(grad, x, out, dim):
        """torch's formula, in log space (TensorFlow's): the positive and the negative parts of the gradient each
        summed from the end by a logcumsumexp, so nothing overflows; a NaN gradient is in neither part (0)"""
        def from_end(v):
            return Logcumsumexp.apply(v.flip(dim), dim).flip(dim)
        if grad.dtype.is_complex:
            return (from_end(grad.conj().log() - out.conj()) + x.conj()).exp().conj()
        lowest = Tensor._make(np.asarray(np.finfo(grad._data.dtype).min))
        log_abs = grad.abs().log()
        positive = from_end(where(grad > 0, log_abs, lowest) - out)
        negative = from_end(where(grad < 0, log_abs, lowest) - out)
        return (positive + x).exp() - (negative + x).exp()

    @staticmethod
    def jvp(ctx, t, _dim):
        if not t.ndim:
            return t * 1
        w = Logcumsumexp._weights(ctx.inputs[0], ctx.output, ctx.dim)
        return (w * t.movedim(ctx.dim, -1).unsqueeze(-1)).sum(-2).movedim(-1, ctx.dim)

    @staticmethod
    def _weights(x, out, dim):
        """W[..., i, k] = exp(x_i - out_k) for k >= i (at most 1, so no overflow), else 0."""
        xm, om = x.movedim(dim, -1), out.movedim(dim, -1)
        gap = xm.unsqueeze(-1) - om.unsqueeze(-2)
        return where(_upper(xm.shape[-1]), gap, gap * 0 - float("inf")).exp()


class CumExtreme(Op):
    """values of the running max (min); the gradient goes to the input each one came from. As torch's node, it
    saves x and the indices the caller returns (`returned`: changed in place, backward refuses), and shows the
    dim as the caller gave it (`given_dim`)."""
    _grad_fn_name = "CummaxBackward0"
    _saved_names = ("self", "indices")
    _saved_values = {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim, indices, returned=None, given_dim=None):
        ctx.dim, ctx.indices, ctx.shape = dim, indices, x.shape
        ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
        ctx.save_for_backward(x, indices if returned is None else returned)
        return c_order(np.take_along_axis(x, indices, axis=dim)) if x.ndim else x.copy()

    @staticmethod
    def backward(ctx, grad):
        from .index_more import scatter_add
        x, indices = ctx.saved_tensors
        if not ctx.shape:  # (0-d: the value is the input)
            return grad * 1, None, None
        if 0 in ctx.shape:  # (torch's backward returns an empty input itself as its gradient)
            return x, None, None
        dim = dim_passed_on(ctx.dim, ctx.given_dim, len(ctx.shape))  # (torch's cummaxmin_backward: scatter_add)
        return scatter_add(zeros_for(ctx.shape, grad), dim, indices, grad), None, None

    @staticmethod
    def jvp(ctx, t, _dim, _indices):
        from .index import Gather
        return Gather.apply(t, ctx.dim, ctx.indices) if t.ndim else t * 1


class CumminOp(CumExtreme):
    _grad_fn_name = "CumminBackward0"


# torch's node packs self, then the indices (its result): the names alone would put "indices" first
CumExtreme._pack_order = CumminOp._pack_order = (0, 1)


def _running_index(x, dim, largest):
    """The index of the running max (min) along dim: the last position holding it (NaN wins)."""
    acc = (np.maximum if largest else np.minimum).accumulate(x, axis=dim)
    new = (x >= acc if largest else x <= acc) | np.isnan(x)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    pos = np.where(new, np.arange(x.shape[dim]).reshape(shape), 0)
    return np.maximum.accumulate(pos, axis=dim).astype(np.int64)


def need_tensor(v, op, name="other", position=1):
    """torch's TypeError for an argument that must be a Tensor."""
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(v).__name__}")
    return v


def need_int(v, op, name="dim", position=1):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be int, not {type(v).__name__}")
    return v


def _dim(input, dim, op):
    need_tensor(input, op, "input", 0)
    need_int(dim, op)
    return normalize_dims(dim, input.ndim, op)[0] if input.ndim else normalize_dims(dim, 0, op) and 0


def cumprod(input, dim, *, dtype=None):
    from .. import _dtype
    from ._checks import need_grad_dtype
    d, given = _dim(input, dim, "cumprod"), shown_dim(dim)
    if dtype is not None:  # (cast inside the op: torch's node links to the input itself)
        need_grad_dtype(input, dtype, "cumprod")
        dtype = _dtype.to_dtype(dtype)
        if dtype.name == "bool":
            raise NotImplementedError('"cumprod_out_cpu" not implemented for \'Bool\'')
        return Cumprod.apply(input, d, dtype=dtype.np, given_dim=given)
    if input._data.dtype.kind in "biu":
        return Cumprod.apply(input.to(_dtype.int64), d, given_dim=given)
    return Cumprod.apply(input, d, given_dim=given)


def logcumsumexp(input, dim):
    d = _dim(input, dim, "logcumsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"logcumsumexp(): expected a floating point tensor, got {input.dtype}; convert it with "
                           ".float() or .double()")
    return Logcumsumexp.apply(input, d, given_dim=shown_dim(dim))


def _cum_extreme(input, dim, largest):
    from .reduce import return_type
    name = "cummax" if largest else "cummin"
    need_int(dim, name)
    op = CumExtreme if largest else CumminOp
    if input.numel() == 0:  # as torch: an empty tensor is returned as it is, whatever the dim (its own node)
        indices = Tensor._make(np.zeros(input._data.shape, np.int64))
        return return_type(name)(op.apply(input, 0, indices._data, returned=savable(indices), given_dim=dim), indices)
    d = _dim(input, dim, name)
    x = input
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'ComplexFloat\': complex tensors have no '
                                  "order; compare .abs() or .real instead")
    indices = Tensor._make(c_order(_running_index(x._data, d, largest)) if x.ndim else np.zeros((), np.int64))
    values = op.apply(x, d, indices._data, returned=savable(indices), given_dim=dim)
    return return_type(name)(values, indices)


def cummax(input, dim):
    return _cum_extreme(input, dim, True)


def cummin(input, dim):
    return _cum_extreme(input, dim, False)
