"""gradcheck is a package of small modules, importable and callable as torch's is, without any
module whose class was replaced."""
import importlib
import sys
import types

import torch

import microtorch as mt


def _ok(lib):
    x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
    return lambda g: g(lambda v: (v * v).sin(), (x,))


def test_spellings_of_torch_work():
    from microtorch.autograd import gradcheck
    from microtorch.autograd.gradcheck import GradcheckError, gradgradcheck
    assert _ok(mt)(gradcheck) is True and _ok(torch)(torch.autograd.gradcheck) is True
    assert _ok(mt)(mt.autograd.gradcheck) is True
    assert _ok(mt)(gradgradcheck) is True
    assert issubclass(GradcheckError, RuntimeError)


def test_the_dotted_spellings_work_too():
    assert _ok(mt)(mt.autograd.gradcheck.gradcheck) is True
    assert mt.autograd.gradcheck.GradcheckError is mt.autograd.GradcheckError


def test_no_module_is_callable_or_has_a_replaced_class():
    for name in [m for m in sys.modules if m.startswith("microtorch.autograd.gradcheck")]:
        assert type(sys.modules[name]) is types.ModuleType, name
        assert not callable(sys.modules[name])
    parts = {m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("microtorch.autograd.gradcheck.")}
    assert {"numerical", "analytical", "report", "checks", "core"} <= parts


def test_the_package_is_small_modules():
    pkg = importlib.import_module("microtorch.autograd.gradcheck.core").__file__
    import pathlib
    for path in pathlib.Path(pkg).parent.glob("*.py"):
        assert len(path.read_text().splitlines()) < 300, path.name
