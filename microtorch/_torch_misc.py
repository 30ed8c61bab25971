"""The smaller functions of torch's namespace that microtorch lacked: shape helpers (broadcast_shapes,
tensordot, block_diag, cartesian_prod, combinations), numerical integration and differences (trapezoid,
cumulative_trapezoid, gradient), std_mean/var_mean and norms, complex numbers from parts, finfo/iinfo and
casting rules, the low-rank decompositions, segment_reduce, and torch.abs_(x)-style in-place functions. Each
is composed of existing differentiable ops, so its gradients are theirs, but block_diag, one op of its own as
torch's (the creation functions and samplers are in _torch_creation.py)."""
import builtins
import inspect
import itertools

import numpy as np

from ._dtype import cast, get_default_dtype
from ._tensor import Size, Tensor, tensor
from .ops._op import Op
from .ops.complex_parts import Complex, Polar
from .ops.elementwise import rsub  # noqa: F401 (torch.rsub: the op itself, with its RsubBackward nodes)
from .ops.reduce import std_mean, var_mean  # noqa: F401 (one node of two outputs each, beside var and std)
from ._user_line import warn_once


# ---- shapes ---------------------------------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """the shape tensors of these shapes broadcast to (torch's rules: sizes equal or 1, aligned from the right)"""
    for s in shapes:
        if isinstance(s, str):
            raise TypeError(f"broadcast_shapes(): '<' not supported between instances of 'str' and 'int' (got {s!r})")
        if not (s is None or isinstance(s, (int, np.integer)) or isinstance(s, (list, tuple, Size)) and all(
                isinstance(n, (int, np.integer)) for n in s)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    shapes = [() if s is None else (s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: {shapes}; sizes must "
                           "be equal or 1 when aligned from the right") from None


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(*shape) for t in tensors)  # (torch: a tensor of the shape itself)


def tensordot(a, b, dims=2):
    """sum over a's last dims and b's first (dims=k), or over the listed pairs of dims"""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
    da, db = [d % a.ndim for d in da], [d % b.ndim for d in db]
    if len(da) != len(db) or any(a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise RuntimeError(f"tensordot: contracted dimensions need to match, but first has sizes "
                           f"{[a.shape[i] for i in da]} and second has sizes {[b.shape[j] for j in db]}")
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    left = a.permute(keep_a + da).reshape(-1, k)  # (tuples of dims and sizes: a 0-d one is ())
    right = b.permute(db + keep_b).reshape(k, -1)
    return (left @ right).reshape(tuple(a.shape[d] for d in keep_a) + tuple(b.shape[d] for d in keep_b))


def _block(shape):
    """the rows and columns a block_diag input takes: a 0-d tensor is 1x1, a 1-d one a row"""
    return (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape


class BlockDiag(Op):
    """The tensors along the diagonal of one matrix, zeros elsewhere (torch's one BlockDiagBackward0 node, an edge
    to each input); each gradient is its block of the incoming one. As torch's node, an empty 1-d input takes a row
    in forward but none in backward: the blocks after it read the gradient one row higher up. `lead` leading dims
    of every input are a batch (vmap's), each example's blocks along its own diagonal."""
    _grad_fn_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *mats, dtype, lead=0):
        ctx.shapes, ctx.dtype, ctx.lead = [m.shape for m in mats], dtype, lead
        batch = mats[0].shape[:lead]
        blocks = [_block(m.shape[lead:]) for m in mats]
        out = np.zeros(batch + (sum(h for h, _ in blocks), sum(w for _, w in blocks)), dtype)
        r = c = 0
        for m, (h, w) in zip(mats, blocks):
            out[..., r:r + h, c:c + w] = cast(m, dtype).reshape(batch + (h, w))
            r, c = r + h, c + w
        return out

    @staticmethod
    def backward(ctx, grad):
        grads, r, c = [], 0, 0
        for shape, need in zip(ctx.shapes, ctx.needs_input_grad):
            if shape[ctx.lead:] == (0,):  # (torch's empty gradient, and no row taken)
                grads.append(grad.new_zeros(shape) if need else None)
                continue
            h, w = _block(shape[ctx.lead:])
            grads.append(grad[..., r:r + h, c:c + w].reshape(shape) if need else None)
            r, c = r + h, c + w
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *tangents):
        return BlockDiag.apply(*(Tensor._make(np.zeros(s, ctx.dtype)) if t is None else t
                                 for t, s in zip(tangents, ctx.shapes)), dtype=ctx.dtype, lead=ctx.lead)


def block_diag(*tensors):
    """the tensors (0-d, 1-d as a row, or 2-d) along the diagonal of one matrix, zeros elsewhere"""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return Tensor._make(np.zeros((1, 0), get_default_dtype().np))
    from ._dtype import result_type
    return BlockDiag.apply(*tensors, dtype=result_type(*tensors).np)


def cartesian_prod(*tensors):
    """every combination of one element from each 1-d tensor, as rows"""
    from .ops import stack
    if not tensors:
        raise RuntimeError("cartesian_prod(): expects a non-empty TensorList")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid_ij(tensors)
    return stack([g.reshape(-1) for g in grids], 1)


def meshgrid_ij(tensors):
    from ._creation import meshgrid
    return meshgrid(*tensors, indexing="ij")


def combinations(input, r=2, with_replacement=False):
    """the r-element combinations of a 1-d tensor's elements, as rows (itertools' order)"""
    from .ops import stack
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if r == 0 or idx.shape[0] == 0:
        return input.new_zeros((0,) if r == 0 else (0, r))
    return stack([input[Tensor._make(idx[:, k])] for k in range(r)], 1)


def vander(x, N=None, increasing=False):
    """columns x^0 .. x^(N-1) (or the reverse), built as a running product"""
    from .ops import cat, flip
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n == 0:
        return x.new_zeros((x.shape[0], 0))
    cols = cat([x.new_ones((x.shape[0], 1)), x.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1)
    return cols if increasing else flip(cols, (1,))


# ---- integration and differences --------------------------------------------------------------------------
def _pairs(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)


def _spacing(x, y, dim):
    """the widths between samples: x's differences along dim (x 1-d, or shaped like y)"""
    if x.ndim == 1:
        d = x[1:] - x[:-1]
        shape = [1] * y.ndim
        shape[dim] = d.shape[0]
        return d.reshape(shape)
    hi, lo = _pairs(x, dim)
    return hi - lo


def _integration_dim(y, x, dim, op):
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions ({op})")
    if not -y.ndim <= dim < y.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-y.ndim}, {y.ndim - 1}], but got "
                         f"{dim}) ({op})")
    if y.dtype.name == "bool":
        raise RuntimeError(f"trapezoid: received a bool input for `y`, but bool is not supported ({op})")
    dim %= y.ndim
    if x is not None and (x.shape[-1 if x.ndim == 1 else dim] if x.ndim else 0) != y.shape[dim]:
        raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
    return dim


