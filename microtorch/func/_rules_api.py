"""Batching rules for the ops in microtorch/ops/loss.py (and other ops added for torch's API)."""

from ..ops import loss
from ._batching import register
from ._rules import pointwise_loss

register(loss.SmoothL1Loss, loss.HuberLoss)(pointwise_loss)

from ..ops import pointwise as pw  # noqa: E402
from ._rules import elementwise  # noqa: E402

register(*pw.UNARY.values(), pw.Logit, pw.Atan2, pw.Hypot, pw.Logaddexp, pw.Logaddexp2, pw.Xlogy, pw.Fmax, pw.Fmin,
         pw.Lerp, pw.LerpTensor, pw.Addcmul, pw.Addcdiv, pw.ClampMin, pw.ClampMax)(elementwise)

from ..ops import rearrange as ra  # noqa: E402
from ..ops import shape as _sh  # noqa: E402
from ._batching import _batch_size, _np_materialize, _shift, expand_batch, unwrap, wrap  # noqa: E402
from ._rules import _materialized, _ndim, softmax_backward_data  # noqa: E402


@register(ra.Roll, ra.Rot90, ra.Nansum)
def dims_keyword(cls, args, kwargs, level):
    """ops with a `dims` keyword: the examples' dims are one further right"""
    v, _ = unwrap(args[0], level)
    if cls is ra.Nansum and kwargs.get("dtype") is not None:  # (cast in C order, as each example would be: a
        v = v.contiguous()                                      # stride-0 batch would sum in another order)
    if cls is ra.Roll and kwargs.get("dims") is None:  # each example is rolled flat
        flat = cls.apply(_sh.reshape(v, (v.shape[0], -1)), shifts=kwargs["shifts"], dims=(1,))
        return wrap(_sh.reshape(flat, tuple(v.shape)), level)
    return wrap(cls.apply(v, **dict(kwargs, dims=_shift(kwargs.get("dims"), _ndim(args[0])))), level)


@register(ra.Trace)
def trace(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(_sh.diagonal(v, 0, 1, 2).sum(-1), level)


def _batched_pair(args, level):
    (x, bx), (s, bs) = unwrap(args[0], level), unwrap(args[1], level)
    B = (x if bx else s).shape[0]
    return (x if bx else expand_batch(x, B)), (s if bs else expand_batch(s, B)), B


@register(ra.Scatter, ra.ScatterValue)
def scatter(cls, args, kwargs, level):
    """the index may be batched too (one per example)"""
    B = _batch_size(list(args) + [kwargs["index"]], level)
    index = _np_materialize(kwargs["index"], level, B)
    tensors = (_materialized(a, level, B) for a in args)
    return wrap(cls.apply(*tensors, **dict(kwargs, dim=kwargs["dim"] + 1, index=index)), level)


@register(ra.IndexAdd)
def index_add(cls, args, kwargs, level):
    x, s, _ = _batched_pair(args, level)
    return wrap(cls.apply(x, s, **dict(kwargs, dim=kwargs["dim"] + 1)), level)

from ..ops import activation as act  # noqa: E402

register(act.Hardsigmoid, act.Hardswish, act.Mish, act.Silu, act.LogSigmoid, act.Hardtanh, act.Threshold,
         act.Softshrink, act.Hardshrink, act.ScaledElu, act.Celu, act.Prelu, act.HardswishBackward,
         act.LogSigmoidBackward, act.HardsigmoidBackward, act.PreluBackward, act.EluResult,
         act.LeakyReluResult)(elementwise)  # (their backward ops: vmap over a hessian)


register(act.GluBackward)(softmax_backward_data)  # ((grad, input, dim=): the same lining up)


@register(act.Glu)
def glu(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, dim=_shift(kwargs.get("dim", -1), _ndim(args[0]))), level)

from ..ops import pad as _pad  # noqa: E402


@register(_pad.ConstantPadNd, _pad.IndexedPad)
def padding(cls, args, kwargs, level):
    """pads apply to the trailing dims, so the batch in front is untouched"""
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, **kwargs), level)

