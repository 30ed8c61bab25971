"""The minimizer: shrink a failing program while the same category of difference persists.

Moves, tried until none helps: drop a step (and the steps that read it), drop an unused leaf, let a
later step read a step's input instead of the step (bypass), turn requires_grad off on a leaf, and
shrink one dim of a leaf (to 1, or by one). Each move is kept only if the program still shows the
category it was asked about. `reproducer()` prints the result as a script that runs on both libraries.
"""
import copy

import numpy as np

from .check import check_program


def _has(prog, category):
    try:
        return any(c == category for c, _ in check_program(prog))
    except Exception:
        return False


def _drop_step(prog, i):
    p = copy.deepcopy(prog)
    dead = {p.steps[i].out}
    keep = []
    for j, st in enumerate(p.steps):
        if j == i or (j > i and dead & set(st.args)):
            dead.add(st.out)
        else:
            keep.append(st)
    p.steps = keep
    return _drop_unused(p)


def _drop_unused(p):
    used = {a for st in p.steps for a in st.args}
    p.leaves = [leaf for leaf in p.leaves if leaf.name in used] or p.leaves[:1]
    return p


def _bypass(prog, i):
    """Steps after i read step i's first argument instead of step i's result."""
    p = copy.deepcopy(prog)
    st = p.steps[i]
    if not st.args:
        return None
    for later in p.steps[i + 1:]:
        later.args = tuple(st.args[0] if a == st.out else a for a in later.args)
    del p.steps[i]
    return _drop_unused(p)


def _leaf_moves(prog):
    for k, leaf in enumerate(prog.leaves):
        if leaf.requires_grad:
            p = copy.deepcopy(prog)
            p.leaves[k].requires_grad = False
            yield p
        for d, n in enumerate(leaf.values.shape):
            for m in {1, n - 1} - {n, 0} if n > 1 else ():
                p = copy.deepcopy(prog)
                p.leaves[k].values = np.take(leaf.values, range(m), axis=d)
                yield p
        if leaf.values.size and np.any(leaf.values != np.round(leaf.values)):
            p = copy.deepcopy(prog)
            p.leaves[k].values = np.round(leaf.values)
            yield p


def _moves(prog):
    for i in reversed(range(len(prog.steps))):
        yield _drop_step(prog, i)
        yield _bypass(prog, i)
    yield from _leaf_moves(prog)


def minimize(prog, category, budget=400):
    """The smallest program found (fewest steps, then smallest leaves) that still shows `category`."""
    tries, improved = 0, True
    if _has(_drop_unused(copy.deepcopy(prog)), category):
        prog = _drop_unused(copy.deepcopy(prog))
    while improved and tries < budget:
        improved = False
        for cand in _moves(prog):
            if cand is None:
                continue
            tries += 1
            if _has(cand, category):
                prog, improved = cand, True
                break
            if tries >= budget:
                break
    return prog


def reproducer(prog, category=None):
    """A self-contained script: the program on torch and on microtorch, side by side; for a gradient
    category also the harness's weighted loss and its first- and second-order gradients."""
    body = "\n".join("    " + line for line in prog.code().splitlines())
    finals = ", ".join(st.out for st in prog.steps) or prog.leaves[0].name
    head = f"# fuzz seed {prog.seed}" + (f", category {category}" if category else "")
    text = (f"{head}\nimport numpy as np, torch, microtorch\n\n"
            f"for L in (torch, microtorch):\n    F = L.nn.functional\n{body}\n"
            f"    for t in ({finals},):\n"
            f"        print(L.__name__, t.shape, t.grad_fn.name() if t.grad_fn else None, t)\n")
    if category and ":" not in category:
        text += _grad_lines(prog)
    return text


def _grad_lines(prog):
    from .check import libs
    from .run import _weights, eval_step
    torch, _ = libs()
    env = {leaf.name: torch.tensor(leaf.values, requires_grad=leaf.requires_grad) for leaf in prog.leaves}
    for st in prog.steps:
        env[st.out] = eval_step(torch, st, env)
    names = [k for k, v in env.items() if v.requires_grad and v.dtype == torch.float64]
    wrt = ", ".join(leaf.name for leaf in prog.leaves if leaf.requires_grad)
    terms = " + ".join(f"({k} * L.tensor({_weights(prog, k, tuple(env[k].shape), 1).round(3).tolist()!r})).sum()"
                       for k in names)
    return (f"    loss = {terms}\n"
            f"    g = L.autograd.grad(loss, ({wrt},), create_graph=True, allow_unused=True)\n"
            f"    print(L.__name__, 'grad', g)\n"
            f"    gg = [x for x in g if x is not None and x.requires_grad]\n"
            f"    if gg:\n        print(L.__name__, 'grad2', L.autograd.grad(sum(x.sum() for x in gg), ({wrt},), "
            f"allow_unused=True))\n")
