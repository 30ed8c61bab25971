"""Compare a microtorch Trace with torch's and name each difference by category.

A category is `<what>:<op>` for per-step differences (`name:einsum`, `value:var`) and `<what>` for
the gradient phase (`grad`, `grad2`, `backward`, `grad_rg`). KNOWN lists the documented differences
(docs/testing.md, "Known differences"): a difference they describe is counted apart, never hidden.
"""
import numpy as np


def _known_nan_sign(prog, step, torch_rec, mt_rec, seen):
    """A NaN's sign bit, which printing and comparisons never show, differs between torch's kernels and numpy's (log
    of a negative number is +NaN in torch, -NaN in numpy on x86); copysign(x, y) shows it. Accepted only for a
    copysign whose values differ exactly where its second operand is NaN on both sides, with opposite sign bits."""
    if not step.expr.startswith("L.copysign(") or len(step.args) != 2 or step.args[1] not in seen:
        return False
    ty, my = seen[step.args[1]]
    t, m = torch_rec.values, mt_rec.values
    if ty is None or my is None or t.shape != m.shape:
        return False
    ty, my = np.broadcast_to(ty, t.shape), np.broadcast_to(my, t.shape)
    flipped = np.isnan(ty) & np.isnan(my) & (np.signbit(ty) != np.signbit(my))
    same = (t == m) | (np.isnan(t) & np.isnan(m))
    return bool(flipped.any()) and bool(np.all(same | flipped & (t == -m)))


def _known_torch_median_overlap(prog, step, torch_rec, mt_rec, seen):
    """torch's median and nanmedian of a tensor expanded from fewer elements (a stride of 0) read memory they never
    wrote: median([1., 1., 1.]) of `tensor([1.]).expand(3)` gives 6.9e-310 at index 2, where its contiguous copy
    gives 1. microtorch gives the median; accepted only for a median step whose input an expand step made."""
    if step.op not in ("median", "nanmedian") or not step.args:
        return False
    source = next((s for s in prog.steps if s.out == step.args[0]), None)
    return source is not None and source.op == "expand"


# (category prefix, predicate(step, torch record, microtorch record)) -> accepted
KNOWN = {
    "rounding": ("numeric", None),  # decided by rerunning torch, in check.py (tests/fuzz/noise.py)
    "torch-median-overlap": ("value", _known_torch_median_overlap),  # and every value computed from it
    "nan-sign": ("value", _known_nan_sign),  # and every value computed from it
}


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return False
    if a.dtype.kind in "biu":
        return np.array_equal(a, b)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    if not np.array_equal(np.isinf(a) & (a > 0), np.isinf(b) & (b > 0)):
        return False
    if not np.array_equal(np.isinf(a) & (a < 0), np.isinf(b) & (b < 0)):
        return False
    fa, fb = np.nan_to_num(a, nan=0, posinf=0, neginf=0), np.nan_to_num(b, nan=0, posinf=0, neginf=0)
    scale = max(1.0, float(np.max(np.abs(fa), initial=0)))
    return np.allclose(fa, fb, rtol=1e-6, atol=1e-9 * scale)


def _all_close(xs, ys):
    if xs is None or ys is None:
        return xs is None and ys is None
    return len(xs) == len(ys) and all(close(a, b) for a, b in zip(xs, ys))


def compare(prog, tt, mt):
    """A list of (category, detail) for every difference; the known ones as ('known:<key>', ...)."""
    out, tainted = [], {}  # tainted: the names whose values a known difference of values changed, and its key
    seen = {leaf.name: (leaf.values, leaf.values) for leaf in prog.leaves}  # name -> (torch's, microtorch's)
    for i, (st, a, b) in enumerate(zip(prog.steps, tt.steps, mt.steps)):
        seen.update({k: (v, v) for k, v in st.arrays.items()})
        out += _compare_step(prog, i, st, a, b, tainted, seen)
        seen[st.out] = (a.values, b.values)
        if st.inplace and st.args:
            seen[st.args[0]] = seen[st.out]
    if tt.error != mt.error:
        if tt.error is None:
            i = mt.error[0]
            out.append((f"raises:{prog.steps[i].op}", f"step {i}: microtorch raised {mt.error[1]}, torch did not"))
        elif mt.error is None or mt.error[0] != tt.error[0]:
            i = tt.error[0]
            out.append((f"no_raise:{prog.steps[i].op}", f"step {i}: torch raised {tt.error[1]}, microtorch "
                        + ("did not" if mt.error is None else f"raised at step {mt.error[0]}")))
        else:
            i = tt.error[0]
            out.append((f"exc_type:{prog.steps[i].op}", f"step {i}: torch {tt.error[1]}, microtorch {mt.error[1]}"))
    if real(out) or tt.error is not None or tainted:  # (a known difference of names leaves the values and
        return out                                      # gradients to compare; one of values, none)
    for k, v in tt.final.items():
        if not close(v, mt.final.get(k)):
            out.append(("final_value", f"{k} after all steps"))
            break
    return out + _compare_grads(prog, tt, mt)


def _compare_step(prog, i, st, a, b, tainted, seen):
    out = []
    if (a.dtype, a.shape) != (b.dtype, b.shape):
        return [(f"shape:{st.op}", f"step {i}: torch {a.dtype}{a.shape}, microtorch {b.dtype}{b.shape}")]
    inherited = next((tainted[n] for n in st.args if n in tainted), None)
    if inherited:
        tainted[st.out] = inherited
    if not close(a.values, b.values):
        known = [k for k, (what, pred) in KNOWN.items() if what == "value" and pred(prog, st, a, b, seen)]
        key = known[0] if known else inherited
        if key:
            tainted[st.out] = key
        out.append((f"known:{key}" if key else f"value:{st.op}", f"step {i}: forward values differ"))
    if (a.requires_grad, a.is_leaf) != (b.requires_grad, b.is_leaf):
        out.append((f"flags:{st.op}", f"step {i}: requires_grad/is_leaf torch {a.requires_grad}/{a.is_leaf}, "
                    f"microtorch {b.requires_grad}/{b.is_leaf}"))
    if (a.grad_fn, a.nodes) != (b.grad_fn, b.nodes):
        known = [k for k, (what, pred) in KNOWN.items() if what == "name" and pred(prog, st, a, b)]
        cat = f"known:{known[0]}" if known else f"name:{st.op}"
        out.append((cat, f"step {i}: grad_fn torch {a.grad_fn} {list(a.nodes)}, microtorch {b.grad_fn} "
                    f"{list(b.nodes)}"))
    elif a.edges != b.edges:
        out.append((f"edges:{st.op}", f"step {i}: next_functions of {list(a.nodes)}: torch {list(a.edges)}, "
                    f"microtorch {list(b.edges)}"))
    return out


def _compare_grads(prog, tt, mt):
    out = []
    if tt.grad_errors != mt.grad_errors:
        out.append(("grad_error", f"torch {tt.grad_errors}, microtorch {mt.grad_errors}"))
    if not _all_close(tt.grads, mt.grads):
        out.append(("grad", "autograd.grad(create_graph=True) values differ"))
    elif tt.grads_rg != mt.grads_rg:
        out.append(("grad_rg", f"requires_grad of the grads: torch {tt.grads_rg}, microtorch {mt.grads_rg}"))
    elif not _all_close(tt.grads2, mt.grads2):
        out.append(("grad2", "second-order grads differ"))
    if not _all_close(tt.backward, mt.backward):
        out.append(("backward", ".grad after backward() differs"))
    return out


def real(diffs):
    """The differences that are not in the documented table."""
    return [d for d in diffs if not d[0].startswith("known:")]
