"""microtorch/_libm_f32.py beside the C library it follows (glibc's expf, expm1f, log1pf, tanhf, erff), value for value over a
wide sweep and the edges of each branch: torch's scalar loops call these on every tail."""
import ctypes
import ctypes.util
import platform

import numpy as np
import pytest

from microtorch import _libm_f32

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or ctypes.util.find_library("m") is None,
                                reason="the port is glibc's: compared with glibc only")


def _sweep():
    rng = np.random.default_rng(0)
    edges = [0, -0.0, 1, -1, 0.5, -0.5, 0.41422, -0.2929, 0.3465736, -0.3465736, 1.0397208, 18.714973, 22, -22,
             88.7, 88.72, 88.7228, 88.73, 89, -89, -18.7, 1e-40, -1e-40, 3e-8, -3e-8, 1e38, 3e38, -1.0000001,
             np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        x = np.concatenate([rng.standard_normal(20000) * s for s in (0.01, 0.3, 1, 3, 10, 40)]
                           + [np.geomspace(1e-40, 100, 5000), -np.geomspace(1e-40, 100, 5000), edges]).astype(np.float32)
    return x


@pytest.mark.parametrize("name", ["expm1f", "log1pf", "tanhf", "erff", "expf"])
def test_bits_as_the_c_library(name):
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fn = getattr(libm, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    x = _sweep()
    if name == "log1pf":  # (its branches lie around -1, -0.29, 0.41 and 2^-29 and above 2^53)
        with np.errstate(over="ignore"):
            x = np.concatenate([x, np.abs(x) - 1, (np.abs(x).astype(np.float64) * 1e10).astype(np.float32)])
    theirs = np.array([fn(float(v)) for v in x], np.float32)
    ours = getattr(_libm_f32, name)(x)
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))
