"""The mean and variance of each row as torch's CPU layer_norm takes them (ATen's RowwiseMoments, moments_utils.h),
bit for bit, for float32 and float64.

torch runs Welford's updates in the lanes of a 32-byte vector (4 doubles or 8 floats; its AVX2 kernels, on AVX-512
machines too): each lane walks every 4th (8th) element of the row in chunks of 16 vectors, whose results are merged
in a binary cascade. The elements left after the last whole vector are a scalar Welford run, and the lanes are merged
into it one by one last. Which products are fused into one rounding is the compiled code's: the lane updates and one
product of the vector merge are explicit multiply-adds, the scalar merge is contracted by the compiler, the scalar run
is not (measured against torch 2.13 on 800 rows of each dtype)."""
import numpy as np

from ._vec_reduce import fused

_CHUNK = 16        # vectors per chunk (kChunkSize)
_VECTOR_BYTES = 32


def applies(x):
    return x.dtype in (np.float32, np.float64) and x.size > 0


def rowwise_moments(x):
    """(mean, biased variance) of each row of the 2-d array x (C order), as 1-d arrays of x's dtype."""
    with np.errstate(all="ignore"):  # (a row with an infinity or NaN gives NaN, as torch's)
        return _moments(x)


def _moments(x):
    rows, width = x.shape
    lanes = _VECTOR_BYTES // x.itemsize
    vectors = width // lanes
    merged = _cascade(_chunks(x[:, :vectors * lanes].reshape(rows, vectors, lanes)), x.dtype, (rows, lanes))
    count, mean, m2 = _scalar_run(x[:, vectors * lanes:])
    for lane in range(lanes):  # (each lane holds `vectors` elements)
        count, mean, m2 = _add_scalar(vectors, merged[1][:, lane], merged[2][:, lane], count, mean, m2)
    return mean, m2 / x.dtype.type(width)


def _chunks(v):
    """(count, lane means, lane m2) of each chunk of 16 vectors (the last one shorter), the whole chunks at once."""
    rows, vectors, lanes = v.shape
    whole = vectors // _CHUNK
    out = []
    if whole:
        means, m2s = _lane_welford(v[:, :whole * _CHUNK].reshape(rows, whole, _CHUNK, lanes))
        out += [(_CHUNK, means[:, k], m2s[:, k]) for k in range(whole)]
    if vectors % _CHUNK:
        means, m2s = _lane_welford(v[:, whole * _CHUNK:])
        out.append((vectors % _CHUNK, means, m2s))
    return out


def _lane_welford(v):
    """Welford's updates down axis -2 of v, every lane apart: mean += delta / j and m2 += delta * (x - mean), the
    factor 1/j rounded first, each update one multiply-add (UpdateMomentsVec)."""
    dt = v.dtype
    mean = np.zeros(v.shape[:-2] + v.shape[-1:], dt)
    m2 = np.zeros_like(mean)
    for j in range(v.shape[-2]):
        x = v[..., j, :]
        delta = x - mean
        mean = fused(dt.type(1) / dt.type(j + 1), delta, mean).astype(dt, copy=False)
        m2 = fused(delta, x - mean, m2).astype(dt, copy=False)
    return mean, m2


def _cascade(chunks, dtype, shape):
    """The chunks merged as torch's stack merges them: chunk i into level 0, then up while i + 1 has trailing zero
    bits (a binary counter), and the levels folded into level 0 at the end."""
    zero = (0, np.zeros(shape, dtype), np.zeros(shape, dtype))
    depth = 1 if len(chunks) <= 2 else (len(chunks) - 1).bit_length()
    stack = [zero] * depth
    for i, chunk in enumerate(chunks):
        stack[0] = _add_vector(*chunk, *stack[0])
        mask, level = i + 1, 1
        while level < depth and mask & 1 == 0:
            stack[level], stack[level - 1] = _add_vector(*stack[level - 1], *stack[level]), zero
            mask, level = mask >> 1, level + 1
    for level in range(1, depth):
        stack[0] = _add_vector(*stack[level], *stack[0])
    return stack[0]


def _add_vector(count_add, mean_add, m2_add, count, mean, m2):
    """AddMomentsVec: c = count_add / n; mean + c*delta (rounded twice); m2 = fma(delta*count, c*delta, m2 + m2_add)."""
    dt = mean.dtype.type
    n = count + count_add
    c = dt(0) if n == 0 else dt(count_add) / dt(n)
    delta = mean_add - mean
    c_delta = c * delta
    return n, mean + c_delta, fused(delta * dt(count), c_delta, m2 + m2_add).astype(mean.dtype, copy=False)


def _add_scalar(count_add, mean_add, m2_add, count, mean, m2):
    """AddMoments as compiled: mean = fma(c, delta, mean), m2 = m2 + fma(delta*delta*c, count, m2_add)."""
    dt = mean.dtype.type
    n = count + count_add
    c = dt(0) if n == 0 else dt(count_add) / dt(n)
    delta = mean_add - mean
    mean = fused(c, delta, mean).astype(mean.dtype, copy=False)
    return n, mean, m2 + fused(delta * delta * c, dt(count), m2_add).astype(mean.dtype, copy=False)


def _scalar_run(tail):
    """The plain Welford run over the elements after the last whole vector (no fused step)."""
    dt = tail.dtype.type
    mean = np.zeros(tail.shape[0], tail.dtype)
    m2 = np.zeros_like(mean)
    for j in range(tail.shape[1]):
        x = tail[:, j]
        delta = x - mean
        mean = mean + delta / dt(j + 1)
        m2 = m2 + delta * (x - mean)
    return tail.shape[1], mean, m2
