"""nn.utils.parametrize, nn.utils.parametrizations and nn.utils.prune beside torch 2.13: the steps of PyTorch's
parametrizations and pruning tutorials, shortened (values, reprs, state_dict keys, named parameters and buffers,
gradients, masks, sparsity), and errors."""
import copy
import importlib
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.nn.utils.{name}")


def _text(value):
    """what print shows, with the library's name and object addresses set aside"""
    return re.sub(r" at 0x[0-9a-f]+", "", str(value)).replace("microtorch", "torch")


def _np(t):
    return t.detach().numpy()


def _both(make):
    return [make(lib) for lib in LIBS]


def _close(want, got, tol=1e-5):
    np.testing.assert_allclose(_np(got), _np(want), rtol=tol, atol=tol)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, _text(e)
    return None, None


def _same_error(make):
    (want_type, want), (got_type, got) = (_error(lambda lib=lib: make(lib)) for lib in LIBS)
    assert want_type is not None and got_type == want_type, (want, got)
    assert got == want, (want, got)


# ---- parametrizations defined in the tutorial ----
def _modules(lib):
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return lib.matrix_exp(X)

    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", lib.eye(n))

        def forward(self, X):
            return lib.linalg.solve(self.Id - X, self.Id + X)

        def right_inverse(self, A):
            return lib.linalg.solve(A + self.Id, A - self.Id)

    return Symmetric, Skew, MatrixExponential, CayleyMap


def _symmetric_linear(lib):
    lib.manual_seed(0)
    Symmetric = _modules(lib)[0]
    layer = lib.nn.Linear(3, 3)
    before = str(layer)
    _mod(lib, "parametrize").register_parametrization(layer, "weight", Symmetric())
    return layer, before


def test_register_parametrization_as_the_tutorial_shows_it():
    (want, want_before), (got, got_before) = _both(_symmetric_linear)
    assert _text(got_before) == _text(want_before)
    for show in (lambda m: m, lambda m: m.parametrizations, lambda m: m.parametrizations.weight,
                 lambda m: m.parametrizations.weight[0], lambda m: type(m).__name__, lambda m: type(m).__module__,
                 lambda m: list(dict(m.named_parameters())), lambda m: list(m.state_dict()),
                 lambda m: [n for n, _ in m.named_modules()], lambda m: m.weight):
        assert _text(show(got)) == _text(show(want))
    _close(want.weight, got.weight)
    _close(want.parametrizations.weight.original, got.parametrizations.weight.original)
    assert isinstance(got, microtorch.nn.Linear) and got.weight.grad_fn is not None
    assert _mod(microtorch, "parametrize").type_before_parametrizations(got) is microtorch.nn.Linear
    assert _mod(microtorch, "parametrize").is_parametrized(got) and _mod(microtorch, "parametrize").is_parametrized(
        got, "weight") and not _mod(microtorch, "parametrize").is_parametrized(got, "bias")


def test_gradients_reach_the_original_and_an_optimizer_updates_it():
    def run(lib):
        layer, _ = _symmetric_linear(lib)
        opt = lib.optim.SGD(layer.parameters(), lr=0.1)
        layer(lib.randn(4, 3)).pow(2).sum().backward()
        grad = layer.parametrizations.weight.original.grad.clone()
        opt.step()
        return grad, layer.weight
    (want_grad, want_w), (got_grad, got_w) = _both(run)
    _close(want_grad, got_grad)
    _close(want_w, got_w)
    np.testing.assert_allclose(_np(got_w), _np(got_w).T)


def test_skew_kernels_of_a_conv():
    def run(lib):
        lib.manual_seed(0)
        cnn = lib.nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
        _mod(lib, "parametrize").register_parametrization(cnn, "weight", _modules(lib)[1]())
        return cnn.weight[0, 1], cnn.weight[2, 2], cnn(lib.randn(1, 5, 6, 6))
    for want, got in zip(*_both(run)):
        _close(want, got)


