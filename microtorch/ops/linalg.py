"""Matrix products with torch's rules for 1-D, 2-D and batched operands."""
import numpy as np

from .._tensor import Tensor
from ..autograd._hooks import composite
from ._kernels import _NAMES, _TYPE_META
from ._op import Op, plain, unrecorded
from .elementwise import conj
from .shape import SqueezeDim, broadcasts_to


class Matmul(Op):
    """d(A@B) = (G @ B^T, A^T @ G), with 1-D operands promoted and batch dims summed"""
    _grad_fn_name = "UnsafeViewBackward0"
    in_order = None  # (a, b) -> the product as torch's own loop adds it up, or None where torch calls the BLAS

    @staticmethod
    def forward(ctx, a, b):
        ctx.nd = (a.ndim, b.ndim)
        # each gradient needs only the other operand
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        in_order = ctx._forward_cls.in_order
        out = in_order(a, b) if in_order is not None else None
        return _product(a, b) if out is None else out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        nda, ndb = ctx.nd
        ga = gb = None
        if nda == 1 and ndb == 1:
            return (grad * b.conj() if ctx.needs_input_grad[0] else None,
                    grad * a.conj() if ctx.needs_input_grad[1] else None)
        g = grad.unsqueeze(-2) if nda == 1 else grad
        g = g.unsqueeze(-1) if ndb == 1 else g
        if ctx.needs_input_grad[0]:
            ga = matmul(g, (b.unsqueeze(-1) if ndb == 1 else b).mT.conj())
            ga = ga.squeeze(-2) if nda == 1 else ga
        if ctx.needs_input_grad[1]:
            gb = matmul((a.unsqueeze(0) if nda == 1 else a).mT.conj(), g)
            gb = gb.squeeze(-1) if ndb == 1 else gb
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return matmul(ta, b) + matmul(a, tb)


