"""Broadcasting beside torch 2.13: the graph that undoing it records under create_graph (sum_to's
SumBackward1 with keepdim, then a view when leading dims were added), and broadcast_to / expand of a
tensor to its own shape (a new view with ExpandBackward0, never the tensor itself)."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _tree(fn):
    """The names of a graph, depth first, with their depth."""
    if fn is None:
        return []
    return [fn.name()] + [[n] for f, _ in fn.next_functions for n in _tree(f)]


def _saved(node, names=("_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes")):
    return {n: tuple(getattr(node, n)) if isinstance(getattr(node, n), tuple) else getattr(node, n)
            for n in names if hasattr(node, n)}


@pytest.mark.parametrize("xs, ys", [((), (2, 3)), ((1,), (2, 3)), ((1, 1), (2, 3)), ((3,), (2, 3)),
                                    ((2, 1, 3), (4, 2, 5, 3)), ((3, 1), (2, 3, 4))])
def test_sum_to_records_torch_graph_under_create_graph(xs, ys):
    rng = np.random.default_rng(0)
    a, b, h = rng.standard_normal(xs), rng.standard_normal(ys), rng.standard_normal(xs)
    got = {}
    for lib in LIBS:
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        g, = lib.autograd.grad((x * y).sum(), x, create_graph=True)
        node = g.grad_fn
        inner = node.next_functions[0][0] if node.name() == "ViewBackward0" else node
        gy, = lib.autograd.grad(g, y, lib.tensor(h), create_graph=True)  # through sum_to's own backward
        got[lib] = (_tree(node), _saved(node), _saved(inner), tuple(g.shape), g.stride(), g._base is not None,
                    g.detach().numpy().round(12).tolist(), gy.detach().numpy().round(12).tolist(),
                    _tree(gy.grad_fn))
    assert got[mt] == got[torch]


def test_plain_backward_still_sums_to_a_gradient_of_its_own():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * lib.ones(2, 3)).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0] and x.grad._base is None


_SAME_SHAPE = {
    "broadcast_to": lambda lib, x: lib.broadcast_to(x, x.shape),
    "broadcast_to_list": lambda lib, x: lib.broadcast_to(x, [2, 3]),
    "method_broadcast_to": lambda lib, x: x.broadcast_to((2, 3)),
    "broadcast_to_minus_one": lambda lib, x: lib.broadcast_to(x, (-1, 3)),
    "broadcast_to_new_dim": lambda lib, x: lib.broadcast_to(x, (4, -1, -1)),
    "expand_shape": lambda lib, x: x.expand(x.shape),
    "expand_minus_one": lambda lib, x: x.expand(-1, -1),
    "expand_as": lambda lib, x: x.expand_as(lib.zeros(2, 3)),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, lib.tensor([[0, 1, 2], [2, 1, 0]]), 1),
    "take_along_dim_broadcast_index": lambda lib, x: lib.take_along_dim(x, lib.tensor([[2, 0, 1]]), 1),
}


@pytest.mark.parametrize("name", list(_SAME_SHAPE))
def test_expanding_to_the_same_shape_is_a_new_view(name):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        out = _SAME_SHAPE[name](lib, x)
        got[lib] = (out is x, _tree(out.grad_fn), tuple(out.shape), out.stride(), out.detach().numpy().tolist())
        if out.grad_fn.name() == "ExpandBackward0":
            x.data.add_(1)  # (.data: a change the view sees, through the shared memory)
            got[lib] += (out._base is x, out.detach().numpy().tolist())
    assert got[mt] == got[torch]


@pytest.mark.parametrize("size", [(3, 3), (3,), (-1, 2, 3), (2, 3, 1), (3, -2, 3)])
def test_broadcast_to_refuses_as_torch(size):
    errors = {}
    for lib in LIBS:
        with pytest.raises(RuntimeError) as e:
            lib.broadcast_to(lib.zeros(2, 3), size)
        errors[lib] = str(e.value)
    assert "broadcast_to" in errors[mt] and str(list(size)[0]) in errors[mt]
    if "non-singleton" in errors[torch]:  # (torch's wording, without its C++ type name)
        assert errors[torch] in errors[mt]


def test_broadcast_to_takes_a_tuple_not_an_int():
    for lib in LIBS:
        with pytest.raises(TypeError, match="broadcast_to.*'size'.*must be tuple of ints, not int"):
            lib.broadcast_to(lib.zeros(3), 3)
