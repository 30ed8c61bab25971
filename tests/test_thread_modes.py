"""Grad mode is per thread, anomaly mode is per process: run the same threaded scenarios with
torch and microtorch and compare what each thread sees."""
import threading

import pytest
import torch

import microtorch


def _in_thread(fn):
    """fn() in a new thread; its result, or the exception it raised."""
    out = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as e:  # (re-raised in the caller's thread)
            out["error"] = e
    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _while_other_thread(T, mode, fn):
    """fn() in this thread while another thread sits inside `mode()`."""
    inside, leave = threading.Event(), threading.Event()

    def other():
        with mode(T)():
            inside.set()
            leave.wait(10)
    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    try:
        return fn()
    finally:
        leave.set()
        t.join()


def _records(T):
    x = T.ones(2, requires_grad=True)
    return (x * 2).requires_grad, T.is_grad_enabled()


@pytest.mark.parametrize("mode", [lambda T: T.no_grad, lambda T: T.inference_mode,
                                  lambda T: (lambda: T.set_grad_enabled(False))])
def test_grad_mode_of_another_thread_does_not_reach_this_one(mode):
    got = [_while_other_thread(T, mode, lambda T=T: _records(T)) for T in (torch, microtorch)]
    assert got[0] == got[1] == (True, True)


def test_a_new_thread_starts_with_grad_on():
    for T in (torch, microtorch):
        with T.no_grad():
            assert _in_thread(lambda T=T: _records(T)) == (True, True)
            assert not (T.ones(1, requires_grad=True) * 2).requires_grad


def test_a_thread_that_ends_with_grad_off_leaves_the_others_on():
    for T in (torch, microtorch):
        _in_thread(lambda T=T: T.set_grad_enabled(False))
        assert _records(T) == (True, True)
        with T.no_grad():
            assert _records(T) == (False, False)
        assert _records(T) == (True, True)


def test_many_threads_switching_grad_mode_at_once():
    """Threads entering and leaving no_grad concurrently never change another thread's mode."""
    seen = []

    def switch():
        for _ in range(300):
            with microtorch.no_grad():
                seen.append(_records(microtorch))
            seen.append(_records(microtorch))
    threads = [threading.Thread(target=switch) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(seen) == {(False, False), (True, True)} and len(seen) == 6 * 600
    assert seen.count((False, False)) == 6 * 300
    assert _records(microtorch) == (True, True)
    with microtorch.no_grad():
        assert _records(microtorch) == (False, False)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_is_one_switch_for_the_process():
    for T in (torch, microtorch):
        seen = _while_other_thread(T, lambda T: T.autograd.detect_anomaly, T.is_anomaly_enabled)
        assert seen is True, T.__name__
        assert T.is_anomaly_enabled() is False
        _in_thread(lambda T=T: T.autograd.set_detect_anomaly(True, check_nan=False))
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (True, False)
        T.autograd.set_detect_anomaly(False)
        assert (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()) == (False, True)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_of_another_thread_traces_nodes_made_here():
    """A node recorded while any thread has anomaly mode on keeps its forward stack."""
    def make():
        x = microtorch.ones(2, requires_grad=True)
        return (x * 2).grad_fn
    node = _while_other_thread(microtorch, lambda T: T.autograd.detect_anomaly, make)
    assert "make" in node._anomaly_trace
    assert make()._anomaly_trace is None


def test_saved_tensor_hooks_of_another_thread_do_not_pack_here():
    """saved_tensors_hooks is per thread in torch: a block open in another thread packs nothing
    saved in this one, and one open here packs (the count of open blocks only skips a read)."""
    for T in (torch, microtorch):
        packed = []
        hooks = lambda: T.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t)

        def save():
            x = T.ones(2, requires_grad=True)
            (x * x).sum().backward()
            return x.grad.tolist()
        assert _while_other_thread(T, lambda T: hooks, save) == [2.0, 2.0] and packed == []
        with hooks():
            assert save() == [2.0, 2.0]
        assert len(packed) == 2, T.__name__
