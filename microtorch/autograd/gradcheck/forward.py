"""Forward-mode checks: Jacobians from jvp (slow and fast mode), undefined tangents, and jvp
under vmap."""

import numpy as np

from .. import extension
from ..._tensor import Tensor
from .report import FAILED_BATCHED_GRAD_MSG_FWD_AD, FAST_FAIL_SLOW_OK_MSG, _Failure, _Result, _batched_msg, _notallclose_msg, _t
from .util import _allclose_mask, _as_tuple, _is_float_or_complex, _make_pair
from .numerical import _FAST_SEED, _numerical, _numerical_jvp, _unit


# ---- forward mode and vmap ------------------------------------------------------------------------
def _forward_ad():
    from .. import forward_ad
    return forward_ad


def _vmap(option):
    return extension.transforms().vmap


def _tangent_of(fwAD, out):
    unpacked = fwAD.unpack_dual(out)
    return unpacked[0], unpacked[1]


def _jvp_outputs(call, fwAD, j, tangent):
    """Run func with diff input j dual (tangent) and the other diff inputs dual with zeros;
    the tangents of the float/complex outputs (None where there is none)."""
    from ..._creation import zeros_like
    with fwAD.dual_level():
        args = list(call.inputs)
        for k, (pos, t) in enumerate(call.diff):
            tan = tangent if k == j else zeros_like(t.detach())
            args[pos] = fwAD.make_dual(t.detach(), tan)
        outs = _as_tuple(call.func(*args))
        result = []
        for o in outs:
            if not _is_float_or_complex(o):
                continue
            primal, tan = _tangent_of(fwAD, o)
            if call.check_grad_dtypes and tan is not None and primal.is_complex() != tan.is_complex():
                raise _Failure("Forward AD gradient has dtype mismatch.", "grad_dtypes")
            result.append(None if tan is None else np.array(tan._data, copy=True).reshape(-1))
        return result


def _slow_forward(call, res, num=None):
    """Forward-mode Jacobians (one jvp per input element) against the numerical ones."""
    fwAD = _forward_ad()
    fo = [o for o in call.run()]
    positions = [k for k, o in enumerate(fo) if _is_float_or_complex(o)]
    diff_positions = [k for k in positions if fo[k].requires_grad]
    if num is None or len(num) != len(diff_positions):
        num = _numerical(call, diff_positions, call.eps)
    any_complex_in = any(t.is_complex() for t in call.diff_tensors)
    # analytical columns: for each diff input j and direction (1 or 1j), per output
    ana = []
    for j, t in enumerate(call.diff_tensors):
        dirs = {}
        for d in ((1, 1j) if t.is_complex() else (1,)):
            cols = None
            for k in range(t.numel()):
                tan = np.zeros(t._data.shape, t.dtype.np)
                tan.reshape(-1)[k] = d
                outs = _jvp_outputs(call, fwAD, j, Tensor._make(tan))
                outs = [outs[positions.index(p)] for p in diff_positions]
                if cols is None:
                    cols = [np.zeros((fo[p].numel(), t.numel()), dtype=np.result_type(fo[p].dtype.np, np.float32))
                            for p in diff_positions]
                for m, c in enumerate(outs):
                    if c is not None:
                        cols[m] = cols[m].astype(np.result_type(cols[m], c), copy=False)
                        cols[m][:, k] = c
            if cols is None:
                cols = [np.zeros((fo[p].numel(), 0)) for p in diff_positions]
            dirs[d] = cols
        ana.append(dirs)
    # torch perturbs the imaginary parts of complex inputs first, then the real parts; a real
    # input is the same in both passes, so it can only fail in the first
    passes = ("imaginary", "real") if any_complex_in else ("real",)
    for which in passes:
        for i in range(len(diff_positions)):
            for j, t in enumerate(call.diff_tensors):
                if not t.is_complex() and which != passes[0]:
                    continue
                slot = 1 if t.is_complex() and which == "imaginary" else 0
                a, n = ana[j][(1, 1j)[slot]][i], num[i][j][slot]
                if _allclose_mask(a, n, call.rtol, call.atol).any():
                    res.fail(_Failure(_notallclose_msg(a.T, n.T, i, j, which if t.is_complex() else None,
                                                       forward=True), "forward_ad"))
    # the pairs: for a complex input, its real and imaginary parts as the perturbed direction
    for i, p in enumerate(diff_positions):
        for j, t in enumerate(call.diff_tensors):
            kinds = [("real_part", 0), ("imag_part", 1)] if t.is_complex() else [("real", 0)]
            for kind, slot in kinds:
                res.pairs.append(_make_pair(i, j, num[i][j][slot], ana[j][(1, 1j)[slot]][i], call.rtol,
                                            call.atol, fo[p], t, kind, mode="forward", out_arg=p,
                                            in_arg=call.diff[j][0]))
    res.ok("forward_ad")
    if call.check_grad_dtypes:
        res.ok("grad_dtypes")