class _NoX:
    """x not given (torch's overloads take samples x, or keywords dx and dim: an explicit None fits neither)"""


def _given_x(x, op):
    if x is None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, NoneType): pass the "
                        "sample points x as a tensor, or the spacing as dx=")
    if x is _NoX:
        return None
    return x


def trapezoid(y, x=_NoX, *, dx=None, dim=-1):
    """the trapezoid rule along dim: sum of (y_i + y_(i+1)) / 2 times the widths"""
    x = _given_x(x, "trapezoid")
    dim = _integration_dim(y, x, dim, "trapezoid")
    if y.shape[dim] == 0:
        return y.sum(dim)
    if x is not None:
        hi, lo = _pairs(y, dim)
        return (_spacing(x, y, dim) * (hi + lo) / 2).sum(dim)
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * (1 if dx is None else dx)


def trapz(y, x=_NoX, *, dx=None, dim=-1):
    _given_x(x, "trapz")
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=_NoX, *, dx=None, dim=-1):
    x = _given_x(x, "cumulative_trapezoid")
    dim = _integration_dim(y, x, dim, "cumulative_trapezoid")
    hi, lo = _pairs(y, dim)
    width = _spacing(x, y, dim) if x is not None else (1 if dx is None else dx)
    return (width * (hi + lo) / 2).cumsum(dim)


