"""The report gradcheck returns (the Jacobians of every output/input pair, the verdict of each
check) and the messages of GradcheckError, as torch words them."""

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..._tensor import Tensor


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


# ---- the report ---------------------------------------------------------------------------------
@dataclass
class JacobianPair:
    """The numerical and analytical Jacobian of one (output, input) pair.

    Arrays have shape (output.numel(), input.numel()). `mask` is True where
    |analytical - numerical| > atol + rtol * |numerical| (the failing entries). `checked` is
    False for the Wirtinger pairs derived from the real and imaginary parts (shown, not
    judged); `mode` is "backward" (reverse mode) or "forward" (check_forward_ad)."""
    output_index: int
    input_index: int
    numerical: np.ndarray
    analytical: np.ndarray
    mask: np.ndarray
    max_abs_error: float
    max_rel_error: float
    worst: tuple
    passed: bool
    output_shape: tuple
    input_shape: tuple
    kind: str = "real"
    checked: bool = True
    mode: str = "backward"
    output_arg: int = 0
    input_arg: int = 0

    def __repr__(self):
        return (f"JacobianPair(output {self.output_index}, input {self.input_index}, kind={self.kind!r}, "
                f"{self.mode}, {'passed' if self.passed else 'FAILED'}, shape={self.numerical.shape}, "
                f"max_abs_error={self.max_abs_error:.3g}, worst={self.worst})")


@dataclass
class FastPair:
    """fast_mode's comparison for one pair: the scalars v^T J u, and the scaled atol used."""
    output_index: int
    input_index: int
    numerical: complex
    analytical: complex
    atol: float
    passed: bool


@dataclass
class FastModeResult:
    """The random vectors of fast_mode (u per input, v per output, flat and unit-norm) and the
    scalars v^T J u it compared, one `FastPair` per (output, input)."""
    u: list
    v: list
    pairs: list = field(default_factory=list)


@dataclass
class GradcheckReport:
    """What gradcheck found. `checks` maps each check to True, False or None (not run)."""
    passed: bool
    message: str
    pairs: list
    checks: dict
    fast: object
    inputs: tuple
    outputs: tuple
    eps: float
    atol: float
    rtol: float
    fast_mode: bool = False

    def __repr__(self):
        failed = [k for k, v in self.checks.items() if v is False]
        ran = [k for k, v in self.checks.items() if v is not None]
        return (f"GradcheckReport({'passed' if self.passed else 'FAILED'}, {len(self.pairs)} Jacobian pairs, "
                f"checks run: {ran}" + (f", failed: {failed}" if failed else "") + ")")

    def pair(self, output_index=0, input_index=0, kind=None, mode="backward"):
        """The pair for (output i, input j): the first checked one unless `kind` is given."""
        for p in self.pairs:
            if (p.output_index, p.input_index, p.mode) == (output_index, input_index, mode) and \
                    (p.kind == kind if kind is not None else p.checked):
                return p
        raise KeyError(f"no {mode} Jacobian pair for output {output_index}, input {input_index}"
                       + (f" of kind {kind!r}" if kind else ""))


CHECK_NAMES = ("no_overlap", "backward_ad", "nondet", "grad_dtypes", "forward_ad", "batched_forward_grad",
               "batched_grad", "mul_by_grad_output", "undefined_grad")


class _Failure(Exception):
    """A failed check inside `check` (becomes GradcheckError, or another type torch uses)."""

    def __init__(self, message, check, exc_type=GradcheckError):
        super().__init__(message)
        self.message, self.check, self.exc_type = message, check, exc_type


def _t(arr):
    """How a message prints an array: as a microtorch Tensor, or a scalar as a Python number."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return arr.item()
    return Tensor._make(np.array(arr, order="C"))


def _notallclose_msg(analytical, numerical, output_idx, input_idx, complex_part=None, forward=False):
    """torch's message. `analytical`/`numerical` are printed as given (torch's layout)."""
    prefix = ""
    if complex_part is not None:
        prefix = f"While considering the {complex_part} part of complex {'inputs' if forward else 'outputs'} only, "
    mode = "computed with forward mode " if forward else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{_t(numerical)}\nanalytical:{_t(analytical)}\n")


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations (results that vary from run to run,
e.g. random numbers or an order-dependent sum in backward), this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, call gradcheck/gradgradcheck with `fast_mode=False`
as a keyword argument.
""".strip()

FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation; the most common failure is a vmap-incompatible operation in the backward.
If this is expected, call gradcheck/gradgradcheck with `check_batched_grad=False`.
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
If this is expected, call gradcheck with `check_batched_forward_grad=False`.
"""


def _batched_msg(output_idx, input_idx, res, exp, forward=False):
    return (f"For output {output_idx} and input {input_idx}:\n\n"
            f"{FAILED_BATCHED_GRAD_MSG_FWD_AD if forward else FAILED_BATCHED_GRAD_MSG}\n\n"
            f"Got:\n{res!r}\n\nExpected:\n{exp!r}").strip()


class _Result:
    """Failures in torch's order, the pairs and the check verdicts."""

    def __init__(self):
        self.failures = []
        self.pairs = []
        self.checks = {name: None for name in CHECK_NAMES}
        self.fast = None

    def fail(self, failure):
        self.failures.append(failure)
        if failure.check in self.checks:
            self.checks[failure.check] = False

    def ok(self, *names):
        for name in names:
            if self.checks.get(name) is None:
                self.checks[name] = True

    def stage(self, fn, *args, **kwargs):
        """Run one check; once a check has failed, later ones only add information."""
        if not self.failures:
            try:
                return fn(*args, **kwargs)
            except _Failure as f:
                self.fail(f)
                return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return fn(*args, **kwargs)
            except _Failure as f:
                self.fail(f)
            except Exception:  # noqa: BLE001 - torch would have stopped at the earlier failure
                pass
        return None

    def ok_backward(self, call):
        self.ok("backward_ad", "nondet")
        if call.check_grad_dtypes:
            self.ok("grad_dtypes")
