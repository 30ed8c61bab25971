"""Shared fixtures. torch is the test oracle only; microtorch never imports it."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded numpy generator, so that every test draws the same numbers each run."""
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Leave grad mode and the default dtype as we found them, whatever a test did."""
    import microtorch
    enabled, default = microtorch.is_grad_enabled(), microtorch.get_default_dtype()
    yield
    microtorch.set_grad_enabled(enabled)
    microtorch.set_default_dtype(default)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    """torch and microtorch on the same number of threads (1, then 2), as found afterwards: above 32768 elements a
    kernel's thread shares decide where its vector loops end, and so torch's last bits."""
    import torch

    import microtorch
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    microtorch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)
    microtorch.set_num_threads(before)


@pytest.fixture
def same_threads():
    """microtorch on torch's current number of threads for the test (see `threads`)."""
    import torch

    import microtorch
    before = torch.get_num_threads()
    microtorch.set_num_threads(before)
    yield before
    torch.set_num_threads(before)
    microtorch.set_num_threads(before)
