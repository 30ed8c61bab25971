"""Warnings as torch 2.13 gives them: which calls warn (softmax without dim, l1_loss with another target size,
x.T on a tensor that is not a matrix, torch.cholesky), once where torch warns once, at the user's line; and the
functions torch 1.9 removed (torch.symeig, eig, solve, lstsq, matrix_rank) raising torch's RuntimeError."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# each is run in a fresh process for both libraries (torch warns some of them once per process)
ONCE = ["T.ones(3).T", "T.ones(2, 3, 4).T", "T.ones(()).T", "T.ones(()).T", "T.ones(2, 3).T", "T.ones(()).H",
        "T.ones(()).mT", "T.ones(()).mH", "T.ones(2, 3, 4).mH", "T.cholesky(T.eye(2))", "T.cholesky(T.eye(2))",
        "T.chain_matmul(T.eye(2), T.eye(2))", "T.chain_matmul(T.eye(2), T.eye(2))",
        "T.stft(T.ones(64), 16, return_complex=True)", "T.stft(T.ones(64), 16, return_complex=True)",
        "T.tensor([1., 2]).index_reduce(0, T.tensor([0]), T.tensor([5.]), 'prod')",
        "T.tensor([1., 2]).index_reduce(0, T.tensor([0]), T.tensor([5.]), 'prod')"]
RAISING = ["T.ones(3).H", "T.ones(2, 3, 4).H", "T.ones(3).mT", "T.ones(3).mH"]

_SCRIPT = """
import json, sys, warnings
sys.path.insert(0, {root!r})
import {lib} as T
out = []
for c in {cases!r}:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            eval(c)
            err = None
        except RuntimeError as e:
            err = str(e)
    out.append([[str(w.message).split(" (Triggered internally")[0] for w in ws], err])
print(json.dumps(out))
"""


def _run(lib, cases):
    script = _SCRIPT.format(root=ROOT, lib=lib, cases=cases)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_deprecated_transposes_warn_once_and_refuse_as_torch():
    theirs, mine = _run("torch", ONCE + RAISING), _run("microtorch", ONCE + RAISING)
    for case, t, m in zip(ONCE + RAISING, theirs, mine):
        assert m[1] == t[1], case
        if case.startswith(("T.cholesky", "T.stft", "T.tensor([1., 2]).index_reduce")):  # (torch's advice after the first sentence is not copied)
            assert [w[:50] for w in m[0]] == [w[:50] for w in t[0]], case
        else:
            assert m[0] == t[0], case


IMPLICIT_DIM = {
    "softmax_2d": lambda T: T.nn.functional.softmax(T.arange(6.0).reshape(2, 3)),
    "softmax_3d": lambda T: T.nn.functional.softmax(T.arange(6.0).reshape(1, 2, 3)),
    "log_softmax_1d": lambda T: T.nn.functional.log_softmax(T.arange(3.0)),
    "softmin_2d": lambda T: T.nn.functional.softmin(T.arange(6.0).reshape(2, 3)),
    "module_softmax": lambda T: T.nn.Softmax()(T.arange(6.0).reshape(2, 3)),
    "module_log_softmax": lambda T: T.nn.LogSoftmax()(T.arange(8.0).reshape(2, 2, 2)),
    "l1_target_size": lambda T: T.nn.functional.l1_loss(T.ones(3), T.ones(2, 3)),
    "l1_weighted_target_size": lambda T: T.nn.functional.l1_loss(T.ones(2, 3), T.ones(3), weight=T.ones(2, 3)),
    "mse_target_size": lambda T: T.nn.functional.mse_loss(T.ones(3), T.ones(2, 3)),
    "kl_div_mean": lambda T: T.nn.functional.kl_div(T.ones(2, 3).log(), T.ones(2, 3)),
    "range": lambda T: T.range(0, 3),
    "gumbel_softmax_eps": lambda T: T.nn.functional.gumbel_softmax(T.zeros(2, 3), eps=1e-5) * 0,
    "embedding_bag_argument_order": lambda T: T.nn.functional.embedding_bag(T.ones(4, 3), T.tensor([[0, 1]])),
    "upsample_nearest": lambda T: T.nn.functional.upsample_nearest(T.ones(1, 1, 2, 2), scale_factor=2),
    "affine_grid": lambda T: T.nn.functional.affine_grid(T.eye(2, 3)[None], (1, 1, 2, 2)),
}


def _warned(f, T):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        out = f(T)
    return out, ws


@pytest.mark.parametrize("name", sorted(IMPLICIT_DIM))
def test_warns_as_torch_at_the_users_line(name):
    """The same warning and value as torch; microtorch's points at this file (not at its own wrappers)."""
    theirs, tw = _warned(IMPLICIT_DIM[name], torch)
    mine, mw = _warned(IMPLICIT_DIM[name], mt)
    assert [(w.category, str(w.message).split("(")[0][:40]) for w in mw] == \
        [(w.category, str(w.message).split("(")[0][:40]) for w in tw]
    assert mw and all(w.filename == __file__ for w in mw), [w.filename for w in mw]
    np.testing.assert_allclose(np.asarray(mine.detach()), theirs.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["symeig", "eig", "solve", "lstsq", "matrix_rank"])
def test_functions_torch_removed_raise_its_error(name):
    args = (2,) if name in ("symeig", "eig", "matrix_rank") else (2, 2)
    errors = []
    for T in (torch, mt):
        with pytest.raises(RuntimeError) as e:
            getattr(T, name)(*(T.eye(n, dtype=T.float64) for n in args))
        errors.append(str(e.value))
        if name != "matrix_rank":
            with pytest.raises(RuntimeError):
                getattr(T.eye(2, dtype=T.float64), name)(*(T.eye(2, dtype=T.float64) for _ in args[1:]))
    first = "This function was deprecated since version 1.9 and is now removed."
    assert errors[0].startswith(first) and first in errors[1]
    replacement = {"symeig": "linalg.eigh", "eig": "linalg.eig", "solve": "linalg.solve", "lstsq": "linalg.lstsq",
                   "matrix_rank": "linalg.matrix_rank"}[name]
    assert replacement in errors[0] and replacement in errors[1]