def test_cached_computes_once_inside_the_block():
    def run(lib):
        calls = []

        class Noisy(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X
        layer = lib.nn.Linear(4, 4)
        P = _mod(lib, "parametrize")
        P.register_parametrization(layer, "weight", Noisy())
        counts = [len(calls)]
        layer.weight + layer.weight.T
        layer.weight.sum()
        counts.append(len(calls))
        with P.cached():
            with P.cached():
                layer.weight + layer.weight.T
            layer.weight.sum()
        counts.append(len(calls))
        layer.weight.sum()
        return counts + [len(calls)]
    want, got = _both(run)
    assert got == want


def test_chained_parametrizations_are_orthogonal_and_spd():
    def run(lib):
        lib.manual_seed(0)
        Symmetric, Skew, MatrixExponential, CayleyMap = _modules(lib)
        P = _mod(lib, "parametrize")
        out = []
        for first, second in ((Skew(), CayleyMap(3)), (Skew(), MatrixExponential()),
                              (Symmetric(), MatrixExponential())):
            layer = lib.nn.Linear(3, 3)
            P.register_parametrization(layer, "weight", first)
            P.register_parametrization(layer, "weight", second)
            out += [layer.weight, lib.linalg.eigvalsh(layer.weight) if isinstance(first, Symmetric) else
                    lib.dist(layer.weight.T @ layer.weight, lib.eye(3))]
        out.append(layer.parametrizations.weight)
        return out
    want, got = _both(run)
    assert _text(got[-1]) == _text(want[-1])
    for w, g in zip(want[:-1], got[:-1]):
        _close(w, g, 1e-4)


def test_assignment_calls_right_inverse_through_the_chain():
    def run(lib):
        lib.manual_seed(0)
        _, Skew, _, CayleyMap = _modules(lib)
        P = _mod(lib, "parametrize")
        layer = lib.nn.Linear(3, 3)
        P.register_parametrization(layer, "weight", Skew())
        X = lib.rand(3, 3)
        X = X - X.T
        original = layer.parametrizations.weight.original
        layer.weight = X
        same = layer.parametrizations.weight.original is original
        orth = lib.nn.Linear(3, 3)
        P.register_parametrization(orth, "weight", Skew())
        P.register_parametrization(orth, "weight", CayleyMap(3))
        Q = lib.empty(3, 3)
        lib.nn.init.orthogonal_(Q)
        if Q.det() < 0.0:
            Q[0].neg_()
        orth.weight = Q
        return lib.dist(layer.weight, X), same, original._version, lib.dist(orth.weight, Q), orth.weight
    (*want, w_orth), (*got, g_orth) = _both(run)
    assert got[1] and want[1] and got[2] == want[2]
    assert float(got[0].detach()) < 1e-6 and float(got[3].detach()) < 1e-5
    _close(w_orth, g_orth, 1e-4)


def test_a_right_inverse_need_not_invert():
    def run(lib):
        lib.manual_seed(0)

        class PruningParametrization(lib.nn.Module):
            def __init__(self, X, p_drop=0.2):
                super().__init__()
                self.mask = lib.bernoulli(lib.full_like(X, 1.0 - p_drop))

            def forward(self, X):
                return X * self.mask

            def right_inverse(self, A):
                return A
        layer = lib.nn.Linear(3, 4)
        X = lib.rand_like(layer.weight)
        _mod(lib, "parametrize").register_parametrization(layer, "weight", PruningParametrization(layer.weight))
        layer.weight = X
        return layer.weight
    want, got = _both(run)
    assert _text(got) == _text(want)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def run(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 3)
        P = _mod(lib, "parametrize")
        P.register_parametrization(layer, "weight", _modules(lib)[1]())
        P.remove_parametrizations(layer, "weight", leave_parametrized=leave)
        return layer, type(layer) is lib.nn.Linear, hasattr(layer, "parametrizations")
    (want, *want_flags), (got, *got_flags) = _both(run)
    assert got_flags == want_flags
    for show in (str, lambda m: m.weight, lambda m: list(dict(m.named_parameters())), lambda m: list(m.state_dict())):
        assert _text(show(got)) == _text(show(want))


def test_two_tensors_from_right_inverse_and_a_buffer():
    def run(lib):
        class Split(lib.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, X):
                return X / 2, X / 2
        lib.manual_seed(0)
        P = _mod(lib, "parametrize")
        layer = lib.nn.Linear(2, 2)
        layer.register_buffer("scale", lib.ones(2))
        P.register_parametrization(layer, "weight", Split())
        P.register_parametrization(layer, "scale", lib.nn.Identity())
        out = [list(dict(layer.named_parameters())), list(dict(layer.named_buffers())), list(layer.state_dict()),
               str(layer), layer.weight]
        layer.weight = lib.ones(2, 2)
        out.append(layer.parametrizations.weight.original0)
        P.remove_parametrizations(layer, "weight")
        out += [list(dict(layer.named_parameters())), type(layer).__name__]
        return out
    want, got = _both(run)
    assert [_text(g) for g in got] == [_text(w) for w in want]


def test_state_dict_round_trip_deepcopy_and_transfer():
    def run(lib):
        src, _ = _symmetric_linear(lib)
        dst, _ = _symmetric_linear(lib)
        with lib.no_grad():
            dst.parametrizations.weight.original.zero_()
        result = dst.load_state_dict(src.state_dict())
        twin = copy.deepcopy(src)
        plain = lib.nn.Linear(3, 3)
        P = _mod(lib, "parametrize")
        P.transfer_parametrizations_and_params(src, plain)
        return (str(result), dst.weight, twin.weight, type(twin).__name__, plain.weight, str(plain),
                plain.parametrizations.weight.original is src.parametrizations.weight.original)
    want, got = _both(run)
    assert [_text(g) for g in got] == [_text(w) for w in want]


def test_module_moves_convert_the_original():
    def run(lib):
        layer, _ = _symmetric_linear(lib)
        layer.double()
        x = lib.ones(1, 3, dtype=lib.float64)
        return layer.weight.dtype, layer.parametrizations.weight.original.dtype, layer(x)
    want, got = _both(run)
    assert [_text(g) for g in got] == [_text(w) for w in want]


def _shape_changer(lib, dtype=False):
    class Change(lib.nn.Module):
        def forward(self, X):
            return X.double() if dtype else X[:1]
    return Change()


PARAMETRIZE_ERRORS = {
    "no such tensor": lambda lib: _mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "foo", lib.nn.Identity()),
    "shape changed": lambda lib: _mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "weight", _shape_changer(lib)),
    "dtype changed": lambda lib: _mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "weight", _shape_changer(lib, True)),
    "chained shape changed": lambda lib: _mod(lib, "parametrize").register_parametrization(
        _mod(lib, "parametrize").register_parametrization(lib.nn.Linear(2, 2), "weight", lib.nn.Identity()),
        "weight", _shape_changer(lib)),
    "remove unparametrized": lambda lib: _mod(lib, "parametrize").remove_parametrizations(lib.nn.Linear(2, 2),
                                                                                          "weight"),
    "assign without right_inverse": lambda lib: setattr(_mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "weight", _modules(lib)[0]()), "weight", lib.ones(2, 2)),
    "assign a parameter": lambda lib: setattr(_mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "weight", lib.nn.Identity()), "weight", lib.nn.Parameter(lib.ones(2, 2))),
    "pickle": lambda lib: pickle.dumps(_mod(lib, "parametrize").register_parametrization(
        lib.nn.Linear(2, 2), "weight", lib.nn.Identity())),
    "empty list": lambda lib: _mod(lib, "parametrize").ParametrizationList([], lib.ones(2)),
    "orthogonal of a vector": lambda lib: _mod(lib, "parametrizations").orthogonal(lib.nn.Linear(2, 2), "bias"),
    "orthogonal map": lambda lib: _mod(lib, "parametrizations").orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr"),
    "orthogonal no tensor": lambda lib: _mod(lib, "parametrizations").orthogonal(lib.nn.Linear(2, 2), "foo"),
    "orthogonal wrong shape": lambda lib: setattr(_mod(lib, "parametrizations").orthogonal(lib.nn.Linear(2, 2)),
                                                  "weight", lib.ones(3, 3)),
    "spectral iterations": lambda lib: _mod(lib, "parametrizations").spectral_norm(lib.nn.Linear(2, 2),
                                                                                   n_power_iterations=0),
    "spectral dim": lambda lib: _mod(lib, "parametrizations").spectral_norm(lib.nn.Linear(2, 2), dim=2),
    "spectral no tensor": lambda lib: _mod(lib, "parametrizations").spectral_norm(lib.nn.Linear(2, 2), "foo"),
}


