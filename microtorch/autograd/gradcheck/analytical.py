"""Analytical Jacobians from backward (one backward per output element in slow mode, one
vector-Jacobian product in fast mode), compared with the numerical ones."""

import numpy as np

from .report import FAILED_NONDET_MSG, FAST_FAIL_SLOW_OK_MSG, FastModeResult, FastPair, _Failure, _Result, _notallclose_msg, _t
from .util import _allclose_mask, _derived_wirtinger, _is_float_or_complex, _make_pair
from .numerical import _FAST_SEED, _numerical, _numerical_jvp, _unit


def _analytical(call, output, scale=1):
    """One backward per output element: row r of J[j] is the gradient wrt diff input j of
    output.flat[r] (times `scale`, 1j for the imaginary part of a complex output).

    Returns (jacobians, sizes_ok, types_ok)."""
    numel = output.numel()
    dt = output.dtype.np
    jac = [np.zeros((numel, t.numel()), dtype=t.dtype.np) for t in call.diff_tensors]
    sizes_ok = types_ok = True
    for r in range(numel):
        go = np.zeros(output._data.shape, dtype=dt)
        go.reshape(-1)[r] = scale
        grads = call.vjp(output, go)
        for j, (g, t) in enumerate(zip(grads, call.diff_tensors)):
            if g is None:
                continue
            if g.shape != t.shape:
                sizes_ok = False
                continue
            if g.dtype is not t.dtype:
                types_ok = False
            jac[j][r, :] = g._data.reshape(-1)
    return jac, sizes_ok, types_ok


def _reentrant(j1, j2, tol):
    for a, b in zip(j1, j2):
        if a.size and np.max(np.abs(a - b)) > tol:
            return False
    return True


