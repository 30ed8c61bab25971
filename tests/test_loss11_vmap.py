"""vmap of the pointwise losses' gradients beside torch.func: the backward ops (MseLossBackward and the others)
batch with a rule of their own, so vmap(grad(...)) warns of no per-example fallback where torch's does not, and its
'mean' divides by one example's count. Values of grad, hessian and jacrev over a batch of inputs or of targets."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

LOSSES = ["mse_loss", "binary_cross_entropy", "smooth_l1_loss", "huber_loss"]


def _run(lib, name, reduction, transform, batched_target):
    xs = lib.tensor(np.linspace(0.1, 0.9, 12).reshape(3, 4))
    ys = lib.tensor(np.linspace(0.2, 0.8, 12).reshape(3, 4)[::-1].copy())
    fn = lib.func

    def f(x, y):
        return getattr(lib.nn.functional, name)(x, y, reduction=reduction).sum()
    t = {"grad": fn.grad, "hessian": fn.hessian, "jacrev": fn.jacrev}[transform](f, argnums=(0, 1))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn.vmap(t, in_dims=(0, 0 if batched_target else None))(xs, ys if batched_target else ys[0])
    fallback = [w for w in seen if "performance drop" in str(w.message)]
    flat = [o for pair in (out if transform == "hessian" else [out]) for o in pair]
    return [o.detach().numpy() for o in flat], len(fallback)


@pytest.mark.parametrize("batched_target", [True, False])
@pytest.mark.parametrize("transform", ["grad", "hessian", "jacrev"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", LOSSES)
def test_vmap_of_a_loss_gradient_batches_as_torch(name, reduction, transform, batched_target):
    if transform == "grad" and reduction == "none":
        pytest.skip("grad needs a number: 'none' is covered by jacrev")
    (mine, my_fallbacks), (theirs, _) = (_run(lib, name, reduction, transform, batched_target) for lib in (mt, torch))
    assert my_fallbacks == 0
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