@pytest.mark.parametrize("case", sorted(PARAMETRIZE_ERRORS))
def test_parametrize_errors_as_torchs(case):
    _same_error(PARAMETRIZE_ERRORS[case])


def test_leave_unparametrized_a_tensor_of_two_originals_is_refused():
    def make(lib):
        m = _mod(lib, "parametrizations").weight_norm(lib.nn.Linear(2, 2))
        _mod(lib, "parametrize").remove_parametrizations(m, "weight", leave_parametrized=False)
    _same_error(make)


# ---- parametrizations: orthogonal, weight_norm, spectral_norm ----
@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_orthogonal_values_and_gradients(orth_map, shape):
    def run(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(shape[1], shape[0])
        _mod(lib, "parametrizations").orthogonal(layer, orthogonal_map=orth_map)
        layer(lib.randn(2, shape[1])).pow(2).sum().backward()
        w = layer.weight
        layer.weight = lib.nn.init.orthogonal_(lib.empty(*shape))
        return (w, layer.parametrizations.weight.original.grad, layer.weight,
                layer.parametrizations.weight.original, layer.parametrizations.weight[0].base,
                list(layer.state_dict()), str(layer))
    want, got = _both(run)
    for w, g in zip(want[:5], got[:5]):
        _close(w, g, 1e-4)
    assert [_text(g) for g in got[5:]] == [_text(w) for w in want[5:]]
    small = min(shape)
    gram = got[0] @ got[0].T if shape[0] <= shape[1] else got[0].T @ got[0]
    np.testing.assert_allclose(_np(gram), np.eye(small), atol=1e-5)


def test_orthogonal_without_trivialization_and_batched():
    def run(lib):
        lib.manual_seed(0)
        P = _mod(lib, "parametrizations")
        a = P.orthogonal(lib.nn.Linear(3, 4), use_trivialization=False)
        holder = lib.nn.Module()
        holder.register_parameter("w", lib.nn.Parameter(lib.randn(2, 3, 3)))
        P.orthogonal(holder, "w")
        return a.weight, a.parametrizations.weight.original, holder.w, hasattr(a.parametrizations.weight[0], "base")
    want, got = _both(run)
    for w, g in zip(want[:3], got[:3]):
        _close(w, g, 1e-4)
    assert got[3] == want[3]


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_parametrized(dim):
    def run(lib):
        lib.manual_seed(0)
        layer = _mod(lib, "parametrizations").weight_norm(lib.nn.Linear(5, 3), dim=dim)
        layer(lib.randn(4, 5)).pow(2).sum().backward()
        pl = layer.parametrizations.weight
        return (layer.weight, pl.original0, pl.original0.grad, pl.original1.grad, list(layer.state_dict()),
                str(layer), [n for n, _ in layer.named_parameters()], layer.weight.grad_fn.name(),
                [type(f).__name__ for f, _ in layer.weight.grad_fn.next_functions])
    want, got = _both(run)
    for w, g in zip(want[:4], got[:4]):
        _close(w, g)
    assert [_text(g) for g in got[4:]] == [_text(w) for w in want[4:]]


def test_weight_norm_loads_the_old_state_dict_keys():
    def run(lib):
        lib.manual_seed(0)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
        new = _mod(lib, "parametrizations").weight_norm(lib.nn.Linear(3, 2))
        result = new.load_state_dict(old.state_dict())
        return str(result), new.weight, old.weight
    want, got = _both(run)
    assert _text(got[0]) == _text(want[0])
    _close(want[1], got[1])
    _close(got[2], got[1])


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_transpose", "vector", "eval"])
def test_spectral_norm_parametrized(kind):
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        layer, x = {"linear": (nn.Linear(5, 3), lib.randn(2, 5)), "conv": (nn.Conv2d(2, 4, 3), lib.randn(1, 2, 5, 5)),
                    "conv_transpose": (nn.ConvTranspose2d(2, 4, 3), lib.randn(1, 2, 5, 5)),
                    "vector": (nn.Linear(5, 3), lib.randn(2, 5)), "eval": (nn.Linear(5, 3), lib.randn(2, 5))}[kind]
        name = "bias" if kind == "vector" else "weight"
        _mod(lib, "parametrizations").spectral_norm(layer, name)
        if kind == "eval":
            layer.eval()
        for _ in range(3):
            y = layer(x)
        y.pow(2).sum().backward()
        pl = getattr(layer.parametrizations, name)
        return (getattr(layer, name), pl.original.grad, *([pl[0]._u, pl[0]._v] if name == "weight" else []),
                list(layer.state_dict()), [n for n, _ in layer.named_buffers()])
    want, got = _both(run)
    for w, g in zip(want[:-2], got[:-2]):
        _close(w, g, 1e-4)
    assert got[-2:] == want[-2:]


# ---- prune: the tutorial ----
def _lenet(lib):
    nn, F = lib.nn, lib.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 3)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.flatten(start_dim=1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    return LeNet()


def _hooks_text(module):
    """module._forward_pre_hooks as printed, the handle ids (a process-wide count) set aside"""
    return re.sub(r"\(\d+, ", "(ID, ", _text(module._forward_pre_hooks))


def _pruning_tutorial(lib):
    prune = _mod(lib, "prune")
    lib.manual_seed(0)
    model = _lenet(lib)
    module = model.conv1
    shown = [list(module.named_parameters()), list(module.named_buffers())]
    prune.random_unstructured(module, name="weight", amount=0.3)
    shown += [list(module.named_parameters()), list(module.named_buffers()), module.weight, _hooks_text(module)]
    prune.l1_unstructured(module, name="bias", amount=3)
    shown += [list(module.named_parameters()), list(module.named_buffers()), module.bias, _hooks_text(module)]
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    shown.append(module.weight)
    hook = next(h for h in module._forward_pre_hooks.values() if h._tensor_name == "weight")
    shown += [type(hook).__name__, [type(h).__name__ for h in hook], len(hook), model.state_dict().keys()]
    shown.append(model(lib.randn(1, 1, 28, 28)))
    prune.remove(module, "weight")
    shown += [list(module.named_parameters()), list(module.named_buffers()), _hooks_text(module),
              prune.is_pruned(model)]
    return shown


def test_pruning_tutorial_steps():
    want, got = _both(_pruning_tutorial)
    assert len(got) == len(want)
    for i, (w, g) in enumerate(zip(want, got)):
        assert _text(g) == _text(w), i


def test_pruning_all_layers_and_global_sparsity():
    def run(lib):
        prune = _mod(lib, "prune")
        lib.manual_seed(0)
        new_model = _lenet(lib)
        for _, module in new_model.named_modules():
            if isinstance(module, lib.nn.Conv2d):
                prune.l1_unstructured(module, name="weight", amount=0.2)
            elif isinstance(module, lib.nn.Linear):
                prune.l1_unstructured(module, name="weight", amount=0.4)
        keys = list(dict(new_model.named_buffers()).keys())
        model = _lenet(lib)
        layers = (model.conv1, model.conv2, model.fc1, model.fc2, model.fc3)
        prune.global_unstructured([(m, "weight") for m in layers], pruning_method=prune.L1Unstructured, amount=0.2)
        sparsity = ["{:.2f}%".format(100.0 * float(lib.sum(m.weight == 0)) / float(m.weight.nelement()))
                    for m in layers]
        total = 100.0 * float(sum(lib.sum(m.weight == 0) for m in layers)) / sum(m.weight.nelement() for m in layers)
        masks = [m.weight_mask for m in layers]
        masks += [m.weight_mask for m in new_model.modules() if hasattr(m, "weight_mask")]
        return keys, sparsity, "{:.2f}%".format(total), masks
    want, got = _both(run)
    assert got[:3] == want[:3]
    for w, g in zip(want[3], got[3]):
        assert np.array_equal(_np(g), _np(w))


def test_a_custom_pruning_method():
    def run(lib):
        prune = _mod(lib, "prune")

        class FooBarPruningMethod(prune.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask
        lib.manual_seed(0)
        model = _lenet(lib)
        FooBarPruningMethod.apply(model.fc3, "bias")
        first = model.fc3.bias_mask.clone()
        FooBarPruningMethod.apply(model.fc3, "bias")  # (again: it acts on the entries left)
        return first, model.fc3.bias_mask, model.fc3.bias
    for w, g in zip(*_both(run)):
        assert _text(g) == _text(w)


PRUNINGS = {
    "random_unstructured twice": lambda p, m: (p.random_unstructured(m, "weight", 0.3),
                                               p.random_unstructured(m, "weight", 5)),
    "l1 then random_structured": lambda p, m: (p.l1_unstructured(m, "weight", 0.25),
                                               p.random_structured(m, "weight", 0.5, dim=1)),
    "random_structured dim -1": lambda p, m: p.random_structured(m, "weight", 2, dim=-1),
    "ln_structured inf, then l1": lambda p, m: (p.ln_structured(m, "weight", 1, n=float("inf"), dim=1),
                                                p.l1_unstructured(m, "weight", 3)),
    "ln_structured fro": lambda p, m: p.ln_structured(m, "weight", 0.4, n="fro", dim=0),
    "ln_structured L1 twice": lambda p, m: (p.ln_structured(m, "weight", 1, n=1, dim=0),
                                            p.ln_structured(m, "weight", 1, n=1, dim=0)),
    "identity then l1": lambda p, m: (p.identity(m, "weight"), p.l1_unstructured(m, "weight", 0.5)),
    "custom_from_mask then l1": lambda p, m: (p.custom_from_mask(m, "weight", m.weight > 0),
                                              p.l1_unstructured(m, "weight", 0.3)),
    "importance_scores": lambda p, m: p.l1_unstructured(m, "weight", 4, importance_scores=m.weight.detach() ** 3),
    "amount 0": lambda p, m: (p.l1_unstructured(m, "weight", 0), p.random_structured(m, "weight", 0.0, 0)),
    "global twice": lambda p, m: (p.global_unstructured([(m, "weight"), (m, "bias")], p.RandomUnstructured,
                                                         amount=0.3),
                                  p.global_unstructured([(m, "weight"), (m, "bias")], p.L1Unstructured, amount=4)),
}


@pytest.mark.parametrize("case", sorted(PRUNINGS))
def test_masks_as_torchs(case):
    def run(lib):
        lib.manual_seed(1)
        m = lib.nn.Linear(6, 5)
        PRUNINGS[case](_mod(lib, "prune"), m)
        hooks = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        inner = [[type(x).__name__ for x in h] for h in m._forward_pre_hooks.values() if hasattr(h, "__iter__")]
        return m.weight_mask, m.weight, m(lib.ones(1, 6)), hooks, inner, list(m.state_dict()), lib.rand(1)
    want, got = _both(run)
    for w, g in zip(want, got):
        assert _text(g) == _text(w)


def test_l1_ties_broken_as_torchs_topk():
    def run(lib):
        m = lib.nn.Linear(8, 8)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[0.0, 1.0, -1.0, 2.0, 0.0, -0.0, 1.0, 2.0]] * 8) * lib.arange(1, 9)[:, None] % 3)
        _mod(lib, "prune").l1_unstructured(m, "weight", 23)
        _mod(lib, "prune").ln_structured(m, "weight", 3, n=1, dim=0)
        return m.weight_mask
    want, got = _both(run)
    assert np.array_equal(_np(got), _np(want))


