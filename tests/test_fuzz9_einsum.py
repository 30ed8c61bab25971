"""einsum's saved operands beside torch 2.13 (fuzz seed 402558): torch's product reads a copy of an operand when
its reshape cannot be a view, or a sum when a label only that operand has is summed first; the operand may then
change in place after the einsum and backward still runs (with its old values). Where torch saves a view, the
in-place change makes backward raise, in both."""
import random

import numpy as np
import pytest
import torch

import microtorch as mt


def _operand(rng, term, sizes):
    """A tensor with these labels' sizes: contiguous, transposed, a stepped slice or an expanded view."""
    shape = [sizes[c] for c in term]
    r = rng.random()
    seed = rng.randrange(2**31)
    data = np.random.default_rng(seed).standard_normal
    if r < 0.3 and len(shape) >= 2:
        return data(shape[::-1]), lambda L, t: t.permute(*range(len(shape) - 1, -1, -1))
    if r < 0.5 and shape:
        return data([shape[0] * 2] + shape[1:]), lambda L, t: t[::2]
    return data(shape), lambda L, t: t


def _equation(rng):
    letters, sizes = "abcde", {c: rng.choice([1, 2, 3, 4]) for c in "abcde"}
    terms = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 4))) for _ in range(2)]
    out = [c for c in sorted(set("".join(terms))) if rng.random() < 0.5]
    rng.shuffle(out)
    return f"{terms[0]},{terms[1]}->{''.join(out)}", terms, sizes


def _run(L, eq, arrays, views, j, write):
    """einsum with operand 1 - j requiring grad, then operand j changed in place: the gradient, or the error."""
    ops = [view(L, L.tensor(a)) for a, view in zip(arrays, views)]
    other = L.tensor(arrays[1 - j]).requires_grad_()
    ops[1 - j] = views[1 - j](L, other)
    y = L.einsum(eq, *ops)
    if write:
        ops[j].mul_(2.0)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return type(e).__name__ + (": modified in place" if "inplace" in str(e) else str(e))
    return other.grad.numpy().copy()


@pytest.mark.parametrize("chunk", range(4))
def test_an_operand_changed_after_einsum_as_torch(chunk):
    rng = random.Random(chunk)
    for _ in range(150):
        eq, terms, sizes = _equation(rng)
        made = [_operand(rng, t, sizes) for t in terms]
        arrays, views = [a for a, _ in made], [v for _, v in made]
        for j in (0, 1):
            for write in (False, True):
                t = _run(torch, eq, arrays, views, j, write)
                m = _run(mt, eq, arrays, views, j, write)
                if isinstance(t, str) or isinstance(m, str):
                    assert t == m, (eq, j, write, t, m)
                else:
                    assert np.allclose(t, m, rtol=1e-12, atol=1e-12), (eq, j, write, t, m)


def test_the_copy_torch_saves_is_in_the_graph_when_the_operand_requires_grad():
    """torch records the copy its reshape made (CloneBackward0, below its UnsafeViewBackward0): microtorch records
    the clone below EinsumBackward0, and second order through it is torch's."""
    for L in (torch, mt):
        a = L.tensor(np.arange(16.0).reshape(4, 2, 2), requires_grad=True)
        b = L.tensor(np.ones((1, 4, 1)), requires_grad=True)
        y = L.einsum('abc,dae->ceb', a * 1, b)
        names, stack = set(), [y.grad_fn]
        while stack:
            n = stack.pop()
            if n is not None:
                names.add(n.name())
                stack += [f for f, _ in n.next_functions]
        assert "CloneBackward0" in names
        ga, gb = L.autograd.grad((y * y).sum(), (a, b), create_graph=True)
        g2 = L.autograd.grad((ga * ga).sum() + gb.sum(), (a, b))
        if L is torch:
            want = [g.numpy() for g in g2]
        else:
            assert all(np.allclose(w, g.numpy(), rtol=1e-12) for w, g in zip(want, g2))