def _one_gradient(f, h, dim, edge_order):
    """central differences inside, one-sided ones (first or second order) at both ends"""
    from .ops import cat
    n = f.shape[dim]
    if n < edge_order + 1:
        raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1 "
                           f"({edge_order + 1}), got {n} along dim {dim}")
    part = lambda a, b: f.narrow(dim, a, b)  # noqa: E731
    inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first, last = (part(1, 1) - part(0, 1)) / h, (part(n - 1, 1) - part(n - 2, 1)) / h
    else:
        first = (part(0, 1) * -3 + part(1, 1) * 4 - part(2, 1)) / (2 * h)
        last = (part(n - 1, 1) * 3 - part(n - 2, 1) * 4 + part(n - 3, 1)) / (2 * h)
    return cat([first, inner, last], dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """the derivative estimated along each dim (numpy's rule) for evenly spaced samples, one tensor per dim"""
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -input.ndim <= d < max(input.ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                             f"but got {d}) (gradient)")
    dims = [d % input.ndim for d in dims]
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"{len(dims)}, but got a list of length {len(steps)}")
    if any(isinstance(h, Tensor) and h.ndim > 0 for h in steps):
        raise NotImplementedError("torch.gradient with coordinate tensors as spacing is not implemented in "
                                  "microtorch; pass the (uniform) step sizes as numbers")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    if input.dtype.name == "bool":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported (gradient). Use "
                           "the `^` or `logical_xor()` operator instead, or convert with .float().")
    f = input if input.is_floating_point() or input.is_complex() else input.to(get_default_dtype())
    return tuple(_one_gradient(f, float(h), d, edge_order) for h, d in zip(steps, dims))


# ---- statistics and norms -------------------------------------------------------------------------------------
def frobenius_norm(input, dim, keepdim=False):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {input.dtype} "
                           "instead.")
    return input.norm(2, dim=dim, keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """the sum of the singular values of the matrices in dims (the last two by default)"""
    from .ops.decomposition import svd
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype}")
    pair = (dim, dim) if isinstance(dim, (int, np.integer)) else dim if dim is not None else (-2, -1)
    for x in pair:
        if not -input.ndim <= x < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                             f"but got {x}) (nuclear_norm)")
    d = [x % input.ndim for x in pair]
    if len(d) != 2 or d[0] == d[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got {tuple(pair)}")
    rest = [x for x in range(input.ndim) if x not in d]
    out = svd(input.permute(*rest, *d)).S.sum(-1)
    for x in sorted(d) if keepdim else ():
        out = out.unsqueeze(x)
    return out


def chain_matmul(*matrices):
    """the product of the matrices, left to right (deprecated in torch: linalg.multi_dot)"""
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
              "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        raise TypeError("chain_matmul(): expected Tensor as element 0 in argument 0, but got list; pass the "
                        "matrices as separate arguments (or use linalg.multi_dot for a list)")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for k, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensor as element {k} in argument 0, but got "
                            f"{type(m).__name__}")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead. (chain_matmul)")
    result = matrices[0]
    for m in matrices[1:]:
        result = result.mm(m)
    return result


# ---- complex numbers from parts -------------------------------------------------------------------------------
def complex(real, imag):
    """real + i imag (both floating, of one dtype)"""
    if real.dtype != imag.dtype or not real.is_floating_point():
        raise RuntimeError(f"complex(): expected both inputs to be Half, Float or Double tensors of one dtype, but "
                           f"got {real.dtype} and {imag.dtype}")
    return Complex.apply(real, imag)


def polar(abs, angle):
    """abs (cos angle + i sin angle)"""
    if abs.dtype != angle.dtype or not abs.is_floating_point():
        raise RuntimeError(f"polar(): Expected both inputs to be Half, Float or Double tensors but got {abs.dtype} "
                           f"and {angle.dtype}")
    if abs._data.dtype.itemsize < 4:  # (torch has no half kernel: its type check passes, its kernel does not)
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half' (polar takes float32 or float64 parts)")
    return Polar.apply(abs, angle)


def view_as_real(input):
    """(..., 2): the real and imaginary parts side by side, a view of input (ops/elementwise.py)"""
    from .ops.elementwise import view_as_real as view
    return view(input)


def view_as_complex(input):
    """(..., 2) real pairs as complex numbers, a view of input (ops/elementwise.py)"""
    from .ops.elementwise import view_as_complex as view
    return view(input)


# ---- dtypes ----------------------------------------------------------------------------------------------------
class finfo:
    """Machine limits of a floating dtype (torch.finfo): bits, eps, max, min, tiny, resolution."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.finfo'>)

    def __init__(self, type=None):
        dt = type if type is not None else get_default_dtype()
        if not (dt.is_floating_point or dt.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{dt}'")
        info = np.finfo(dt.np)
        self.bits, self.eps, self.max, self.min = info.bits, float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -info.precision
        self.dtype = str(np.dtype(info.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo): bits, max, min."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.iinfo'>)

    def __init__(self, type):
        if type.np == np.bool_:
            raise TypeError(f"{type} is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), str(info.dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # (as torch prints them: %g)


def _category(dt):
    return 3 if dt.is_complex else 2 if dt.is_floating_point else 0 if dt.np == np.bool_ else 1


def can_cast(from_, to):
    """torch's casting rule: a cast may not go to a lower category (bool < integer < floating < complex)"""
    return _category(to) >= _category(from_)