def test_the_prune_method_and_removal_keeps_the_parameter():
    def run(lib):
        prune = _mod(lib, "prune")
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 3)
        pruned = prune.L1Unstructured(amount=0.5).prune(m.weight.detach())
        param = m.weight
        prune.l1_unstructured(m, "weight", 0.5)
        m(lib.ones(2, 4)).sum().backward()
        grad = m.weight_orig.grad
        prune.remove(m, "weight")
        return pruned, grad, m.weight, m.weight is param, isinstance(m.weight, lib.nn.Parameter), \
            _mod(lib, "prune").is_pruned(m)
    want, got = _both(run)
    assert [_text(g) for g in got] == [_text(w) for w in want]


def _twice_in_container(lib):
    prune = _mod(lib, "prune")
    m = lib.nn.Linear(2, 2)
    a = prune.Identity()
    a._tensor_name = "weight"
    b = prune.Identity()
    b._tensor_name = "bias"
    prune.PruningContainer(a).add_pruning_method(b)


PRUNE_ERRORS = {
    "negative amount": lambda lib: _mod(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "weight", -1),
    "amount above one": lambda lib: _mod(lib, "prune").random_unstructured(lib.nn.Linear(2, 2), "weight", 1.5),
    "amount a string": lambda lib: _mod(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "weight", "a"),
    "amount too large": lambda lib: _mod(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "weight", 5),
    "structured vector": lambda lib: _mod(lib, "prune").ln_structured(lib.nn.Linear(2, 2), "bias", 1, 2, 0),
    "structured dim": lambda lib: _mod(lib, "prune").random_structured(lib.nn.Linear(2, 2), "weight", 1, 2),
    "remove unpruned": lambda lib: _mod(lib, "prune").remove(lib.nn.Linear(2, 2), "weight"),
    "global not iterable": lambda lib: _mod(lib, "prune").global_unstructured(3, _mod(lib, "prune").L1Unstructured,
                                                                              amount=1),
    "global structured": lambda lib: _mod(lib, "prune").global_unstructured(
        [(lib.nn.Linear(2, 2), "weight")], _mod(lib, "prune").LnStructured, amount=1, n=2, dim=0),
    "global scores": lambda lib: _mod(lib, "prune").global_unstructured(
        [(lib.nn.Linear(2, 2), "weight")], _mod(lib, "prune").L1Unstructured, importance_scores=[1], amount=1),
    "scores shape": lambda lib: _mod(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "weight", 1,
                                                                   importance_scores=lib.ones(3)),
    "mask shape": lambda lib: _mod(lib, "prune").custom_from_mask(lib.nn.Linear(2, 2), "weight", lib.ones(3)),
    "no such parameter": lambda lib: _mod(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "foo", 1),
    "container of another tensor": _twice_in_container,
}


