"""gradcheck and gradgradcheck: finite differences against autograd, with the Jacobians kept.

The package: numerical.py (finite differences), analytical.py (Jacobians from backward),
forward.py (from jvp), checks.py (the extra checks), report.py (what a check returns and the
messages), util.py (helpers), core.py (the order torch runs them in, and the verdict).

`check(func, inputs, ...)` does the work and returns a `GradcheckReport`: for every
(differentiable output i, differentiable input j) the numerical Jacobian (central differences,
one input element at a time) and the analytical one (one backward per output element), as
numpy arrays of shape (output.numel(), input.numel()), plus the verdict of every extra check.
`gradcheck` keeps torch's contract on top of it: True, or `GradcheckError` with torch's
message ("Jacobian mismatch for output i with respect to input j, numerical: ... analytical:
..."), or False when `raise_exception=False`.

Indices follow torch's messages: output i counts the outputs that require grad, input j the
inputs that require grad. Messages print torch's layout (input.numel(), output.numel()); the
report's arrays are the usual Jacobian (row = output element, column = input element).

Complex numbers, as torch does it. For a complex input z = x + iy and a real output s, the
gradient torch computes is ds/dx + i ds/dy (twice the conjugate Wirtinger derivative
ds/dz*); that is what is compared (pair kind "conj_wirtinger"; its conjugate, the Wirtinger
derivative, is reported as kind "wirtinger"). A complex output f = u + iv is checked as two
real functions u (kind "real_part") and v (kind "imag_part"); from those the report also
derives f's Wirtinger pair, df/dx - i df/dy and df/dx + i df/dy (0 for a holomorphic f).
Fast mode is for real-to-real functions; with complex inputs or outputs it falls back to the
slow mode, as the documentation says. microtorch has no sparse tensors: `masked` is accepted
and has no effect.
"""
from .core import check, check_gradgrad, gradcheck, gradgradcheck
from .report import FastModeResult, FastPair, GradcheckError, GradcheckReport, JacobianPair

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "check", "check_gradgrad",
           "GradcheckReport", "JacobianPair", "FastModeResult", "FastPair"]

# `microtorch.autograd.gradcheck` is the function, as in torch (autograd/__init__ imports it
# over this package's name). The function also answers `.gradcheck`, `.GradcheckError`, `.check`
# ..., so that code written for either spelling runs.
for _name in __all__:
    setattr(gradcheck, _name, globals()[_name])