from ..ops import decomposition as _dec  # noqa: E402
from ._batching import ALLCLOSE_ERROR, _levels, wrap_outputs  # noqa: E402


class _BatchedSvd(_dec.Svd):
    """The svd of a batch that vmap stacked. torch's backward of a complex svd that uses U or Vh checks, with an
    allclose, that the loss ignores the columns' phases, and vmap cannot batch allclose: while a vmap still runs
    (vmap(grad(f))), that backward is torch's error; once the vmaps have returned (grad(vmap(f))) it is computed."""

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        if _levels and (gu is not None or gvh is not None) and ctx.saved_tensors[0].is_complex():
            raise RuntimeError(ALLCLOSE_ERROR)
        return _dec.Svd.backward(ctx, gu, gs, gvh)


@register(_dec.Svd, _BatchedSvd)
def svd(cls, args, kwargs, level):
    """numpy's svd works on the trailing two dims: the batch in front is a stack of matrices"""
    v, _ = unwrap(args[0], level)
    return wrap_outputs(_BatchedSvd.apply(v, *args[1:], **kwargs), level)

from ..ops import scan as _scan, special as _sp  # noqa: E402
from ._rules import _SCANS, dim_arg  # noqa: E402

register(_sp.Lgamma, _sp.Digamma, _sp.Polygamma, _sp.Erfinv, _sp.I0, _sp.I1, _sp.Mvlgamma, _sp.Igamma, _sp.Igammac,
         _sp.Copysign, _sp.NanToNum, _sp.Nextafter)(elementwise)
register(_scan.Cumprod, _scan.Logcumsumexp)(dim_arg)
_SCANS.update((_scan.Cumprod, _scan.Logcumsumexp))

from ..ops import linalg_more as _la  # noqa: E402


from ..ops import spectral as _spectral, spectral_inverse as _spectral_inverse  # noqa: E402


@register(_spectral.FftR2C, _spectral.FftC2C, _spectral_inverse.FftC2R, _spectral.ConjPhysical)
def fft_dims(cls, args, kwargs, level):
    """the FFTs (x, dims, ...): each example's dims one further right, past the batch (conj_physical has none)"""
    v, _ = unwrap(args[0], level)
    rest = (tuple(d + 1 for d in args[1]),) + args[2:] if len(args) > 1 else ()
    return wrap(cls.apply(v, *rest, **kwargs), level)

register(_sp.Ldexp, _sp.Frexp)(elementwise)

from ..ops import special_bessel as _bessel, special_unary as _special  # noqa: E402

# torch.special's elementwise functions that torch batches (airy_ai, log_ndtr and the polynomials fall back to a
# loop with torch's performance warning, as torch's do)
register(_special.SpecialEntr, _special.SpecialErfcx, _special.SpecialI0E, _special.SpecialI1E, _special.SpecialNdtri,
         _sp.Zeta, _sp.ZetaNumberInput, _sp.ZetaNumberOther,
         *(getattr(_bessel, name).op for name in _bessel.__all__ if name != "airy_ai"))(elementwise)


@register(_la.Inverse, _la.Det, _la.Slogdet, _la.MatrixExp, _la.Pinverse, _la.Cholesky)
def matrix_stack(cls, args, kwargs, level):
    """ops on the trailing dims only (numpy's linalg on the last two): the batch in front is more of the same"""
    v, _ = unwrap(args[0], level)
    return wrap_outputs(cls.apply(v, *args[1:], **kwargs), level)


from .._torch_misc import BlockDiag  # noqa: E402


@register(BlockDiag)
def block_diag(cls, args, kwargs, level):
    """the op itself on the batch: each example's blocks along its own diagonal (one more leading dim)"""
    B = _batch_size(args, level)
    return wrap(cls.apply(*(_materialized(a, level, B) for a in args),
                          **dict(kwargs, lead=kwargs.get("lead", 0) + 1)), level)
