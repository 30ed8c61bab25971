"""The singular value decomposition A = U diag(S) Vh, differentiable in U, S and Vh (reduced, or with full_matrices
the bases completed: those extra columns of U and rows of Vh get no gradient and a zero tangent, as in torch)."""
import numpy as np

from ._op import Op


def _mH(x):
    """the conjugate transpose of the last two dims (a real tensor's conj() is itself: no node)"""
    return x.transpose(-2, -1).conj()


class Svd(Op):
    """dA = U [(skew(U^H dU) S_j + S_i skew(Vh dVh^H)) / (s_j^2 - s_i^2) + diag(dS)] Vh  (+ the parts outside
    the spans of U and V when A is not square, + diag(U^H dU)_ii / s_i for a complex A)"""
    _grad_fn_name = "LinalgSvdBackward0"
    _saved_names = ("U", "S", "Vh")
    _saved_values = {"full_matrices": "full_matrices", "S_sym_argsize_minus_1": "k"}

    @staticmethod
    def forward(ctx, a, full_matrices=False):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        m, n = a.shape[-2:]
        if full_matrices and m != n:  # the reduced factors, completed by a full svd's other columns (or rows)
            uf, _, vhf = np.linalg.svd(a, full_matrices=True)
            k = s.shape[-1]
            u = np.concatenate([u, uf[..., :, k:]], -1) if m > k else u
            vh = np.concatenate([vh, vhf[..., k:, :]], -2) if n > k else vh
        ctx.save_for_backward(u, s, vh)
        ctx.shape, ctx.k, ctx.full_matrices = a.shape, s.shape[-1], bool(full_matrices)
        ctx.set_materialize_grads(False)  # as torch's, the formula keeps only the terms of the outputs used
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        from .linalg import matmul
        u, s, vh = _reduced(ctx, *ctx.saved_tensors)
        gu, _, gvh = _reduced(ctx, gu, None, gvh)
        m, n = ctx.shape[-2:]
        if gu is None and gvh is None:  # only S is used: U diag(dS) Vh (and nothing when nothing is used)
            return None if gs is None else matmul(u, gs.unsqueeze(-1) * vh) if m >= n else matmul(u * gs.unsqueeze(-2), vh)
        inner = _svd_inner(u, s, vh, gu, gs, gvh)
        if m > n and gu is not None:  # + (I - U U^H) dU S^-1 Vh
            gus = gu / s.unsqueeze(-2)
            return matmul(matmul(u, inner) + gus - matmul(u, matmul(_mH(u), gus)), vh)
        if m < n and gvh is not None:  # + U S^-1 dVh (I - V V^H)
            sgvh = gvh / s.unsqueeze(-1)
            return matmul(u, matmul(inner, vh) + sgvh - matmul(matmul(sgvh, _mH(vh)), vh))
        return matmul(u, matmul(inner, vh)) if m >= n else matmul(matmul(u, inner), vh)

    @staticmethod
    def jvp(ctx, ta):
        """dP = U^H dA V;  dS = Re diag(dP);  dU = U (F o (dP S + S dP^H) + i Im diag(dP) / 2S) + (I - U U^H) dA V / S;
        dV = V (F o (S dP + dP^H S) - i Im diag(dP) / 2S) + (I - V V^H) dA^H U / S;  F_ij = 1 / (s_j^2 - s_i^2), 0 on
        the diagonal (the diagonal terms fix the phases of U's and V's columns, as torch)"""
        from .linalg import matmul
        u, s, vh = _reduced(ctx, *ctx.output)
        v = _mH(vh)
        s2 = s * s
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
        eye = e * 0 + _eye_like(e)
        f = (1 - eye) / (e + eye)
        dp = matmul(matmul(_mH(u), ta), v)
        diag = dp.diagonal(0, -2, -1)
        ds = diag.real if diag.is_complex() else diag
        sr, sc = s.unsqueeze(-2), s.unsqueeze(-1)  # S on the right (scales columns), on the left (rows)
        du = matmul(u, f * (dp * sr + sc * _mH(dp)))
        dv = matmul(v, f * (sc * dp + _mH(dp) * sr))
        if diag.is_complex():
            phase = ((diag - ds) / (2 * s)).unsqueeze(-2)
            du, dv = du + u * phase, dv - v * phase
        m, n = ctx.shape[-2:]
        k = s.shape[-1]
        # the parts outside the spans exist only for a non-square A (for a square one they are 0 / S,
        # rounding noise over a zero singular value: torch leaves them out)
        if m > k:
            du = du + (matmul(ta, v) - matmul(u, dp)) / sr
        if n > k:
            dv = dv + (matmul(_mH(ta), u) - matmul(v, _mH(dp))) / sr
        return _completed(ctx, du, -1), ds, _completed(ctx, _mH(dv), -2)


def _reduced(ctx, u, s, vh):
    """U's first k columns and Vh's first k rows (k singular values): what the formulas use of full matrices"""
    if not ctx.full_matrices:
        return u, s, vh
    k = ctx.k
    return (None if u is None else u[..., :k]), s, (None if vh is None else vh[..., :k, :])


def _completed(ctx, t, dim):
    """a tangent of U (dim -1) or Vh (dim -2) widened to the full matrices, zero for the completed columns"""
    m, n = ctx.shape[-2:]
    extra = (m if dim == -1 else n) - ctx.k
    if not ctx.full_matrices or extra == 0:
        return t
    from .shape import cat
    zeros_shape = list(t.shape)
    zeros_shape[dim] = extra
    return cat([t, t.new_zeros(zeros_shape)], dim)


_PHASE_ERROR = ("svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i "
                "phi}. The specified loss function depends on this phase term, making it ill-defined. (Use U and V "
                "only in ways a phase cancels from: U @ Vh, |U|, U @ U.mH, or the singular values.)")


def _svd_inner(u, s, vh, gu, gs, gvh):
    """The middle factor of dA = U (...) Vh: the skew parts over the spectral gaps, dS on the diagonal, and for a
    complex A the phase term, after torch's check that the loss does not depend on the columns' phases."""
    from .linalg import matmul
    uhgu = None if gu is None else matmul(_mH(u), gu)
    vhgv = None if gvh is None else matmul(vh, _mH(gvh))
    uhgu, vhgv = (None if x is None else x - _mH(x) for x in (uhgu, vhgv))
    if u.is_complex():
        im_u, im_v = (np.zeros(s.shape) if x is None else x._data.diagonal(0, -2, -1).imag for x in (uhgu, vhgv))
        if not np.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_PHASE_ERROR)
    s2 = s * s
    gap = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    eye = gap * 0 + _eye_like(gap)
    gap = gap + eye  # 1 on the diagonal, whose terms are 0 (real) or cancel (a phase-invariant complex loss)
    if vhgv is None:
        inner = (uhgu / gap) * s.unsqueeze(-2)
    elif uhgu is None:
        inner = s.unsqueeze(-1) * (vhgv / gap)
    else:
        inner = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / gap
    if gs is not None:
        inner = inner + eye * gs.unsqueeze(-1)
    if u.is_complex() and gu is not None and gvh is not None:
        inner = inner + eye * (uhgu.diagonal(0, -2, -1) / (2 * s)).unsqueeze(-1)
    return inner


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
    from .reduce import return_type
    result = return_type("svd", ("U", "S", "V"))
    if not compute_uv:
        from .._creation import zeros_like
        return result(zeros_like(u), s, zeros_like(_mH(vh)))
    return result(u, s, _mH(vh))
