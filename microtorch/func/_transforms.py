"""grad, vjp, jvp, jacrev, jacfwd, hessian: derivatives as functions (torch.func).

Reverse mode (grad, vjp, jacrev) calls the function on fresh inputs that require grad and runs
the backward engine; forward mode (jvp, jacfwd) calls it on dual tensors. A Jacobian pushes a
whole basis of vectors through one vmapped vjp (jacrev, a row per output element) or jvp
(jacfwd, a column per input element). Each transform returns an ordinary function, so they
compose: grad(grad(f)), vmap(grad(f)), jacfwd(jacrev(f)).

Inside vmap, reverse mode works on the batch underneath (`to_physical`): each example's input
is its own slice of one batched leaf, so a single backward pass gives every example's gradient.
"""
import functools
import weakref

import numpy as np

from .._tensor import Tensor
from ..autograd import engine, extension, forward_ad
from ..autograd.node import AccumulateGrad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..ops.shape import Alias, View, _share
from . import _batching, _pytree
from ._batching import active_levels, from_physical, to_physical
from ._vmap import vmap


def _check_argnums(argnums, nargs, op):
    """argnums as a tuple of non-negative positions; torch's RuntimeErrors, each naming the transform op."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
        if not argnums:
            raise RuntimeError(f"{op}: argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"{op}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{op}: Got argnum={a}, but only {nargs} positional inputs")
    nums = tuple(a % nargs for a in nums)
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"{op}: argnums elements must be unique, got {argnums}")
    return nums


# ---- reverse mode ----------------------------------------------------------------------------------
class _Lift(View):
    """x as a transform's own input, on x's history: a node of its own, so that the transform's gradient is told
    apart from an enclosing one's, which hands gradients back untouched. (torch wraps x for the transform's level
    instead, which adds no op: grad(grad(f))(x) ends in the op that computed it, MulBackward0, not in a reshape of
    it.) Tangents go through View's rule."""

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _fresh_input(x, levels, outer):
    """This transform's own input for x: a new node in the graph, so that its gradient is told
    apart from an enclosing transform's, carrying x's tangents and, when an enclosing grad is
    tracking x, x's history. Returns (the batch-level leaf, the input f sees)."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected the inputs to differentiate to be Tensors (or pytrees of Tensors), got {type(x)}")
    p = to_physical(x, levels)
    if outer and p._requires_grad:
        leaf = _Lift.apply(p, tuple(p.shape))
    else:
        leaf = Tensor._make(p._data)
        tangents = {lv: t for lv, t in (p._fw_grads or {}).items() if lv in forward_ad._levels}
        if tangents:
            leaf._fw_grads = tangents
        leaf.requires_grad = True  # (not requires_grad_(), which the function of an enclosing transform may not call)
    return leaf, from_physical(leaf, levels)


# The leaves of transforms whose function has returned (by id, while they live): no enclosing
# transform differentiates them, so a graph that reaches only these and a transform's own leaves
# is cut from the result, as torch unwraps a transform's level.
_finished = weakref.WeakValueDictionary()


def _retire(leaves):
    _finished.update((id(t), t) for t in leaves)


# The leaves requiring grad that the function of each running grad/vjp made (innermost last): torch puts them on
# the transform's level, so they count as the transform's own leaves.
_making = []


def made_leaf(t):
    """A factory (tensor(..., requires_grad=True), ones(...)) made the leaf t (through autograd/extension.py)."""
    if _making:
        _making[-1].append(t)


_REQUIRES_GRAD_INSIDE = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* APIs) inside "
    "of a function being transformed by a functorch transform. This is unsupported, please attempt to use the "
    "functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function "
    "being transformed instead.")


def requires_grad_called():
    """Tensor.requires_grad_() asks this (through autograd/extension.py): torch refuses it while the function of a
    grad, vjp, jvp or vmap runs (its transforms decide which tensors are differentiated); the attribute
    `t.requires_grad = True` and factories' requires_grad=True stay allowed, as in torch."""
    if _making or _batching._levels:
        raise RuntimeError(_REQUIRES_GRAD_INSIDE)


def _call_making(func, args, kwargs):
    """func(*args, **kwargs) and the leaves requiring grad it made. (While it runs, every op is shown to
    _python_function_hook.)"""
    _making.append([])
    extension.intercept(_python_function_hook, first=True)  # (before forward AD: torch checks this first)
    try:
        return func(*args, **kwargs), _making[-1]
    finally:
        _making.pop()
        if not _making:
            extension.stop_intercepting(_python_function_hook)