@pytest.mark.parametrize("case", sorted(PRUNE_ERRORS))
def test_prune_errors_as_torchs(case):
    _same_error(PRUNE_ERRORS[case])


def test_a_failed_pruning_leaves_the_module_as_it_was():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        try:
            _mod(lib, "prune").l1_unstructured(m, "weight", 5)
        except ValueError:
            pass
        return list(dict(m.named_parameters())), list(dict(m.named_buffers())), _hooks_text(m)
    want, got = _both(run)
    assert _text(got) == _text(want)


def test_nn_utils_imports_parametrize_but_not_prune_as_torchs():
    code = "import {0}; u = {0}.nn.utils; print([hasattr(u, n) for n in ('parametrize', 'parametrizations', 'prune')])"
    want, got = (subprocess.run([sys.executable, "-c", code.format(lib.__name__)], capture_output=True, text=True,
                                check=True).stdout for lib in LIBS)
    assert got == want == "[True, True, False]\n"


def test_weight_norms_forward_mode_is_refused_as_torchs():
    errors = []
    for lib in (real_torch, microtorch):
        fwad = lib.autograd.forward_ad
        weight_norm = lib._weight_norm if lib is real_torch else lib.nn.utils.parametrizations._weight_norm
        with fwad.dual_level():
            v = fwad.make_dual(lib.ones(3, 4), lib.ones(3, 4))
            with pytest.raises(NotImplementedError) as info:
                weight_norm(v, lib.ones(3, 1), 0)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
