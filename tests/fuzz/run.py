"""Run a Program on one library and record what a student could observe.

The record (a Trace) holds, per step: dtype, shape, values, requires_grad, is_leaf, the grad_fn name
and the names of the graph nodes the step created; then, for a weighted-sum loss over every float
value that requires grad: first-order grads by autograd.grad(create_graph=True), their
requires_grad, second-order grads, .grad after backward(), and whether backward() a second time
raises. Exceptions are recorded by type.
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

_CODE = {}


def eval_step(L, step, env):
    """Evaluate one step with L as the library; env maps names to L tensors."""
    src = step.expr.format(*step.args)
    code = _CODE.get(src)
    if code is None:
        code = _CODE[src] = compile(src, "<fuzz step>", "eval")
    scope = dict(env)
    for name, arr in step.arrays.items():
        scope[name] = L.tensor(arr)
    return eval(code, {"L": L, "F": L.nn.functional, "np": np}, scope)


@dataclass
class StepRecord:
    dtype: str
    shape: tuple
    values: np.ndarray
    requires_grad: bool
    is_leaf: bool
    grad_fn: str
    nodes: tuple        # names of the graph nodes this step created, in walk order
    edges: tuple = ()   # for each of those nodes, which of its next_functions lead nowhere (None)


@dataclass
class Trace:
    steps: list = field(default_factory=list)
    error: tuple = None            # (step index, exception type name) when a step raised
    final: dict = field(default_factory=dict)      # name -> values after the last step
    grads: list = None             # autograd.grad(loss, leaves, create_graph=True)
    grads_rg: list = None          # requires_grad of each of those
    grads2: list = None            # autograd.grad of a weighted sum of the grads
    backward: list = None          # leaf .grad after loss.backward()
    grad_errors: dict = field(default_factory=dict)  # phase -> exception type name


def _np(t):
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():  # torch's known-zero gradient (numpy(force=True)
        return np.zeros(tuple(t.shape), dtype=str(t.dtype).split(".")[-1])  # can crash on it)
    return np.array(t.detach().numpy(), copy=True)


def _name(node):
    return None if node is None else node.name()


def _new_nodes(out, seen):
    """Names of the nodes reachable from out.grad_fn that no earlier value reached (walk order),
    and for each the pattern of its next_functions ("n" for an edge to a node, "-" for None)."""
    names, edges, stack = [], [], [out.grad_fn] if out.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        if node.name().endswith("AccumulateGrad"):
            continue
        names.append(node.name())
        edges.append("".join("-" if n is None else "n" for n, _ in node.next_functions))
        stack.extend(reversed([n for n, _ in node.next_functions]))
    return tuple(names), tuple(edges)


def _exc(e):
    """The builtin exception class a user would catch (torch raises subclasses such as LinAlgError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


def run_program(L, prog, grads=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(L, prog, grads)


def _run(L, prog, grads):
    tr, env, seen = Trace(), {}, {}
    leaves = []
    for leaf in prog.leaves:
        env[leaf.name] = t = L.tensor(leaf.values.copy(), requires_grad=leaf.requires_grad)
        leaves.append(t)
    for i, st in enumerate(prog.steps):
        try:
            out = eval_step(L, st, env)
        except Exception as e:
            tr.error = (i, _exc(e))
            return tr
        env[st.out] = out
        tr.steps.append(StepRecord(str(out.dtype).split(".")[-1],
                                   tuple(out.shape), _np(out), out.requires_grad, out.is_leaf,
                                   _name(out.grad_fn), *_new_nodes(out, seen)))
    try:
        tr.final = {k: _np(v) for k, v in env.items()}
    except Exception as e:
        tr.grad_errors["final"] = _exc(e)
        return tr
    if grads:
        _gradients(L, prog, env, leaves, tr)
    return tr


def _weights(prog, name, shape, salt):
    seed = (prog.seed * 7919 + sum(map(ord, name)) * 31 + salt) % 2**32
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape)


def _gradients(L, prog, env, leaves, tr):
    try:
        names = [k for k, v in env.items() if v.requires_grad and v.dtype == L.float64]
        wrt = [t for t in leaves if t.requires_grad]
        if not names or not wrt:
            return
        loss = sum((env[k] * L.tensor(_weights(prog, k, tuple(env[k].shape), 1))).sum() for k in names)
    except Exception as e:
        tr.grad_errors["loss"] = _exc(e)
        return
    if prog.seed % 3 == 0:  # one program in three: backward() alone (the 10-minute budget of make fuzz)
        _backward(loss, wrt, tr)
        return
    try:
        g = L.autograd.grad(loss, wrt, create_graph=True, allow_unused=True)
    except Exception as e:
        tr.grad_errors["grad"] = _exc(e)
        return
    tr.grads = [_np(x) for x in g]
    tr.grads_rg = [x is not None and x.requires_grad for x in g]
    terms = [(x * L.tensor(_weights(prog, f"g{i}", tuple(x.shape), 2))).sum()
             for i, x in enumerate(g) if x is not None and x.requires_grad]
    if terms:
        try:
            tr.grads2 = [_np(x) for x in L.autograd.grad(sum(terms), wrt, retain_graph=True, allow_unused=True)]
        except Exception as e:
            tr.grad_errors["grad2"] = _exc(e)
    if prog.seed % 3 == 1:  # and one in three also backward() after the graph was used twice
        _backward(loss, wrt, tr)


def _backward(loss, wrt, tr):
    try:
        loss.backward()
        tr.backward = [_np(t.grad) for t in wrt]
    except Exception as e:
        tr.grad_errors["backward"] = _exc(e)
        return
    try:  # a second time: torch refuses where a node it runs had saved a tensor (now freed), not elsewhere
        loss.backward()
    except Exception as e:
        tr.grad_errors["backward again"] = _exc(e)