class Mm(Matmul):
    _grad_fn_name = "MmBackward0"
    _saved_names = ("self", "mat2")
    _saved_values = {"self_sym_sizes": "size0", "mat2_sym_sizes": "size1"}  # (read from ctx.sizes: see _sizes_shown)

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        if need_a or need_b:  # (only backward reads these: not for the products backward makes)
            ctx.column_major = (_column_major(a), _column_major(b))
            ctx.sizes = (a.shape, b.shape)
            ctx.save_for_backward(a if need_b else None, b if need_a else None)  # each gradient needs the other
        return _product(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (_mat1_grad(grad, b, ctx.column_major[0]) if ctx.needs_input_grad[0] else None,
                _mat2_grad(grad, a, ctx.column_major[1]) if ctx.needs_input_grad[1] else None)


def _sizes_shown(cls):
    """cls's node shows its operands' shapes (torch's _saved_self_sym_sizes...) as size0 and size1, read from the one
    tuple ctx.sizes that forward keeps (a single store on these hot paths)"""
    for i in (0, 1):
        setattr(cls._backward_cls, f"size{i}", property(lambda node, i=i: node.sizes[i]))


_sizes_shown(Mm)


def _product(a, b):
    """a @ b, as torch's gemm computes it: when k = 1 it multiplies, keeping the sign of 0 * -x (a sum adds it
    to +0)."""
    if a.shape[-1] == 1 and b.ndim == 2 and b.shape[0] == 1 and a.ndim >= 2 and b.shape[1] > 1 and a.size > 1:
        return a * b
    return a @ b


_REAL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _in_order(products, axis):
    """The products summed along axis one by one, in order, from 0.0 (0.0 + -0.0 is 0.0), as a C loop adds them."""
    first = [slice(None)] * products.ndim
    first[axis] = 0
    products[tuple(first)] += 0.0
    last = [slice(None)] * products.ndim
    last[axis] = -1
    return np.ascontiguousarray(np.add.accumulate(products, axis=axis)[tuple(last)])


def _bmm_in_order(a, b):
    """torch's bmm of small float matrices (k n m < 400) runs its own loop, which adds each element's products in
    order (the BLAS adds them in another: the last bits differ). None for the others."""
    if type(a) is np.ndarray is type(b) and a.ndim == 3 == b.ndim and a.dtype in _REAL_FLOATS and \
            0 < a.shape[2] * a.shape[1] * b.shape[2] < 400:
        return _in_order(a[:, :, :, None] * b[:, None, :, :], axis=2)
    return None


def _mv_in_order(a, v):
    """torch's mv of a float matrix laid out column by column (gemv 'n', as `w.t() @ x`) adds a v[j] * column j in
    order, as MKL's gemv does with a matrix of at most 4 columns either way. None for the others (and for the large:
    the products would take a matrix's memory again)."""
    if type(a) is not np.ndarray or type(v) is not np.ndarray or a.dtype not in _REAL_FLOATS or a.ndim != 2 \
            or v.ndim != 1 or not 0 < a.size <= 1 << 16:
        return None
    n, k = a.shape
    if k <= 4 or a.strides[0] == a.itemsize and a.strides[1] >= a.itemsize * max(1, n):
        return _in_order(a * v, axis=1)
    return None


def _column_major(m):
    """m is laid out column after column (as `w.t()` of a row-major w is)."""
    return m.strides[0] == m.itemsize and m.strides[1] == m.itemsize * m.shape[0]


def _mat1_grad(grad, mat2, column_major):
    """grad @ mat2^H, computed as torch's mm backward does: in mat1's layout when mat1 is column-major.
    (_mm, not mm(): the shapes and dtypes agree already, nothing to check.)"""
    if _one_product(grad, mat2):
        g, m = grad._data, mat2._data
        return plain(_product(m, g.T).T if column_major else _product(g, m.T))
    return _t(_mm(conj(mat2), _t(grad))) if column_major else _mm(grad, _t(mat2, conjugate=True))


def _mat2_grad(grad, mat1, column_major):
    """mat1^H @ grad, in mat2's layout when mat2 is column-major (the weight of nn.Linear, seen through
    `weight.t()`: its gradient is then row-major like the weight, and AccumulateGrad can keep it)."""
    if _one_product(grad, mat1):
        g, m = grad._data, mat1._data
        return plain(_product(g.T, m).T if column_major else _product(m.T, g))
    return _t(_mm(_t(grad), conj(mat1))) if column_major else _mm(_t(mat1, conjugate=True), grad)


def _one_product(grad, mat):
    """Nothing records grad or mat and mat is real (its own conjugate): the gradient is one numpy product of their
    arrays, transposed as the steps below would, without a Tensor per step (see _op.plain)."""
    return mat._data.dtype.kind != "c" and unrecorded(grad) and unrecorded(mat)


def _mm(a, b):
    """Mm.apply(a, b), or its product alone where nothing records (see elementwise.plain)."""
    return plain(_product(a._data, b._data)) if unrecorded(a) and unrecorded(b) else Mm.apply(a, b)


def _t(m, conjugate=False):
    """m.t() (m.t().conj() with conjugate): the ops themselves where they record a node (create_graph) or meet a
    vmap batch or a forward-AD tangent, so that the graph is torch's; otherwise only the transposed array,
    which is all the product needs. (A backward without create_graph, the common case, ran a TBackward0 op
    per product that nobody sees, at about 2 us: more than the product of two 16x16 matrices.)"""
    if not unrecorded(m):
        return m.t().conj() if conjugate else m.t()
    data = m._data
    return Tensor._make(data.T.conj() if conjugate and data.dtype.kind == "c" else data.T)


class Mv(Matmul):
    _grad_fn_name = "MvBackward0"
    _saved_names = ("self", "vec")
    in_order = staticmethod(_mv_in_order)

    @staticmethod
    def backward(ctx, grad):
        a, v = ctx.saved_tensors  # (torch's formula: grad.ger(vec), ger a reshape times vec; a.t().mv(grad))
        return (grad.reshape(grad.shape[0], 1) * v.conj() if ctx.needs_input_grad[0] else None,
                Mv.apply(a.conj().t(), grad) if ctx.needs_input_grad[1] else None)


def _dot_in_order(a, b):
    """torch's dot of real float vectors when one is strided (not a run of adjacent elements): MKL walks them with a
    stride, adding the products in order: float32's one after another; float64's in two running sums, of the even
    pairs (the odd last one with them) and of the odd pairs, added at the end. None when both are contiguous (MKL's
    vector lanes then: numpy's BLAS adds in other lanes, the last bits differ)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype not in _REAL_FLOATS or a.ndim != 1 or \
            b.ndim != 1 or not a.size or a.strides[0] == a.itemsize and b.strides[0] == b.itemsize:
        return None
    products = a * b
    if a.dtype == np.float32:
        return _in_order(products, axis=0).reshape(())  # (_in_order's array is 1-d: a dot is 0-d)
    whole = products.size - products.size % 2
    evens = _in_order(np.concatenate([products[0:whole:2], products[whole:]]), axis=0)
    odds = _in_order(products[1:whole:2], axis=0) if whole else np.float64(0)
    return (evens + odds).reshape(())


class Dot(Matmul):
    _grad_fn_name = "DotBackward0"
    _saved_names = ("self", "tensor")
    in_order = staticmethod(_dot_in_order)


class Bmm(Matmul):
    """d(A@B) batched = (G @ B^T, A^T @ G), as torch's formulas: bmm with the other transposed"""
    _grad_fn_name = "BmmBackward0"
    _saved_names = ("self", "mat2")
    in_order = staticmethod(_bmm_in_order)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (Bmm.apply(grad, b.transpose(1, 2).conj()) if ctx.needs_input_grad[0] else None,
                Bmm.apply(a.transpose(1, 2).conj(), grad) if ctx.needs_input_grad[1] else None)


def _check(a, b, op):
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError(f"{op}(): expected Tensors, got {type(a).__name__} and {type(b).__name__}")
    if a._sparse or b._sparse:
        raise NotImplementedError(f"Could not run 'aten::{op}' with arguments from the 'SparseCPU' backend: "
                                  "microtorch multiplies a sparse matrix by a dense one with mm, matmul, @ or "
                                  "torch.sparse.mm/addmm; for other products convert with .to_dense()")
    sa, sb = a._data.shape, b._data.shape
    if not sa or not sb:
        raise RuntimeError(f"{op}: both arguments need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    ka = sa[-1]
    kb = sb[-2] if len(sb) > 1 else sb[0]
    if ka != kb:
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to "
                               f"have the same number of elements, but got {sa[0]} and {sb[0]} elements "
                               "respectively")
        ma = "x".join(map(str, sa if len(sa) > 1 else (1,) + sa))
        mb = "x".join(map(str, sb if len(sb) > 1 else sb + (1,)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ma} and {mb}) in {op}: the last "
                           f"dimension of the first ({ka}) must equal the first dimension of the second ({kb}); "
                           "transpose an operand (.mT) or reshape it so that the inner sizes agree")
    if len(sa) > 2 and len(sb) > 2:
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise RuntimeError(f"{op}: the batch dimensions {list(sa[:-2])} and {list(sb[:-2])} are not "
                               f"broadcastable (shapes {list(sa)} and {list(sb)}); give both operands the "
                               "same batch sizes, or 1 where one should be broadcast") from None
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{_dtype_error(a, b, op)} ({op}: {a.dtype} and {b.dtype}); convert one operand, e.g. "
                           "with .float() or .double()")
    if a._data.dtype.kind == "b":  # (torch has no kernel for it; numpy would answer with `or` and `and`)
        raise NotImplementedError(f"\"{op}\" not implemented for 'Bool': a matrix product multiplies numbers; convert "
                                  "the operands with .int() or .float()")
    return a, b


