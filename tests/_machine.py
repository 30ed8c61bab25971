"""What a bit-for-bit test may assume of the machine it runs on.

torch's float64 exp, log and pow come from MKL's vector math, and its float32 matrix products from MKL's GEMM;
microtorch computes them with numpy: its own SIMD exp and log on a CPU with AVX-512, the C library's elsewhere, and
OpenBLAS's products. On the machines where the project's bit-for-bit tests were first written, these gave torch's
bits for the values those tests use. On an AMD EPYC with AVX-512 they do not: numpy's float64 exp is off by up to
0.68 ulp there (MKL's by 0.52), so 4-5% of exps differ in the last bit, and MKL's float32 products add in an order
of their own.

A test of a formula's bits asks `libm_agrees()` or `gemm_agrees()`: where the machine's primitives agree, it
compares bit for bit; where they do not, within a few ulp (a wrong formula is off by far more than that).
"""
import functools

import numpy as np
import torch


@functools.lru_cache(maxsize=None)
def libm_agrees():
    """torch's float64 exp, log and x ** 1.5 give numpy's bits on 20,000 values here."""
    x = np.random.default_rng(0).standard_normal(20000) * 5
    t = torch.tensor(x)
    return (np.array_equal(torch.exp(t).numpy(), np.exp(x))
            and np.array_equal(torch.log(t.abs()).numpy(), np.log(np.abs(x)))
            and np.array_equal((t.abs() ** 1.5).numpy(), np.abs(x) ** 1.5))


@functools.lru_cache(maxsize=None)
def gemm_agrees():
    """torch's float32 matrix products give numpy's bits on a few small shapes here."""
    r = np.random.default_rng(1)
    for m, k, n in ((32, 10, 20), (32, 20, 4), (64, 31, 33), (8, 8, 8)):
        a, b = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32)
        if (torch.from_numpy(a) @ torch.from_numpy(b)).numpy().tobytes() != (a @ b).tobytes():
            return False
    return True


@functools.lru_cache(maxsize=None)
def gemv_in_order():
    """torch's mv of a matrix laid out column by column (MKL's gemv 'n') adds each element's products in order, as
    microtorch's does (ops/linalg.py, _mv_in_order), on a few shapes here."""
    r = np.random.default_rng(2)
    for n, k in ((3, 7), (16, 16), (64, 33)):
        a, v = r.standard_normal((k, n)).T, r.standard_normal(k)
        products = a * v
        products[:, 0] += 0.0
        if torch.mv(torch.from_numpy(a), torch.from_numpy(v)).numpy().tobytes() != \
                np.ascontiguousarray(np.add.accumulate(products, axis=1)[:, -1]).tobytes():
            return False
    return True


def within_ulps(a, b, ulps, cancelling=False):
    """Same shape and dtype, NaN and infinities in the same places, finite values at most `ulps` units in the last
    place of the larger one apart. cancelling: values that are sums of terms cancelling to near 0 (a second
    derivative's), whose ulps are measured at the size of the terms instead: the array's largest value, or 1 (the
    size of the tests' inputs) if larger."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite & ~nan], b[~finite & ~nan]):
        return False
    a, b = a[finite], b[finite]
    size = np.maximum(np.abs(a), np.abs(b))
    if cancelling and size.size:
        size = np.full_like(size, max(size.max(), 1.0))
    return bool(np.all(np.abs(a - b) <= ulps * np.spacing(size)))
