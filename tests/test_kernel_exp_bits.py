"""sigmoid beside torch 2.13, bit for bit: torch's kernel computes e^-x with SLEEF's exp on its vector lanes and the
C library's on each thread's tail and on strided inputs (microtorch/_kernel_exp.py); float32, one and two threads,
contiguous, transposed and strided inputs, sizes around the vector and thread boundaries."""
import ctypes
import ctypes.util

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch import _kernel_exp, _libm_f32

SHAPES = [(), (1,), (15,), (16,), (17,), (31,), (32,), (33,), (100,), (7, 13), (300, 301), (32768,), (32769,),
          (70001,), (3, 50000)]


@pytest.mark.parametrize("dtype", ["float32"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sigmoid_bits(threads, dtype, shape):
    x = (np.random.default_rng(len(shape) * 1000 + sum(shape)).standard_normal(shape) * 4).astype(dtype)
    views = {"contiguous": lambda t: t}
    if x.ndim == 2:
        views["transposed"] = lambda t: t.t()
    if x.ndim >= 1 and x.size > 1:
        views["strided"] = lambda t: t[..., ::2]
    for name, view in views.items():
        ours, theirs = mt.sigmoid(view(mt.tensor(x))).numpy(), torch.sigmoid(view(torch.tensor(x))).numpy()
        assert ours.tobytes() == theirs.tobytes(), name


def test_the_tail_takes_the_c_librarys_exp(threads):
    # values where SLEEF's and glibc's expf round differently, placed after 32 vector lanes: torch's tail is glibc's
    cand = (np.random.default_rng(0).standard_normal(20000) * 3).astype(np.float32)
    sleef, libm = _kernel_exp.expf(-cand), _libm_f32.expf(-cand)
    differ = cand[(1 / (1 + sleef)).astype(np.float32) != (1 / (1 + libm)).astype(np.float32)][:10]
    assert differ.size == 10
    x = np.concatenate([np.zeros(32, np.float32), differ])
    assert mt.sigmoid(mt.tensor(x)).numpy().tobytes() == torch.sigmoid(torch.tensor(x)).numpy().tobytes()


@pytest.mark.skipif(ctypes.util.find_library("m") is None, reason="no C math library to compare with")
def test_libm_expf_is_the_c_librarys():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    x = np.concatenate([(np.random.default_rng(1).standard_normal(20000) * 30).astype(np.float32),
                        np.array([0, -0.0, 88.72, 88.73, -103.9, -104, np.inf, -np.inf, np.nan, 1e-40], np.float32)])
    theirs = np.array([libm.expf(float(v)) for v in x], np.float32)
    assert _libm_f32.expf(x).tobytes() == theirs.tobytes()


def test_sigmoid_still_differentiates_as_torch():
    x = np.linspace(-6, 6, 50, dtype=np.float32)
    a, b = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mt.sigmoid(a).sum().backward()
    torch.sigmoid(b).sum().backward()
    assert a.grad.numpy().tobytes() == b.grad.numpy().tobytes()
