"""How an answer is judged: values against a computed reference, a Function by gradcheck,
a chain of hand-computed gradients node by node. Each returns a `Verdict`: passed or not,
the reason in words (naming the typical mistake when it recognises one), and the pictures
that explain it. A reason never contains the reference value."""
import numpy as np

from .._tensor import Tensor


class Verdict:
    def __init__(self, passed, reason="", visuals=()):
        self.passed, self.reason, self.visuals = passed, reason, list(visuals)


def ok(note=""):
    return Verdict(True, note)


def wrong(reason, *visuals):
    return Verdict(False, reason, visuals)


class Unusable(Exception):
    """The answer cannot be judged at all (not filled in, not a number...)."""


def missing(answer):
    return answer is Ellipsis or answer is None or answer is NotImplemented


def as_array(x, what):
    """A numpy array from a tensor, number, list or array; Unusable if that is impossible."""
    if missing(x):
        raise Unusable(f"{what} is not filled in yet: replace the `...` with your answer and run the cell again.")
    if isinstance(x, Tensor):
        return np.asarray(x.detach().numpy(), dtype=np.complex128 if x.is_complex() else np.float64)
    if hasattr(x, "detach") and hasattr(x, "numpy"):          # a torch tensor
        return np.asarray(x.detach().numpy()).astype(np.float64)
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise Unusable(f"{what} should be a number or a tensor, got {type(x).__name__}: {x!r:.60}") from None
    return arr


def _close(a, b, rtol, atol):
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _sum_to(a, shape):
    """Sum `a` down to `shape` if `shape` broadcasts to a.shape, else None."""
    try:
        if np.broadcast_shapes(tuple(shape), a.shape) != a.shape:
            return None
    except ValueError:
        return None
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape)


def _shape_reason(got, want, what, rtol, atol):
    s = _sum_to(got, want.shape)
    if s is not None and _close(s, want, rtol, atol):
        return (f"{what} has shape {tuple(got.shape)}, but a gradient always has the shape of its tensor, "
                f"{tuple(want.shape)}. That tensor was broadcast in the forward pass: the broadcast sum is "
                f"missing (sum over the dimensions it was copied along).")
    if s is not None:
        return (f"{what} has shape {tuple(got.shape)}, but it must have shape {tuple(want.shape)} (a gradient has "
                f"the shape of its tensor); summing it over the broadcast dimensions would not fix the "
                f"numbers either.")
    if got.size == want.size and _close(got.reshape(want.shape), want, rtol, atol):
        return f"the numbers are right, but {what} must have shape {tuple(want.shape)}, not {tuple(got.shape)}."
    return f"{what} has shape {tuple(got.shape)}; it should have shape {tuple(want.shape)}."


def _ratio(got, want):
    """The constant c with got == c * want, if there is one (want not all zero)."""
    nz = np.abs(want) > 1e-12
    if not nz.any() or np.any(np.abs(got[~nz]) > 1e-9):
        return None
    r = got[nz] / want[nz]
    c = r.flat[0]
    return c if np.allclose(r, c, rtol=1e-5, atol=1e-9) else None


def compare(got, want, *, what="your answer", wrongs=(), rtol=1e-5, atol=1e-7):
    """Judge a value against the reference `want` (computed by the check, never shown).

    wrongs: (reason, value) pairs, the typical wrong answers of this exercise; when the
    answer equals one of them the reason says so."""
    try:
        got = as_array(got, what)
    except Unusable as e:
        return wrong(str(e))
    want = as_array(want, "the reference")
    if got.shape != want.shape:
        if got.size == 1 and want.size == 1:
            got = got.reshape(want.shape)
        else:
            return wrong(_shape_reason(got, want, what, rtol, atol))
    if _close(got, want, rtol, atol):
        return ok()
    if np.any(want != 0) and _close(got, -want, rtol, atol):
        return wrong(f"{what} has the wrong sign: every entry is the negative of what it should be. "
                     "Check the sign of each local derivative (e.g. d/dx cos x = -sin x, d/dx (a - x) = -1).")
    for reason, value in wrongs:
        value = as_array(value, "a typical wrong answer")
        if value.shape == want.shape and _close(got, value, rtol, atol) and not _close(value, want, rtol, atol):
            return wrong(f"{what} is not right: {reason}")
    c = _ratio(got, want) if got.size > 1 else None
    if c is not None and not np.isclose(c, 1.0) and c != 0:        # (the factor itself is not shown: it would give the answer away)
        return wrong(f"every entry of {what} is off by the same factor: a constant factor of the chain rule (such as "
                     "the 2 of a square or the 1/N of a mean) is missing or counted twice.")
    if got.size == 1:
        return wrong(f"{what}, {got.item():.6g}, is not right.")
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return wrong(f"{what} is not right in {int(bad.sum())} of {bad.size} entries (the first one at index "
                 f"{first}, where you have {got[first]:.6g}).")


def compare_choice(got, want, what, options=None):
    """An exact answer (a word, a count, a bool, a name)."""
    if missing(got):
        return wrong(f"{what} is not filled in yet: replace the `...` with your answer and run the cell again.")
    norm = (lambda v: v.strip().lower()) if isinstance(want, str) else (lambda v: v)
    if isinstance(want, str) and not isinstance(got, str):
        return wrong(f"{what} should be a string" + (f", one of {options}" if options else "") + f", got {got!r}.")
    if options and norm(got) not in [norm(o) for o in options]:
        return wrong(f"{what} should be one of {options}, got {got!r}.")
    if isinstance(want, bool) and not isinstance(got, (bool, np.bool_)):
        return wrong(f"{what} should be True or False, got {got!r}.")
    if norm(got) == norm(want):
        return ok()
    return wrong(f"{what}, {got!r}, is not right.")