def _dtype_error(a, b, op):
    """torch's words for operands of two dtypes: those of the kernel the product reaches (matmul reaches dot,
    mv, mm or bmm by the operands' dims, as its dispatch below)."""
    da, db = a.ndim, b.ndim
    if op == "matmul":
        folded = (da >= 3 and db <= 2 or db >= 3 and da <= 2) and _should_fold(a, b)
        op = "dot" if da == db == 1 else "mv" if db == 1 and da >= 2 else "mm" if max(da, db) <= 2 or folded \
            else "bmm"
        if folded and db > da:  # (folded as (b.mT @ a.mT).mT: b is the first operand)
            a, b = b, a
    meta = [_TYPE_META[t._data.dtype.name] for t in (a, b)]
    name = [_NAMES[t._data.dtype.name] for t in (a, b)]
    if op == "dot":
        return f"dot : expected both vectors to have same dtype, but found {name[0]} and {name[1]}"
    if op == "mv":
        return f"addmv input tensors must have the same dtype, but got {name[1]}, {name[0]}, and {name[1]}"
    if op == "bmm":
        return f"expected scalar type {name[0]} but found {name[1]}"
    return f"expected m1 and m2 to have the same dtype, but got: {meta[0]} != {meta[1]}"


sparse_product = None  # (a, b, op) -> a @ b with a sparse operand: set by microtorch.sparse when it loads