def _python_function_hook(cls, args, kwargs):
    """An autograd.Function written in Python must have a setup_context inside grad, vjp and jvp, as in torch."""
    _batching.check_python_function(cls, False)
    return NotImplemented


def _reaches_outside(outs, leaves):
    """Does the graph of outs lead to a tensor an enclosing transform or the caller differentiates
    (a leaf that is neither this transform's own nor a finished transform's)? Only then do the
    results keep their history."""
    own = {id(t) for t in leaves}

    def outside(leaf):
        return id(leaf) not in own and _finished.get(id(leaf)) is not leaf

    if any(o._requires_grad and o.grad_fn is None and outside(o) for o in outs):  # (f returned such a leaf)
        return True
    seen, stack = set(), [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            if outside(node.variable):
                return True
            continue
        stack.extend(n for n, _ in node.next_functions)
    return False


def _cut_inner(results, levels, own):
    """Each result keeps its history only where it leads outside the transform (to a tensor the caller or an
    enclosing transform differentiates): grad(lambda a: (a * w).sum())(x) is w, cut from a w made inside f."""
    return [r if _reaches_outside([to_physical(r, levels)], own) else _no_history(r, levels) for r in results]


def _gradients(outs, cotangents, leaves, create_graph):
    """d(outs . cotangents)/d leaves, with zeros where an output does not depend on a leaf."""
    pairs = [(o, c) for o, c in zip(outs, cotangents) if o._requires_grad]
    grads = [None] * len(leaves)
    if pairs:
        with enable_grad():
            grads = list(engine.grad([o for o, _ in pairs], leaves, [c for _, c in pairs], retain_graph=True,
                                     create_graph=create_graph, allow_unused=True))
    return [g if g is not None else Tensor._make(np.zeros(p._data.shape, p._data.dtype))
            for g, p in zip(grads, leaves)]


def _no_history(t, levels):
    """t cut from the graph, and its tangents too (keeping their values), as the results of a
    transform are when no enclosing transform is differentiating."""
    if not isinstance(t, Tensor):
        return t
    p = to_physical(t, levels)
    tangents = p._fw_grads or {}
    if not p._requires_grad and not any(g._requires_grad for g in tangents.values()):
        return t
    out = Tensor._make(p._data)
    if tangents:
        out._fw_grads = {lv: _no_history(g, ()) for lv, g in tangents.items()}
    return from_physical(out, levels)


def grad_and_value(func, argnums=0, has_aux=False):
    """grad_and_value(f)(*args) = (the gradient of f at args w.r.t. args[argnums], f(*args))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "grad_and_value")
        levels, outer = active_levels(), is_grad_enabled()
        with enable_grad():  # a transform: an enclosing no_grad does not apply to f
            args, leaves, specs = list(args), [], []
            passed = {id(t): (t, t) for t in _pytree.flatten(args)[0] if isinstance(t, Tensor)}
            for i in nums:
                xs, spec = _pytree.flatten(args[i])
                made = [_fresh_input(x, levels, outer) for x in xs]
                leaves += [m[0] for m in made]
                passed.update((id(m[1]), (m[1], x)) for m, x in zip(made, xs))
                args[i] = _pytree.unflatten([m[1] for m in made], spec)
                specs.append((spec, len(xs)))
            output, made = _call_making(func, args, kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            out = to_physical(output, levels)
            tracked = outer and _reaches_outside([out], leaves + made)
            seed = Tensor._make(np.ones(out._data.shape, out._data.dtype))
            # backward in grad mode, as torch's grad (create_graph=True): ops whose formula depends on it
            # (det at a singular matrix: the adjugate, not 0) give torch's values
            grads = [from_physical(g, levels) for g in _gradients([out], [seed], leaves, True)]
            grads = _cut_inner(grads, levels, leaves + made) if tracked else [_no_history(g, levels) for g in grads]
            _retire(leaves + made)
        per_arg, k = [], 0
        for spec, n in specs:
            per_arg.append(_pytree.unflatten(grads[k:k + n], spec))
            k += n
        result = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        def unwrap(t):  # an input f returns comes back as the tensor the caller passed, as in torch
            seen, original = passed.get(id(t), (None, None))
            if seen is t:
                return original
            return t if tracked else _no_history(t, levels)
        output = unwrap(output)
        flat, spec = _pytree.flatten(aux)
        aux = _pytree.unflatten([unwrap(a) for a in flat], spec)
        return result, ((output, aux) if has_aux else output)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(f)(*args): the gradient of the scalar f(*args) w.r.t. args[argnums] (a tuple of
    gradients for a tuple of argnums; (gradient, aux) with has_aux). Nests: grad(grad(f))."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _check_vjp_outputs(outs, head):
    """torch's RuntimeErrors for what f returns to vjp (jacrev, hessian): tensors only, of a floating dtype."""
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{head}: Expected f to be a function that has only Tensors or a tuple of "
                               f"Tensors as output, got {type(o)}")
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(f"{head}: All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}; make f return floats, e.g. out.float()")