def typename(obj):
    """'torch.FloatTensor'-style names for tensors (microtorch.FloatTensor here), module.Class for the rest"""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__qualname__ if cls.__module__ in ("builtins", "__builtin__") else f"{cls.__module__}.{cls.__qualname__}"


# ---- sets, indices, histograms, fills -----------------------------------------------------------------------
def unravel_index(indices, shape):
    """the coordinates, one tensor per dim of shape, of flat indices into a tensor of that shape"""
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    total = int(np.prod(shape, dtype=np.int64))
    if idx.size and (idx.min() < -total or idx.max() >= total):
        raise RuntimeError(f"'indices' must be in range [{-total}, {total - 1}] for shape {list(shape)}")
    return tuple(Tensor._make(np.asarray(c, np.int64)) for c in np.unravel_index(idx % max(total, 1), shape))


def isin(elements=None, test_elements=None, *, assume_unique=False, invert=False, element=None, test_element=None):
    """True where an element is among test_elements (False there if invert); torch names a number operand
    element= or test_element="""
    elements = element if elements is None else elements
    test_elements = test_element if test_elements is None else test_elements
    if elements is None or test_elements is None:
        raise TypeError("isin() missing an argument: pass elements (or element=) and test_elements (or test_element=)")
    if not (isinstance(elements, Tensor) or isinstance(test_elements, Tensor)):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}): one of elements and test_elements must be a Tensor")
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and (t.dtype.name == "bool" or t.is_complex()):
            raise RuntimeError(f"Unsupported input type encountered for isin(): {t.dtype}")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor._make(np.isin(a, b, assume_unique=assume_unique, invert=invert))


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the rows of input (N, D) as points in D dims (numpy's histogramdd)"""
    from .ops.reduce import return_type
    if not (isinstance(bins, (int, np.integer)) or isinstance(bins, (list, tuple))):
        raise TypeError(f"histogramdd() received an invalid combination of arguments - got bins of type "
                        f"{type(bins).__name__}: pass an int, a list of ints, or a list of tensors of bin edges")
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions (histogramdd)")
    counts = bins if isinstance(bins, (list, tuple)) else [bins]
    if any(isinstance(b_, (int, np.integer)) and b_ < 0 for b_ in counts):
        raise RuntimeError(f"histogramdd(): number of steps must be non-negative (bins={bins})")
    pts = input._data.reshape(-1, input.shape[-1])
    if range is None and pts.size and not np.isfinite(pts).all():
        raise RuntimeError("torch.histogramdd: the range of the points is not finite (they hold inf or nan); pass "
                           "range= or remove them")
    ranges = None if range is None else [(range[2 * k], range[2 * k + 1]) for k in builtins.range(pts.shape[1])]
    b = [t._data for t in bins] if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor) \
        else bins
    hist, edges = np.histogramdd(pts, bins=b, range=ranges, density=density,
                                 weights=None if weight is None else weight._data.reshape(-1))
    dt = input._data.dtype
    return return_type("histogramdd", ("hist", "bin_edges"))(
        Tensor._make(hist.astype(dt)), [Tensor._make(e.astype(dt)) for e in edges])



def fill(input, value):
    """a new tensor of input's shape holding value (differentiable in a tensor value)"""
    from .ops import where
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    v = value if isinstance(value, Tensor) else tensor(value, dtype=input.dtype)
    return where(Tensor._make(np.ones(input._data.shape, bool)), v.to(input.dtype), input)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """rows of the table that indices name, scaled in place to a norm of at most max_norm"""
    rows = np.unique(indices._data.reshape(-1))
    w = input._data
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    big = norms > max_norm
    w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None]
    input._version_counter[0] += 1
    return input


def set_anomaly_enabled(enabled, check_nan=True):
    from .autograd.anomaly_mode import set_detect_anomaly
    set_detect_anomaly(enabled, check_nan)


# torch.f(x, ...) for Tensor methods: in-place forms and predicates
TENSOR_METHODS = ["abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
                  "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_",
                  "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_",
                  "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_",
                  "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
                  "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
                  "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "is_conj", "is_neg", "is_nonzero", "is_same_size",
                  "is_signed", "is_inference", "resolve_conj", "resolve_neg", "split_with_sizes", "resize_as_"]