@composite("aten::matmul")
def matmul(input, other):
    """torch's dispatch: dot, mv, mm, a folded mm/mv when one side is a batch and the other a
    matrix or vector, else one batched product (bmm in torch) with broadcasting."""
    a, b = input, other
    if type(a) is not Tensor or type(b) is not Tensor:  # (a plain Tensor pays this check only)
        if getattr(a, "_sparse", False) or getattr(b, "_sparse", False):
            return sparse_product(a, b, "matmul")
    a, b = _check(a, b, "matmul")
    da, db = a._data.ndim, b._data.ndim  # (the arrays': Tensor.ndim is a Python property)
    if da == 2 and db == 2:
        return Mm.apply(a, b)
    if da == 1 and db == 1:
        return Dot.apply(a, b)
    if da == 2 and db == 1:
        return Mv.apply(a, b)
    if da == 1 and db == 2:
        return _SqueezeRow.apply(Mm.apply(a.unsqueeze(0), b), dims=(0,))
    if (da >= 3 and db <= 2 or db >= 3 and da <= 2) and _should_fold(a, b):
        from .shape import UnsafeView
        transpose = db > da  # fold b.mT and compute (b.mT @ a.mT).mT
        t1 = b.mT if transpose else a
        t2 = (a.t() if da == 2 else a) if transpose else b
        shape = tuple(t1.shape[:-1]) + ((t2.shape[1],) if t2.ndim == 2 else ())
        folded = t1.reshape(int(np.prod(t1.shape[:-1])), t1.shape[-1])
        if t2.ndim == 1:
            return UnsafeView.apply(Mv.apply(folded, t2), shape)
        out = UnsafeView.apply(Mm.apply(folded, t2), shape)
        return out.mT.contiguous() if transpose else out
    return _batched(a, b)


def _batched(a, b):
    """torch's batched path: expand both to the broadcast batch, fold it into one dim, bmm, unfold."""
    from .shape import UnsafeView
    da, db = a.ndim, b.ndim
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:  # a batch of 1 that needs grad is folded instead
        if a.shape[0] == 1 and a.requires_grad:
            return matmul(a.squeeze(0), b)
        if b.shape[0] == 1 and b.requires_grad:
            return matmul(a, b.squeeze(0))
    n, m1 = (a.shape[-2] if da > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if db > 1 else (b.shape[0], 1)
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    size = int(np.prod(batch))
    a3 = a.expand(batch + (n, m1)).reshape(size, n, m1)
    if db == 1:
        b3 = b.expand(batch + (m2,)).reshape(size, m2).unsqueeze(2)
    else:
        b3 = b.expand(batch + (m2, p)).reshape(size, m2, p)
    out = Bmm.apply(a3, b3)
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return UnsafeView.apply(out.squeeze(-1) if db == 1 else out, shape)


def _should_fold(a, b):
    """torch folds the batched operand when the other one requires grad, or when folding
    needs no copy (its leading dims are contiguous)."""
    transpose = b.ndim > a.ndim
    big = np.swapaxes(b._data, -1, -2) if transpose else a._data
    if (a if transpose else b).requires_grad:
        return True
    if a.ndim == 2:  # folding would need a transpose and a copy of the result
        return False
    if big.size == 0:
        return True
    sh, st = big.shape, list(big.strides)
    for i in reversed(range(big.ndim - 1)):  # numpy gives a size-1 dim of broadcast_to / None stride 0,
        if sh[i] == 1 and st[i] == 0:        # torch the stride it would have if contiguous
            st[i] = st[i + 1] * sh[i + 1]
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(big.ndim - 2))


class _SqueezeRow(SqueezeDim):
    _grad_fn_name = "SqueezeBackward4"  # torch squeezes the row of vector @ matrix in place


def no_out_dtype(op):
    """torch's answer to mm(..., out_dtype=...) on the CPU: the option has CUDA kernels only."""
    raise NotImplementedError(f"Could not run 'aten::{op}.dtype' with arguments from the 'CPU' backend: torch "
                              f"runs {op}(out_dtype=...) on CUDA only; cast the result with .to(dtype) instead")


def mm(input, mat2, *, out_dtype=None):
    if out_dtype is not None:
        no_out_dtype("mm")
    a, b = input, mat2
    if type(a) is not Tensor or type(b) is not Tensor:  # (a plain Tensor pays this check only)
        if getattr(a, "_sparse", False) or getattr(b, "_sparse", False):
            return sparse_product(a, b, "mm")
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: self must be a matrix and mat2 must be a matrix (got {a.ndim}D and {b.ndim}D); "
                           "use matmul for other shapes")
    a, b = _check(a, b, "mm")
    return Mm.apply(a, b)


