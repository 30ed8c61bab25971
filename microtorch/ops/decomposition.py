"""The singular value decomposition A = U diag(S) Vh (reduced), differentiable in U, S and Vh."""
import numpy as np

from ._op import Op


def _mH(x):
    return x.transpose(-2, -1)


class Svd(Op):
    """dA = U [(skew(U^T dU) S_j + S_i skew(Vh dVh^T)) / (s_j^2 - s_i^2) + diag(dS)] Vh  (+ the parts outside
    the spans of U and V when A is not square)"""
    _grad_fn_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        ctx.save_for_backward(u, s, vh)
        ctx.shape = a.shape
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        from .linalg import matmul
        u, s, vh = ctx.saved_tensors
        m, n = ctx.shape[-2:]
        k = s.shape[-1]
        s2 = s * s
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
        eye = e * 0 + _eye_like(e)
        e = e + eye  # 1 on the diagonal (its terms are replaced by dS below)
        uhgu = matmul(_mH(u), gu)
        vhgv = matmul(vh, _mH(gvh))
        inner = ((uhgu - _mH(uhgu)) * s.unsqueeze(-2) + s.unsqueeze(-1) * (vhgv - _mH(vhgv))) / e
        inner = inner * (1 - eye) + eye * gs.unsqueeze(-1)
        ga = matmul(matmul(u, inner), vh)
        if m > k:
            ga = ga + matmul((gu - matmul(u, uhgu)) / s.unsqueeze(-2), vh)
        if n > k:
            ga = ga + matmul(u, (gvh - matmul(_mH(vhgv), vh)) / s.unsqueeze(-1))
        return ga

    @staticmethod
    def jvp(ctx, ta):
        """dP = U^T dA V;  dS = diag(dP);  dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V / S;
        dV = V (F o (S dP + dP^T S)) + (I - V V^T) dA^T U / S;  F_ij = 1 / (s_j^2 - s_i^2), 0 on the diagonal"""
        from .linalg import matmul
        u, s, vh = ctx.output
        v = _mH(vh)
        s2 = s * s
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
        eye = e * 0 + _eye_like(e)
        f = (1 - eye) / (e + eye)
        dp = matmul(matmul(_mH(u), ta), v)
        ds = (dp * eye).sum(-1)
        sr, sc = s.unsqueeze(-2), s.unsqueeze(-1)  # S on the right (scales columns), on the left (rows)
        du = matmul(u, f * (dp * sr + sc * _mH(dp)))
        dv = matmul(v, f * (sc * dp + _mH(dp) * sr))
        m, n = ctx.shape[-2:]
        k = s.shape[-1]
        # the parts outside the spans exist only for a non-square A (for a square one they are 0 / S,
        # rounding noise over a zero singular value: torch leaves them out)
        if m > k:
            du = du + (matmul(ta, v) - matmul(u, dp)) / sr
        if n > k:
            dv = dv + (matmul(_mH(ta), u) - matmul(v, _mH(dp))) / sr
        return du, ds, _mH(dv)


def _eye_like(e):
    from .._tensor import Tensor
    k = e.shape[-1]
    return Tensor._make(np.broadcast_to(np.eye(k, dtype=e._data.dtype), tuple(e.shape)).copy())


def svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with A = U diag(S) V^T (V, not Vh; reduced when some=True)."""
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: The input tensor A must have at least 2 dimensions. (got {input.ndim})")
    if not some:
        raise NotImplementedError("svd(some=False) (the full U and V) is not implemented in microtorch; use the "
                                  "reduced decomposition (some=True)")
    u, s, vh = Svd.apply(input)
    from collections import namedtuple
    result = namedtuple("svd", ["U", "S", "V"])
    if not compute_uv:
        from .._creation import zeros_like
        return result(zeros_like(u), s, zeros_like(_mH(vh)))
    return result(u, s, _mH(vh))