def _attribute_failures(sizes_ok, types_ok, reentrant, call):
    """torch's _check_analytical_jacobian_attributes verdicts, in its order."""
    fails = []
    if not types_ok and call.check_grad_dtypes:
        fails.append(_Failure("Gradient has dtype mismatch", "grad_dtypes"))
    if not sizes_ok:
        fails.append(_Failure("Analytical gradient has incorrect size", "backward_ad"))
    if not reentrant:
        fails.append(_Failure(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {call.nondet_tol}." + FAILED_NONDET_MSG, "nondet"))
    return fails


def _analytical_checked(call, output, scale):
    """The analytical Jacobian, computed twice to check for nondeterminism (reentrancy)."""
    jac1, sizes_ok, types_ok = _analytical(call, output, scale)
    jac2, _, _ = _analytical(call, output, scale)
    return jac1, _attribute_failures(sizes_ok, types_ok, _reentrant(jac1, jac2, call.nondet_tol), call)


# ---- slow mode, reverse ------------------------------------------------------------------------
def _slow_backward(call, outputs, out_positions, res, build_pairs=True):
    """Every pair's Jacobians; failures in the order torch raises them."""
    num = _numerical(call, out_positions, call.eps)
    any_complex_out = any(o.is_complex() for o in outputs)
    # analytical[i] = {"real": jacobians} or {"real_part": ..., "imag_part": ...}, one per diff input
    analytical, attr_fails = [], []
    for o in outputs:
        if o.is_complex():
            ji, fi = _analytical_checked(call, o, 1j)
            jr, fr = _analytical_checked(call, o, 1)
            analytical.append({"imag_part": ji, "real_part": jr})
            attr_fails.append({"imag_part": fi, "real_part": fr})
        else:
            jr, fr = _analytical_checked(call, o, 1)
            analytical.append({"real": jr})
            attr_fails.append({"real": fr})

    def numerical_part(i, j, part):
        jx, jy = num[i][j]
        if part == "real":
            return jx if jy is None else jx + 1j * jy
        f = np.real if part == "real_part" else np.imag
        return f(jx) if jy is None else f(jx) + 1j * f(jy)

    # torch checks the imaginary parts first (over all outputs), then the real parts; a real
    # output is the same in both passes, so it can only fail in the first
    passes = ("imag_part", "real_part") if any_complex_out else (None,)
    for which in passes:
        for i, o in enumerate(outputs):
            if not o.is_complex() and which == "real_part":
                continue
            part = "real" if not o.is_complex() else which
            for f in attr_fails[i][part]:
                res.fail(f)
            for j, t in enumerate(call.diff_tensors):
                a = analytical[i][part][j]
                n = numerical_part(i, j, part)
                if _allclose_mask(a, n, call.rtol, call.atol).any():
                    part_name = {"imag_part": "imaginary", "real_part": "real"}.get(which) if o.is_complex() else None
                    res.fail(_Failure(_notallclose_msg(a.T, n.T, i, j, part_name), "backward_ad"))
    res.ok_backward(call)
    if build_pairs:
        res.pairs.extend(_backward_pairs(call, outputs, out_positions, num, analytical, numerical_part))
    return num, analytical


def _backward_pairs(call, outputs, out_positions, num, analytical, numerical_part):
    pairs = []
    for i, o in enumerate(outputs):
        for j, (in_arg, t) in enumerate(call.diff):
            common = dict(out_t=o, in_t=t, out_arg=out_positions[i], in_arg=in_arg)
            if not o.is_complex():
                a, n = analytical[i]["real"][j], numerical_part(i, j, "real")
                kind = "conj_wirtinger" if t.is_complex() else "real"
                pairs.append(_make_pair(i, j, n, a, call.rtol, call.atol, kind=kind, **common))
                if t.is_complex():
                    pairs.append(_make_pair(i, j, n.conj(), a.conj(), call.rtol, call.atol, kind="wirtinger",
                                            checked=False, **common))
                continue
            parts = {}
            for part in ("real_part", "imag_part"):
                a, n = analytical[i][part][j], numerical_part(i, j, part)
                parts[part] = (n, a)
                pairs.append(_make_pair(i, j, n, a, call.rtol, call.atol, kind=part, **common))
            if t.is_complex():
                wn, cn = _derived_wirtinger(parts["real_part"][0], parts["imag_part"][0])
                wa, ca = _derived_wirtinger(parts["real_part"][1], parts["imag_part"][1])
                pairs.append(_make_pair(i, j, wn, wa, call.rtol, call.atol, kind="wirtinger", checked=False,
                                        **common))
                pairs.append(_make_pair(i, j, cn, ca, call.rtol, call.atol, kind="conj_wirtinger",
                                        checked=False, **common))
    return pairs


def _no_differentiable_outputs(call, func_out, res, fast_u=None):
    """No output requires grad: the numerical gradient must then be zero."""
    positions = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]
    if fast_u is None:
        num = _numerical(call, positions, call.eps)
        bad = any(np.any(m != 0) for row in num for jx_jy in row for m in jx_jy if m is not None)
    else:
        bad = False
        for j, u in enumerate(fast_u):
            for jvp in _numerical_jvp(call, j, u, call.eps):
                if jvp is not None and jvp.size and np.max(np.abs(jvp)) > call.nondet_tol:
                    bad = True
    if bad:
        res.fail(_Failure("Numerical gradient for function expected to be zero", "backward_ad"))
    else:
        res.ok("backward_ad")


def _fast_backward(call, func_out, outputs, out_positions, res):
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), t.dtype.np) for t in call.diff_tensors]
    all_v = [_unit(rng, o.numel(), o.dtype.np) for o in outputs]
    res.fast = FastModeResult(all_u, all_v)
    if not outputs:
        _no_differentiable_outputs(call, func_out, res, fast_u=all_u)
        return
    # numerical v^T (J u), one pair of evaluations per input
    numerical = []
    for j, u in enumerate(all_u):
        jvps = _numerical_jvp(call, j, u, call.eps)
        numerical.append([np.sum(v * jvps[pos]) for v, pos in zip(all_v, out_positions)])
    # analytical (v^T J) u: one backward per output, twice (reentrancy); torch checks the
    # attributes of every output before comparing any pair
    analytical = []
    for o, v in zip(outputs, all_v):
        runs = [call.vjp(o, v.reshape(o._data.shape)) for _ in range(2)]
        flat = [[np.zeros(t.numel(), t.dtype.np) if g is None else g._data.reshape(-1).copy()
                 for g, t in zip(grads, call.diff_tensors)] for grads in runs]
        sizes_ok = all(g is None or g.shape == t.shape for g, t in zip(runs[0], call.diff_tensors))
        types_ok = all(g is None or g.dtype is t.dtype for g, t in zip(runs[0], call.diff_tensors))
        for f in _attribute_failures(sizes_ok, types_ok, _reentrant(flat[0], flat[1], call.nondet_tol), call):
            res.fail(f)
        analytical.append([np.dot(x, u) if x.shape == u.shape else np.nan for x, u in zip(flat[0], all_u)])
    first_bad = None
    for j, u in enumerate(all_u):          # torch's order: inputs outer, outputs inner
        for i, v in enumerate(all_v):
            a, n = analytical[i][j], numerical[j][i]
            tol = call.atol * float(np.sum(u)) * float(np.sum(v))
            passed = not bool(_allclose_mask(np.asarray(a), np.asarray(n), call.rtol, tol))
            res.fast.pairs.append(FastPair(i, j, np.asarray(n).item(), np.asarray(a).item(), tol, passed))
            if not passed and first_bad is None:
                first_bad = (i, j, a, n)
    if first_bad is None:
        res.ok_backward(call)
        return
    # on failure, report what the slow mode finds (all pairs; the message names the first)
    i, j, a, n = first_bad
    scratch = _Result()
    _slow_backward(call, outputs, out_positions, scratch)
    res.pairs.extend(scratch.pairs)
    slow = next(p for p in scratch.pairs if (p.output_index, p.input_index) == (i, j))
    slow_allclose = slow.passed
    msg = (_notallclose_msg(np.asarray(a), np.asarray(n), i, j) +
           "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_t(slow.numerical.T)}\nAnalytical:\n{_t(slow.analytical.T)}\n\n"
           f"The max per-element difference (slow mode) is: {slow.max_abs_error}.\n")
    if slow_allclose:
        msg += FAST_FAIL_SLOW_OK_MSG
    res.fail(_Failure(msg, "backward_ad"))
    res.ok_backward(call)