def bmm(input, mat2, *, out_dtype=None):
    if out_dtype is not None:
        no_out_dtype("bmm")
    a, b = input, mat2
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor and batch2 a 3D tensor (got {a.ndim}D and {b.ndim}D)")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have same number of batches, got {a.shape[0]} and "
                           f"{b.shape[0]}")
    a, b = _check(a, b, "bmm")
    return Bmm.apply(a, b)


def mv(input, vec):
    a, v = input, vec
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {v.ndim}")
    a, v = _check(a, v, "mv")
    return Mv.apply(a, v)


def dot(input, tensor):
    a, b = input, tensor
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    a, b = _check(a, b, "dot")
    return Dot.apply(a, b)


def outer(input, vec2):
    a, b = input, vec2
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {a.ndim}D and {b.ndim}D")
    return a.reshape(-1, 1) * b  # (a view: torch records ViewBackward0)


ger = outer


class Addmm(Op):
    """beta bias + alpha x @ w: d = (beta G, alpha G @ w^T, alpha x^T @ G). given: (beta, alpha) as the caller gave
    them, when not the ints 1 (torch's node shows them as given); beta 0 ignores bias, NaN or not, as torch's"""
    _grad_fn_name = "AddmmBackward0"
    _saved_names = ("mat1", "mat2")
    _saved_values = {"beta": "beta", "alpha": "alpha", "mat1_sym_sizes": "size0", "mat2_sym_sizes": "size1"}

    @staticmethod
    def forward(ctx, bias, x, w, given=None):
        # each product's gradient needs only the other operand (torch saves no more)
        ctx.save_for_backward(x if ctx.needs_input_grad[2] else None, w if ctx.needs_input_grad[1] else None)
        ctx.column_major = (_column_major(x), _column_major(w))
        ctx.sizes = (x.shape, w.shape)
        if given is not None:
            ctx.beta, ctx.alpha = given
        out = _product(x, w)
        if ctx.alpha != 1:
            out *= ctx.alpha
        if ctx.beta == 0:  # (bias is not read: its NaNs do not reach the result)
            return out
        scaled = bias if ctx.beta == 1 else bias * ctx.beta
        if scaled.dtype != out.dtype:  # (addmm() refuses it, as torch; a direct Addmm.apply promotes)
            return scaled + out
        out += scaled  # (into the product: one temporary fewer than bias + x @ w)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return (_scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None,
                _scaled(_mat1_grad(grad, w, ctx.column_major[0]), ctx.alpha) if ctx.needs_input_grad[1] else None,
                _scaled(_mat2_grad(grad, x, ctx.column_major[1]), ctx.alpha) if ctx.needs_input_grad[2] else None)

    @staticmethod
    def jvp(ctx, tbias, tx, tw):
        _, x, w = ctx.inputs[:3]
        return _scaled(tbias, ctx.beta) + _scaled(matmul(tx, w) + matmul(x, tw), ctx.alpha)


def _scaled(t, scale):
    """t * scale, or t itself for a scale of 1 (torch's maybe_multiply: no node)"""
    return t if scale == 1 else t * scale


_sizes_shown(Addmm)
Addmm._backward_cls.beta = Addmm._backward_cls.alpha = 1  # (what the node shows unless forward was given others)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out_dtype=None):
    if out_dtype is not None:
        no_out_dtype("addmm")
    if (beta != 1 or alpha != 1) and not (isinstance(input, Tensor) and input.dtype.is_floating_point and
                                          all(type(v) in (int, float) for v in (beta, alpha))):
        return input * beta + mm(mat1, mat2) * alpha
    mat1, mat2 = _check(mat1, mat2, "addmm")
    if isinstance(input, Tensor):
        _check_bias(input, mat1, mat2)
    if type(beta) is int is type(alpha) and beta == 1 == alpha:
        return Addmm.apply(input, mat1, mat2)
    return Addmm.apply(input, mat1, mat2, given=(beta, alpha))


def _check_bias(bias, mat1, mat2):
    """addmm's input as torch checks it: mat2's dtype, and a shape that expands to the product's."""
    if bias._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_NAMES.get(bias.dtype.name)} and "
                           f"{_NAMES.get(mat2.dtype.name)} (addmm: the input added to the product); convert it, "
                           f"e.g. with .to({mat2.dtype})")
    target = (mat1.shape[0], mat2.shape[1])
    if bias.ndim > 2 or not broadcasts_to(tuple(bias.shape), target):
        raise RuntimeError(f"addmm: the input of shape {list(bias.shape)} does not expand to the product's shape "
                           f"{list(target)}; give it shape [{target[1]}] or {list(target)}")
