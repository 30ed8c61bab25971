"""torch.jit in eager mode beside torch 2.13: the helpers TorchScript-ready code calls behave as torch's eager
ones, a scripted function computes what torch's scripted function computes, and what needs a compiled program
(its graph and code, tracing, scripting a module, TorchScript files) is refused with NotImplementedError."""
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def gelu_like(x, y: float):
    if x.sum() > 0:  # (control flow, which script keeps)
        return 0.5 * x * (1.0 + (x * y).tanh())
    return x - y


def _helpers(lib):
    def f(x):
        return x * 2

    def g(x):
        return x

    fut = lib.jit.fork(f, lib.ones(2))
    return (lib.jit.is_scripting(), lib.jit.is_tracing(), lib.jit.annotate(list, [1]), lib.jit.ignore(f) is f,
            f._torchscript_modifier, lib.jit.unused(g) is g, g._torchscript_modifier,
            lib.jit.export(g)._torchscript_modifier, lib.jit.Final, lib.jit.wait(fut).tolist(), fut.wait().tolist(),
            lib.jit.ignore(drop=True)(f) is f)


def test_eager_helpers_are_torchs():
    assert _helpers(real_torch) == _helpers(microtorch)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_scripted_function_computes_torchs_values_and_gradients(sign):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (torch 2.13 deprecates jit.script)
            scripted = lib.jit.script(gelu_like)
        x = (sign * lib.arange(1.0, 5.0, dtype=lib.float64)).requires_grad_()
        out = scripted(x, 0.5)
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy(), scripted.name, type(scripted).__name__
    want, got = (run(lib) for lib in LIBS)
    np.testing.assert_allclose(want[0], got[0], rtol=1e-15)
    np.testing.assert_allclose(want[1], got[1], rtol=1e-15)
    assert want[2:] == got[2:]


@pytest.mark.parametrize("make", [
    lambda jit: jit.script(gelu_like).code, lambda jit: jit.script(gelu_like).graph,
    lambda jit: jit.script(gelu_like).save("f.pt"), lambda jit: jit.script(microtorch.nn.Linear(2, 2)),
    lambda jit: jit.trace(gelu_like, (microtorch.ones(2), 0.5)), lambda jit: jit.load("model.pt"),
    lambda jit: jit.save(None, "model.pt")])
def test_what_needs_a_compiled_program_is_refused(make):
    with pytest.raises(NotImplementedError, match="no TorchScript compiler"):
        make(microtorch.jit)


def test_import_forms():
    import microtorch.jit as jit
    from microtorch.jit import script
    assert jit is microtorch.jit and script is microtorch.jit.script


@pytest.mark.parametrize("call", [lambda jit: jit.script(gelu_like), lambda jit: jit.fork(gelu_like, 1.0, 0.5),
                                  lambda jit: jit.ignore(True)])
def test_warnings_are_torchs(call):
    def caught(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                call(lib.jit)
            except Exception:  # noqa: BLE001 (the warnings are compared)
                pass
        return [(w.category.__name__, str(w.message)) for w in seen]
    assert caught(real_torch) == caught(microtorch)
