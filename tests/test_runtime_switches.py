"""The switches torch code sets at its start (threads, deterministic algorithms, float32 matmul precision, cuDNN,
torch.compile), beside torch: they keep what is set, refuse what torch refuses, and compute nothing differently."""
import os
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt


@pytest.fixture(autouse=True)
def restore_switches():
    from microtorch.ops._range_kernels import SET_THREADS
    saved = [(T, T.get_float32_matmul_precision(), T.are_deterministic_algorithms_enabled(),
              T.is_deterministic_algorithms_warn_only_enabled()) for T in (torch, mt)]
    threads, set_here = torch.get_num_threads(), SET_THREADS[0]
    yield
    for T, precision, mode, warn_only in saved:
        T.set_float32_matmul_precision(precision)
        T.use_deterministic_algorithms(mode, warn_only=warn_only)
    torch.set_num_threads(threads)
    SET_THREADS[0] = set_here  # (unset again: the default follows OMP_NUM_THREADS, as torch's)


def outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returns", fn())
        except Exception as e:
            result = ("raises", type(e).__name__)
    return result, [w.category.__name__ for w in caught if w.category is not DeprecationWarning]  # (torch.jit's own)


@pytest.mark.parametrize("call", [
    lambda T: T.set_num_threads(0), lambda T: T.set_num_threads(1.5), lambda T: T.set_num_threads("2"),
    lambda T: T.set_num_threads(10 ** 13), lambda T: T.set_num_interop_threads(0), lambda T: T.compile(2.5),
    lambda T: (T.set_num_threads(1), T.get_num_threads())[1], lambda T: (T.set_num_threads(3), T.get_num_threads())[1],
    lambda T: T.use_deterministic_algorithms("yes"),
    lambda T: (T.use_deterministic_algorithms(True), T.are_deterministic_algorithms_enabled(),
               T.is_deterministic_algorithms_warn_only_enabled()),
    lambda T: (T.use_deterministic_algorithms(True, warn_only=True), T.is_deterministic_algorithms_warn_only_enabled()),
    lambda T: T.get_float32_matmul_precision(), lambda T: T.set_float32_matmul_precision(3),
    lambda T: (T.set_float32_matmul_precision("high"), T.get_float32_matmul_precision()),
    lambda T: (T.set_float32_matmul_precision("low"), T.get_float32_matmul_precision()),
    lambda T: (T.backends.cudnn.deterministic, T.backends.cudnn.benchmark, T.backends.cudnn.enabled,
               T.backends.cudnn.is_available(), T.backends.cudnn.version(), T.backends.cudnn.allow_tf32),
    lambda T: (T.backends.cuda.matmul.allow_tf32, T.backends.cuda.is_built()),
    lambda T: (T.version.cuda, T.version.hip, T.xpu.is_available(), T.xpu.device_count(),
               T.cuda.is_bf16_supported()),
])
def test_switch_like_torch(call):
    assert outcome(lambda: call(mt)) == outcome(lambda: call(torch))


def test_default_thread_count_is_torchs(monkeypatch):
    """As torch's default in a fresh process without OMP_NUM_THREADS (here other tests may have set torch's)."""
    from microtorch.ops import _range_kernels as _rk
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(_rk, "SET_THREADS", [None])
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    fresh = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], check=True,
                           capture_output=True, text=True, env=env).stdout
    assert mt.get_num_threads() == int(fresh)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert mt.get_num_threads() == 3 and mt.get_num_interop_threads() >= 1


def test_the_usual_seed_function_runs_and_seeds():
    def seed_everything(T, seed):
        random.seed(seed)
        np.random.seed(seed)
        T.manual_seed(seed)
        T.cuda.manual_seed_all(seed)
        T.backends.cudnn.deterministic = True
        T.backends.cudnn.benchmark = False
        T.use_deterministic_algorithms(True)
        return T.randn(3).numpy().tobytes()
    assert seed_everything(mt, 7) == seed_everything(torch, 7)
    assert mt.backends.cudnn.deterministic is True and mt.backends.cudnn.benchmark is False
    mt.backends.cudnn.deterministic = False
    torch.backends.cudnn.deterministic = False


def test_compile_wraps_a_module_as_torch_does():
    for T in (torch, mt):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 1))
        compiled = T.compile(model)
        assert type(compiled).__name__ == "OptimizedModule" and isinstance(compiled, T.nn.Module)
        assert compiled._orig_mod is model and T.compile(model[0]).weight is model[0].weight
        assert list(compiled.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias", "_orig_mod.2.weight",
                                               "_orig_mod.2.bias"]
        assert [p is q for p, q in zip(compiled.parameters(), model.parameters())] == [True] * 4
        x = T.ones(2, 3)
        assert compiled(x).detach().numpy().tobytes() == model(x).detach().numpy().tobytes()
    assert repr(mt.compile(mt.nn.Linear(2, 2))).startswith("OptimizedModule(\n  (_orig_mod): Linear(")


def test_compile_a_function_plain_and_as_decorators():
    def double(x):
        return x * 2

    for T in (torch, mt):
        compiled = T.compile(double)
        assert compiled.__name__ == "double" and compiled(T.ones(2)).tolist() == [2.0, 2.0]

        @T.compile
        def triple(x):
            return x * 3

        @T.compile(mode="reduce-overhead", fullgraph=True)
        def square(x):
            return x * x
        assert triple(T.ones(1)).tolist() == [3.0] and square(T.full((1,), 3.0)).tolist() == [9.0]
    with pytest.raises(AssertionError, match="callable"):
        mt.compile(3)
