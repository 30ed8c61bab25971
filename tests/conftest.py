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