def vjp(func, *primals, has_aux=False):
    """(f(*primals), vjp_fn): vjp_fn(cotangents) is the vector-Jacobian product, one gradient
    per primal. It can be called many times (jacrev vmaps it over a basis)."""
    return _vjp(func, primals, has_aux, "vjp(f, *primals)")


def _vjp(func, primals, has_aux, head):
    """vjp; head: what its errors say first (the call, or the transform that called vjp: jacrev, hessian)"""
    levels, outer = active_levels(), is_grad_enabled()
    xs, spec = _pytree.flatten(primals)
    for x in xs:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{head}: Expected primals to only contain Tensors, got {type(x)}")
    with enable_grad():
        made = [_fresh_input(x, levels, outer) for x in xs]
        leaves = [m[0] for m in made]
        output, inner = _call_making(func, (*_pytree.unflatten([m[1] for m in made], spec),), {})
    _retire(leaves + inner)
    own = leaves + inner
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(f"{head}: output of function f should be a tuple: (output, aux) if has_aux is True")
        output, aux = output
    out_leaves, out_spec = _pytree.flatten(output)
    _check_vjp_outputs(out_leaves, head)
    outs = [to_physical(o, levels) for o in out_leaves]
    tracked = outer and _reaches_outside(outs, own)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cts, ct_spec = _pytree.flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        phys = []
        for i, (c, o) in enumerate(zip(cts, out_leaves)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected the cotangents to be Tensors, got {type(c)}")
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] "
                                   f"has a shape of {o.shape}.")
            phys.append(to_physical(c, levels))
        if create_graph is None:  # torch's default: backward in grad mode when grad mode is on
            create_graph = is_grad_enabled()
        grads = [from_physical(g, levels) for g in _gradients(outs, phys, leaves, create_graph)]
        if create_graph:
            grads = _cut_inner(grads, active_levels(), own)
        return _pytree.unflatten(grads, spec)

    given = {id(m[1]): x for m, x in zip(made, xs)}

    def unwrap(t):  # an input f returns comes back as the tensor the caller passed, as in torch
        original = given.get(id(t))
        return original if original is not None else t if tracked else _no_history(t, levels)
    output = _pytree.unflatten([unwrap(o) for o in out_leaves], out_spec)
    aux = _pytree.unflatten([unwrap(a) for a in _pytree.flatten(aux)[0]], _pytree.flatten(aux)[1])
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


# ---- forward mode ----------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(f(*primals), the Jacobian-vector product J_f(primals) @ tangents), in one forward pass."""
    return _jvp(func, primals, tangents, has_aux, "jvp(f, primals, tangents)")


def _jvp(func, primals, tangents, has_aux, head):
    """jvp; head: what its errors say first (the call, or the transform that called jvp: jacfwd, hessian)"""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{head}: Expected primals to be a tuple. E.g. it should be valid to call "
                           "f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{head}: Expected tangents to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    ps, p_spec = _pytree.flatten(primals)
    ts, t_spec = _pytree.flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{head}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {p_spec} and tangents with structure {t_spec}")
    for what, group in (("primals", ps), ("tangents", ts)):
        for x in group:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{head}: Expected {what} to only contain Tensors, got {type(x)}")
    level = forward_ad._enter(functorch=True)
    try:
        duals = [forward_ad.make_dual(p, t, level=level) for p, t in zip(ps, ts)]
        output, made = _call_making(func, (*_pytree.unflatten(duals, p_spec),), {})
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{head}: output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
        outs, out_spec = _pytree.flatten(output)
        primals_out, tangents_out, now = [], [], active_levels()
        for o in outs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{head}: Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            p, t = forward_ad.unpack_dual(o, level=level)
            p, t = _cut_inner([p, t if t is not None else _zeros_like(p)], now, made)
            primals_out.append(_share(Alias.apply(p, tuple(p.shape)), p))  # (torch: a view, AliasBackward0)
            tangents_out.append(t)
        if has_aux:
            leaves, spec = _pytree.flatten(aux)
            aux = _pytree.unflatten([forward_ad.unpack_dual(a, level=level).primal if isinstance(a, Tensor) else a
                                     for a in leaves], spec)
    finally:
        forward_ad._exit(level)
    result = (_pytree.unflatten(primals_out, out_spec), _pytree.unflatten(tangents_out, out_spec))
    return result + (aux,) if has_aux else result


