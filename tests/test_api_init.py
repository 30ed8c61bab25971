"""nn.init additions against torch: orthogonal_ (orthogonality, shapes, gain), dirac_ (a convolution that
copies its input), and the deprecated names without the underscore (FutureWarning, same effect)."""
import numpy as np
import pytest
import torch

import microtorch as mt


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_as_torch(shape):
    for lib in (torch, mt):
        w = lib.empty(*shape, dtype=lib.float64)
        lib.nn.init.orthogonal_(w, gain=2.0)
        m = w.detach().numpy().reshape(shape[0], -1)
        gram = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-10)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        mt.nn.init.orthogonal_(mt.empty(3))


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 5, 3, 3), 1)])
def test_dirac_as_torch(shape, groups):
    t, m = torch.empty(*shape), mt.empty(*shape)
    torch.nn.init.dirac_(t, groups), mt.nn.init.dirac_(m, groups)
    np.testing.assert_array_equal(m.numpy(), t.numpy())


@pytest.mark.parametrize("name, args", [("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("eye", ()),
                                        ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                                        ("kaiming_normal", ()), ("orthogonal", ()), ("dirac", ())])
def test_deprecated_names_as_torch(name, args):
    for lib in (torch, mt):
        w = lib.empty(3, 3, 3) if name == "dirac" else lib.empty(3, 4)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated"):
            out = getattr(lib.nn.init, name)(w, *args)
        assert out is w
