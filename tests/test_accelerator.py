"""torch.accelerator on a machine without one, beside torch: what answers, what raises (type and message start)."""
import warnings

import pytest
import torch

import microtorch as mt

CALLS = [("is_available", ()), ("current_accelerator", ()), ("current_accelerator", (True,)), ("device_count", ()),
         ("synchronize", ()), ("synchronize", (0,)), ("current_device_index", ()), ("current_device_index", (0,)),
         ("current_device_idx", ()), ("set_device_index", ()), ("set_device_index", (0,)),
         ("set_device_index", (None,)), ("set_device_idx", (0,)), ("current_stream", ()), ("empty_cache", ()),
         ("empty_host_cache", ()), ("get_device_capability", ())] + [
    (name, args) for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                              "memory_stats", "get_memory_info", "reset_peak_memory_stats",
                              "reset_accumulated_memory_stats") for args in ((), (0,))]


def outcome(lib, name, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returns", getattr(lib.accelerator, name)(*args))
        except Exception as e:
            result = ("raises", type(e).__name__, str(e).split(" (")[0][:60])
    return result, [w.category.__name__ for w in caught]


@pytest.mark.parametrize("name, args", CALLS)
def test_like_torch_without_an_accelerator(name, args):
    got, want = outcome(mt, name, args), outcome(torch, name, args)
    if got[0][0] == want[0][0] == "raises" and got[0][1] == "TypeError":  # (Python's arity message, named alike)
        assert got[0][1] == want[0][1] and got[1] == want[1]
    else:
        assert got == want


@pytest.mark.parametrize("index", [None, 0])
def test_device_index_block(index):
    def run(lib):
        try:
            with lib.accelerator.device_index(index):
                return "ran"
        except RuntimeError as e:
            return str(e)[:50]
    assert run(mt) == run(torch)


def test_the_tutorials_first_lines():
    device = mt.accelerator.current_accelerator().type if mt.accelerator.is_available() else "cpu"
    mt.set_default_device(device)
    try:
        assert device == "cpu" and mt.linspace(0, 1, 3).device == mt.device("cpu")
    finally:
        mt.set_default_device(None)