def _zeros_like(t):
    return Tensor._make(np.zeros(t.shape, t.dtype.np))


def linearize(func, *primals):
    """(f(*primals), jvp_fn) with jvp_fn(*tangents) = J_f(primals) @ tangents. (Here jvp_fn runs
    a forward pass with tangents each time; torch traces the linear function once.)"""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


# ---- Jacobians and Hessians --------------------------------------------------------------------------
def _eye_columns(n_total, start, leaf):
    """Rows start..start+numel of the identity, one basis vector per row, shaped like leaf."""
    n = leaf.numel()
    cols = np.zeros((n_total, n), dtype=leaf.dtype.np)
    cols[np.arange(start, start + n), np.arange(n)] = 1
    return Tensor._make(cols.reshape((n_total,) + tuple(leaf.shape)))


def _refuse_complex(tree, op, what):
    """torch's Jacobians are of real functions: a complex tensor among all the arguments (inputs) or among f's
    outputs is its RuntimeError, which names the transform (jacrev, jacfwd, hessian)."""
    for i, t in enumerate(_pytree.flatten(tree)[0]):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise RuntimeError(f"{op}: Expected all {what} to be real but received complex tensor at flattened input "
                               f"idx: {i} (take .real and .imag as two real tensors, or use vjp/jvp, which take "
                               "complex tensors)")


