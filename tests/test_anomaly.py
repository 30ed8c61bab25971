"""Anomaly mode against torch: NaN in backward raises RuntimeError naming the node, and the
warning shows the user's line that created it; check_nan=False; set_detect_anomaly; the
node whose backward created the failing node; other errors in backward get the trace too."""
import warnings

import pytest
import torch

import microtorch
from autograd_oracle import LIBS, same


def run_with_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except RuntimeError as e:
            err = e
    return err, [w for w in caught if issubclass(w.category, UserWarning)]


def make_nan(T):  # a line only this helper has: the trace must show it
    return (T.tensor([0.0, 4.0], requires_grad=True) * 1).sqrt()  # MARK: the node that fails


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_nan_in_backward_raises_naming_the_node_and_shows_the_forward_line(T):
    def prog():
        with T.autograd.detect_anomaly():
            y = make_nan(T)
            (y * 0).sum().backward()   # 0 * inf = nan in SqrtBackward0
    err, warns = run_with_warnings(prog)
    assert err is not None and str(err).startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    messages = [str(w.message) for w in warns]
    assert any(m.startswith("Anomaly Detection has been enabled.") for m in messages)
    detected = [w for w in warns if str(w.message).startswith("Error detected in SqrtBackward0. Traceback of forward "
                                                               "call that caused the error:")]
    assert len(detected) == 1
    text = str(detected[0].message)
    assert "# MARK: the node that fails" in text and "in make_nan" in text and __file__ in text
    if T is microtorch:  # no engine or op internals in the trace, and the warning points at the user's line
        assert "microtorch/ops" not in text and "microtorch/autograd" not in text
        assert detected[0].filename == __file__
        assert "# MARK: the node that fails" in str(err)   # the error itself shows where, too


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_without_anomaly_mode_nan_passes_silently(T):
    def prog():
        y = make_nan(T)
        (y * 0).sum().backward()
    err, warns = run_with_warnings(prog)
    assert err is None and not any("Error detected" in str(w.message) for w in warns)


def test_check_nan_false_and_set_detect_anomaly():
    def prog(T):
        states = []
        with T.autograd.detect_anomaly(check_nan=False):
            states.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
            x = T.tensor([0.0, 4.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()
        states.append(T.is_anomaly_enabled())
        T.autograd.set_detect_anomaly(True)
        states.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        T.autograd.set_detect_anomaly(False)
        states.append(T.is_anomaly_enabled())
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            states.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        states.append(T.is_anomaly_enabled())
        return states, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(prog)


@pytest.mark.parametrize("case", ["custom", "seed", "forward nan"])
def test_nan_from_a_custom_backward_or_the_seed(case):
    def prog(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.autograd.detect_anomaly():
            if case == "custom":
                Bad.apply(x).sum().backward()
            elif case == "seed":
                (x * 2).backward(T.tensor([float("nan"), 1.0]))
            else:
                (x * float("nan")).sum().backward()
    for T in LIBS:
        err, warns = run_with_warnings(lambda: prog(T))
        name = "BadBackward" if case == "custom" else "MulBackward0"
        assert str(err).startswith(f"Function '{name}' returned nan values in its 0th output."), (T, err)
        assert any(str(w.message).startswith(f"Error detected in {name}.") for w in warns), T


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_a_node_created_by_a_backward_names_the_node_that_created_it(T):
    def prog():
        with T.autograd.detect_anomaly():
            x = T.tensor([0.0, 3.0], requires_grad=True)
            y = x.sqrt()  # MARK: first order
            (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
            (g * 0).sum().backward()
    err, warns = run_with_warnings(prog)
    assert "returned nan values" in str(err)
    messages = [str(w.message) for w in warns]
    induced = [m for m in messages if "Previous calculation was induced by SqrtBackward0. Traceback of forward call "
                                      "that induced the previous calculation:" in m]
    assert len(induced) == 1 and "# MARK: first order" in induced[0]


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_other_errors_in_backward_also_get_the_forward_trace(T):
    def prog():
        with T.autograd.detect_anomaly():
            x = T.tensor([1.0, 3.0, 2.0], requires_grad=True)
            a = x * 1
            y = a * a  # MARK: saves a
            a.add_(1)
            y.sum().backward()
    err, warns = run_with_warnings(prog)
    assert "is at version 1; expected version 0 instead. Hint: the backtrace further above shows the operation " \
           "that failed to compute its gradient." in str(err)
    detected = [str(w.message) for w in warns if str(w.message).startswith("Error detected in MulBackward0.")]
    assert len(detected) == 1 and "# MARK: saves a" in detected[0]


def test_nodes_created_outside_anomaly_mode_have_no_trace():
    x = microtorch.tensor([0.0, 4.0], requires_grad=True)
    y = x.sqrt()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with microtorch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$"):
                (y * 0).sum().backward()


def test_anomaly_mode_is_off_after_an_error_inside_the_block():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ZeroDivisionError):
            with microtorch.autograd.detect_anomaly():
                1 / 0
    assert not microtorch.is_anomaly_enabled()
    assert torch is not microtorch