def method_as_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, ...) is input.{name}(...)"
    out_of_place = getattr(Tensor, name[:-1], None) if name.endswith("_") else None
    if out_of_place is not None and _takes_only_input(out_of_place):
        fn.__wrapped__ = out_of_place  # (the argument checks read its parameters: ceil_(x, 0) is a TypeError first)
    return fn


def _takes_only_input(fn):
    """fn's only positional parameter is `input` (ceil, round with decimals= ...)"""
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD] == ["input"]


FUNCTIONS = ["broadcast_shapes", "broadcast_tensors", "tensordot", "block_diag", "cartesian_prod", "combinations",
             "vander", "trapezoid", "trapz", "cumulative_trapezoid", "gradient", "std_mean", "var_mean",
             "frobenius_norm", "nuclear_norm", "chain_matmul", "complex", "polar", "view_as_real",
             "view_as_complex", "finfo", "iinfo", "can_cast", "typename", "unravel_index", "isin", "histogramdd", "fill", "rsub", "embedding_renorm_", "set_anomaly_enabled", "svd_lowrank", "pca_lowrank",
             "segment_reduce"]


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of the q largest singular values of A - M (exact here: torch approximates them by random
    projections, whose error the exact decomposition does not have)"""
    from .ops.decomposition import svd
    a = A if M is None else A - M
    q = 6 if q is None else q
    if not isinstance(q, (int, np.integer)):
        raise TypeError(f"svd_lowrank(): argument 'q' must be int or None, not {type(q).__name__}")
    if a.ndim < 2:
        raise ValueError(f"svd_lowrank: expected a matrix (or a batch of them), got {a.ndim} dimensions")
    if q < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {q}: {[a.shape[-2], q]} (svd_lowrank)")
    if not (a.is_floating_point() or a.is_complex()):
        raise RuntimeError(f"svd_lowrank: expected m1 and m2 to have the same dtype, but got: {a.dtype} != float; "
                           "convert A with .float()")
    k = min(q, *a.shape[-2:])
    u, s, v = svd(a)
    return u[..., :k], s[..., :k], v[..., :k]


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A's rows (centred by their mean unless center=False)"""
    if A.ndim < 2:
        raise ValueError(f"pca_lowrank: expected a matrix (or a batch of them), got {A.ndim} dimensions")
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, (int, np.integer)) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, q, niter)


_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf, "mean": np.nan}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """data's consecutive segments along axis (given by lengths or offsets) each reduced to one slice"""
    from .ops import stack
    if reduce not in _IDENTITY:
        raise RuntimeError(f"segment_reduce: reduce must be one of {list(_IDENTITY)}, got {reduce}")
    if indices is not None or (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce: give exactly one of lengths or offsets (indices are not supported)")
    axis = axis % data.ndim
    lens = np.diff(offsets._data, axis=-1) if offsets is not None else lengths._data
    if lens.ndim != 1:
        raise NotImplementedError("segment_reduce with multi-dimensional lengths or offsets is not implemented in "
                                  "microtorch; reduce each row of segments separately")
    if not unsafe and lens.sum() != data.shape[axis]:
        raise RuntimeError(f"segment_reduce: the segments cover {int(lens.sum())} entries along axis {axis}, but "
                           f"data has {data.shape[axis]}")
    empty_shape = tuple(data.shape[:axis]) + tuple(data.shape[axis + 1:])
    parts, start = [], 0
    for n in lens.tolist():
        if n == 0:
            fill = _IDENTITY[reduce] if initial is None else initial
            parts.append(Tensor._make(np.full(empty_shape, fill, data._data.dtype)))
            continue
        seg = data.narrow(axis, start, n)
        value = {"sum": seg.sum, "mean": seg.mean, "prod": seg.prod, "max": seg.amax, "min": seg.amin}[reduce](axis)
        parts.append(value if initial is None else _with_initial(value, reduce, initial, n))
        start += n
    return stack(parts, axis)


def _with_initial(value, reduce, initial, n):
    """the reduction with `initial` as one more value (torch's mean adds it to the sum, still dividing by n)"""
    from .ops import maximum, minimum
    init = tensor(initial, dtype=value.dtype)
    return {"sum": lambda: value + init, "prod": lambda: value * init, "max": lambda: maximum(value, init),
            "min": lambda: minimum(value, init), "mean": lambda: value + init / n}[reduce]()