def _diff_call(func, args, kwargs, nums):
    def f(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return func(*full, **kwargs)
    return f


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of f w.r.t. args[argnums] by reverse mode: vmap of the vjp over the rows of
    the identity. Shape: output shape + input shape."""
    return _jacrev(func, argnums, has_aux, "jacrev")


def _jacrev(func, argnums, has_aux, op):
    """jacrev; op: the transform the user called, which its errors name (jacrev, hessian)"""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _refuse_complex(args, op, "inputs")
        nums = _check_argnums(argnums, len(args), op)
        res = _vjp(_diff_call(func, args, kwargs, nums), tuple(args[i] for i in nums), has_aux,
                   f"{op}: vjp(f, *primals)")
        output, vjp_fn = res[0], res[1]
        _refuse_complex(output, op, "outputs")
        outs, out_spec = _pytree.flatten(output)
        sizes = [o.numel() for o in outs]
        total = sum(sizes)
        basis, start = [], 0
        for o in outs:
            basis.append(_eye_columns(total, start, o))
            start += o.numel()
        if total:
            rows = vmap(vjp_fn)(_pytree.unflatten(basis, out_spec))  # per argnum: a tree of (total, *in) tensors
        else:
            rows = tuple(_pytree.unflatten([Tensor._make(np.zeros((0,) + tuple(x.shape), x.dtype.np)) for x in
                                            _pytree.flatten(args[i])[0]], _pytree.flatten(args[i])[1]) for i in nums)
        jac, start = [], 0
        for o, n in zip(outs, sizes):
            def block(g, start=start, n=n, o=o):
                piece = g if n == total else g[start:start + n]
                return _share(View.apply(piece, tuple(o.shape) + tuple(g.shape[1:])), piece)  # (torch: a view)
            per_arg = []
            for r in rows:
                leaves, spec = _pytree.flatten(r)
                per_arg.append(_pytree.unflatten([block(g) for g in leaves], spec))
            jac.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
            start += n
        jac = _pytree.unflatten(jac, out_spec)
        return (jac, res[2]) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of f w.r.t. args[argnums] by forward mode: vmap of the jvp over the columns
    of the identity. Shape: output shape + input shape."""
    return _jacfwd(func, argnums, has_aux, randomness, "jacfwd")


def _jacfwd(func, argnums, has_aux, randomness, op):
    """jacfwd; op: the transform the user called, which its errors name (jacfwd, hessian)"""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _refuse_complex(args, op, "inputs")
        nums = _check_argnums(argnums, len(args), op)
        f = _diff_call(func, args, kwargs, nums)
        primals = tuple(args[i] for i in nums)
        xs, spec = _pytree.flatten(primals)
        for x in xs:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{op}: Expected the inputs to differentiate to be Tensors, got {type(x)}")
        sizes = [x.numel() for x in xs]
        total = sum(sizes)
        basis, start = [], 0
        for x in xs:
            basis.append(_eye_columns(total, start, x))
            start += x.numel()

        def push(*tangents):
            r = _jvp(f, primals, _pytree.unflatten(list(tangents), spec), has_aux, f"{op}: jvp(f, primals, tangents)")
            _refuse_complex(r[0], op, "outputs")
            return (r[1], r[2]) if has_aux else r[1]
        out = vmap(push, randomness=randomness)(*basis)
        tangents, aux = out if has_aux else (out, None)
        if has_aux:  # the same for every basis vector: keep one
            leaves, aux_spec = _pytree.flatten(aux)
            aux = _pytree.unflatten([a[0] if isinstance(a, Tensor) else a for a in leaves], aux_spec)
        t_leaves, t_spec = _pytree.flatten(tangents)
        jac = []
        for t in t_leaves:  # (total, *out_shape): one column per input element
            out_shape = tuple(t.shape[1:])
            blocks, start = [], 0
            for x, n in zip(xs, sizes):
                piece = t if n == total else t[start:start + n]
                piece = piece.reshape((n, int(np.prod(out_shape)))).t()  # the columns, side by side
                if x.ndim:  # (torch unflattens the columns: a view; a 0-d input's one column is squeezed away)
                    blocks.append(_share(View.apply(piece, out_shape + tuple(x.shape)), piece))
                else:
                    blocks.append(_share(View.apply(piece, out_shape + (1,)), piece).squeeze(-1))
                start += n
            per_arg, k = [], 0
            for i in nums:
                sub, sub_spec = _pytree.flatten(args[i])
                per_arg.append(_pytree.unflatten(blocks[k:k + len(sub)], sub_spec))
                k += len(sub)
            jac.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        jac = _pytree.unflatten(jac, t_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar f: forward mode over reverse mode, jacfwd(jacrev(f))."""
    return _jacfwd(_jacrev(func, argnums, False, "hessian"), argnums, False, "error", "hessian")


# ---- modules as functions of their parameters ----------------------------------------------------------
_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given tensors, for
    this call only: the module as a function of its parameters (grad and vmap need that)."""
    dicts = (parameter_and_buffer_dicts,) if isinstance(parameter_and_buffer_dicts, dict) \
        else tuple(parameter_and_buffer_dicts)
    merged = {}
    for d in dicts:
        for name, value in d.items():
            if name in merged:
                raise ValueError(f"{name} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            merged[name] = value
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    named = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    if tie_weights:  # a tensor registered under several names follows the replacement of one of them
        by_id = {}
        for name, t in named:
            by_id.setdefault(id(t), []).append(name)
        for name, t in named:
            if name in merged:
                for other in by_id[id(t)]:
                    merged.setdefault(other, merged[name])
    if strict:
        known = {n for n, _ in named}
        missing, unexpected = sorted(known - set(merged)), sorted(set(merged) - known)
        if missing or unexpected:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(repr(k) for k in missing) + "."
            raise RuntimeError(msg)
    restores = []
    try:
        for name, value in merged.items():
            restores.append(_swap(module, name, value))
        return module(*args, **kwargs)
    finally:
        for restore in reversed(restores):
            restore()


def _swap(module, name, value):
    *path, attr = name.split(".")
    owner = module
    for p in path:
        owner = owner._modules[p] if p in getattr(owner, "_modules", {}) else getattr(owner, p)
    d = owner.__dict__
    for store in ("_parameters", "_buffers"):
        s = d.get(store)
        if s is not None and attr in s:
            old = s[attr]
            s[attr] = value
            return lambda: s.__setitem__(attr, old)
    old = d.get(attr, _MISSING)
    d[attr] = value

    def restore():
        if old is _MISSING:
            d.pop(attr, None)
        else:
            d[attr] = old
    return restore


# ---- autograd.grad(..., is_grads_batched=True) ------------------------------------------------------
def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """autograd.grad with a batch of grad_outputs (their dim 0): one vmapped backward pass."""
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is not None and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               f"the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               f"shape of {g.shape} and output[{i}] has a shape of {o.shape}. If you only want some "
                               f"tensors in `grad_output` to be considered batched, consider using vmap.")
    unused = set()

    def one(*gos):
        res = engine.grad(outputs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                          allow_unused=True)
        out = []
        for k, r in enumerate(res):
            if r is None:
                unused.add(k)
                r = Tensor._make(np.zeros(inputs[k]._data.shape, inputs[k]._data.dtype))
            out.append(r)
        return tuple(out)
    in_dims = tuple(0 if g is not None else None for g in grad_outputs)
    results = list(vmap(one, in_dims=in_dims)(*grad_outputs))
    if unused and not materialize_grads:
        if not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {min(unused)} appears to not have been used in "
                               "the graph. Set allow_unused=True if this is the desired behavior.")
        for k in unused:
            results[k] = None
    return tuple(results)