def _fast_forward(call, res):
    fwAD = _forward_ad()
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), t.dtype.np) for t in call.diff_tensors]
    fo = call.run()
    positions = [k for k, o in enumerate(fo) if _is_float_or_complex(o)]
    diff_positions = [k for k in positions if fo[k].requires_grad]
    ok = True
    for j, u in enumerate(all_u):
        n_all = _numerical_jvp(call, j, u, call.eps)
        a_all = _jvp_outputs(call, fwAD, j, Tensor._make(u.reshape(call.diff_tensors[j]._data.shape)))
        for i, p in enumerate(diff_positions):
            n = n_all[p]
            a = a_all[positions.index(p)]
            a = np.zeros_like(n) if a is None else a
            tol = call.atol * float(np.sum(u))
            if _allclose_mask(a, n, call.rtol, tol).any():
                ok = False
                # report the slow mode's Jacobians for this pair, as torch does
                scratch = _Result()
                _slow_forward(call, scratch)
                res.pairs.extend(scratch.pairs)
                slow = next(q for q in scratch.pairs if (q.output_index, q.input_index) == (i, j))
                msg = (_notallclose_msg(a, n, i, j, forward=True) +
                       "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
                       "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
                       "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
                       f"Numerical:\n {_t(slow.numerical.T)}\nAnalytical:\n{_t(slow.analytical.T)}\n\n"
                       f"The max per-element difference (slow mode) is: {slow.max_abs_error}.\n")
                if slow.passed:
                    msg += FAST_FAIL_SLOW_OK_MSG
                res.fail(_Failure(msg, "forward_ad"))
                return
    res.checks["forward_ad"] = ok


def _undefined_forward(call, res):
    """A dual input with a zero tangent and a plain input must give the same output tangents."""
    fwAD = _forward_ad()
    from ..._creation import zeros_like
    rng = np.random.default_rng(_FAST_SEED)
    all_u = [_unit(rng, t.numel(), np.float64).astype(t.dtype.np) for t in call.diff_tensors]
    with fwAD.dual_level():
        duals = list(call.inputs)
        for (pos, t), u in zip(call.diff, all_u):
            duals[pos] = fwAD.make_dual(t.detach(), Tensor._make(u.reshape(t._data.shape)))
        for pos, t in call.diff:
            keep = duals[pos]
            duals[pos] = fwAD.make_dual(t.detach(), zeros_like(t.detach()))
            outs1 = [o for o in _as_tuple(call.func(*duals)) if _is_float_or_complex(o)]
            duals[pos] = t.detach()
            outs2 = [o for o in _as_tuple(call.func(*duals)) if _is_float_or_complex(o)]
            duals[pos] = keep
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                r1, r2 = _tangent_of(fwAD, o1)[1], _tangent_of(fwAD, o2)[1]
                if r1 is not None and r2 is not None and \
                        _allclose_mask(r1._data, r2._data, 1e-5, 1e-8).any():
                    res.fail(_Failure(f"Mismatch in tangent values for output with index: {index_o} when input: "
                                      f"{t!r} has an undefined tangent value.  Got: {r1!r} but expected: {r2!r}",
                                      "undefined_grad"))
                    return
    res.ok("undefined_grad")


def _batched_forward(call, res):
    fwAD = _forward_ad()
    vmap = _vmap("check_batched_forward_grad")
    from ...ops.shape import stack
    rng = np.random.default_rng(_FAST_SEED + 1)
    for j, (pos, t) in enumerate(call.diff):
        def jvp(tangent, pos=pos, t=t):
            with fwAD.dual_level():
                args = [a.detach() if isinstance(a, Tensor) else a for a in call.inputs]
                args[pos] = fwAD.make_dual(t.detach(), tangent)
                outs = []
                for o in _as_tuple(call.func(*args)):
                    if o is None:
                        continue
                    primal, tan = _tangent_of(fwAD, o)
                    outs.append(tan if tan is not None else
                                Tensor._make(np.zeros(primal._data.shape, primal.dtype.np)))
                return tuple(outs)
        tangents = [Tensor._make(rng.standard_normal(t._data.shape).astype(t.dtype.np)) for _ in range(2)]
        expected = [jvp(tn) for tn in tangents]
        expected = [stack(list(shards)) for shards in zip(*expected)]
        try:
            result = vmap(jvp)(stack(tangents))
        except Exception as ex:  # noqa: BLE001 - torch catches RuntimeError; microtorch's vmap may raise others
            res.fail(_Failure(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}",
                              "batched_forward_grad"))
            return
        for k, (r, e) in enumerate(zip(_as_tuple(result), expected)):
            if _allclose_mask(r._data, e._data, 1e-5, 1e-8).any():
                res.fail(_Failure(_batched_msg(k, k, r, e, forward=True), "batched_forward_grad"))
                return
    res.ok("batched_forward_grad")
