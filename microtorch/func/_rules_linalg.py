"""Batching rules for the decompositions and solves of ops/linalg_decomp.py, linalg_triangular.py and
linalg_factor.py, and the
reductions of
ops/reduce_scatter.py. The linalg ops work on the last two dims of stacks of matrices, so vmap's batch is one
more stack dim in front: an argument vmap does not batch is expanded to the batch size (its pivots too).
torch.linalg.lu has no batching rule in torch (it warns and loops): neither has it here."""
import numpy as np

from .._tensor import Tensor
from ..ops import linalg_decomp as _ld, linalg_factor as _lf, linalg_triangular as _lt
from ._batching import _batch_size, expand_batch, register, unwrap, wrap_outputs


def _batched(a, level, B):
    v, batched = unwrap(a, level)
    if batched:
        return v
    if isinstance(a, Tensor):
        return expand_batch(a, B)
    if isinstance(a, np.ndarray):
        return np.broadcast_to(a, (B,) + a.shape)
    return a


@register(_lt.SolveTriangular, _lt.TriangularSolve, _lt.CholeskySolve, _lt.CholeskyInverse, _ld.Qr, _ld.LuFactor,
          _ld.LuUnpack, _ld.LuSolve, _lf.LinalgSolveEx, _lf.LinalgInvEx, _lf.LinalgCholeskyEx, _lf.LinalgEigh,
          _lf.LinalgEig, _ld.Geqrf)
def matrix_stacks(cls, args, kwargs, level):
    B = _batch_size(list(args) + list(kwargs.values()), level)
    args = [_batched(a, level, B) for a in args]
    kwargs = {k: _batched(v, level, B) for k, v in kwargs.items()}
    return wrap_outputs(cls.apply(*args, **kwargs), level)


from ..ops import reduce_scatter as _rs  # noqa: E402
from ._batching import per_example, wrap  # noqa: E402


@register(_rs.ScatterReduce, _rs.IndexReduce)
def scatter_reduce(cls, args, kwargs, level):
    """the examples' dim is one further right, and the index gets the batch too (torch has no rule for
    index_reduce: it loops with a warning, as here)"""
    if cls is _rs.IndexReduce:
        return per_example(cls, args, kwargs, level)
    B = _batch_size(list(args) + list(kwargs.values()), level)
    x, src = (_batched(a, level, B) for a in args)
    index = np.ascontiguousarray(_batched(kwargs["index"], level, B))
    return wrap(cls.apply(x, src, **dict(kwargs, dim=kwargs["dim"] + 1, index=index)), level)
