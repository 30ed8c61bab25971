"""A node's edges (next_functions) as torch's: one per tensor input the op differentiates; a number
gets one only where torch's op takes a tensor there (`x * 2`), an index or a mask none."""
import pytest
import torch

import microtorch

OPS = {
    "x * 2": lambda L, x: x * 2, "2 * x": lambda L, x: 2 * x, "x + 1": lambda L, x: x + 1,
    "1 - x": lambda L, x: 1 - x, "x - 1": lambda L, x: x - 1, "x / 2": lambda L, x: x / 2,
    "2 / x": lambda L, x: 2 / x, "x ** 2": lambda L, x: x ** 2, "2 ** x": lambda L, x: 2 ** x,
    "x * y": lambda L, x: x * L.ones(2, 3), "tanh": lambda L, x: x.tanh(), "relu": lambda L, x: L.relu(x),
    "sum": lambda L, x: x.sum(), "sum(dim)": lambda L, x: x.sum(1), "mean(dim)": lambda L, x: x.mean(0),
    "max(dim)": lambda L, x: x.max(1).values, "view": lambda L, x: x.view(6), "reshape": lambda L, x: x.reshape(3, 2),
    "flatten": lambda L, x: x.flatten(), "transpose": lambda L, x: x.transpose(0, 1), "t": lambda L, x: x.t(),
    "expand": lambda L, x: x[:, :1].expand(2, 3), "x[0]": lambda L, x: x[0], "x[:, 1:]": lambda L, x: x[:, 1:],
    "x[[0, 1]]": lambda L, x: x[[0, 1]], "x[mask]": lambda L, x: x[x > 1],
    "softmax": lambda L, x: x.softmax(1), "log_softmax": lambda L, x: L.nn.functional.log_softmax(x, 1),
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 2])),
    "where(c, x, 0.)": lambda L, x: L.where(x > 1, x, 0.0), "where(c, x, y)": lambda L, x: L.where(x > 1, x, x * 3),
    "clamp(0, 1)": lambda L, x: x.clamp(0, 1), "clamp(min=t)": lambda L, x: L.clamp(x, min=x * 0),
    "masked_fill": lambda L, x: x.masked_fill(x > 1, 0.0), "gather": lambda L, x: x.gather(1, L.tensor([[0], [1]])),
    "index_select": lambda L, x: x.index_select(1, L.tensor([0, 2])), "cat": lambda L, x: L.cat([x, x * 2]),
    "split": lambda L, x: x.split(1, 1)[0], "matmul": lambda L, x: x @ L.ones(3, 4), "linear":
    lambda L, x: L.nn.functional.linear(x, L.ones(4, 3)), "mse_loss": lambda L, x: L.nn.functional.mse_loss(x, x * 0),
    "lerp": lambda L, x: L.lerp(x, x * 2, 0.5), "std": lambda L, x: x.std(), "norm": lambda L, x: x.norm(),
    "masked_fill(t)": lambda L, x: x.masked_fill(x > 1, L.tensor(0.0)),
    "index_fill": lambda L, x: x.index_fill(1, L.tensor([0]), 2.0), "x[t, t]": lambda L, x: x[L.tensor([0, 1]), L.tensor([1, 2])],
    "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([0, 1]), x),
    "nll_loss": lambda L, x: L.nn.functional.nll_loss(x, L.tensor([0, 2])),
    "bce_with_logits": lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x, L.ones(2, 3)),
    "conv1d": lambda L, x: L.nn.functional.conv1d(x.unsqueeze(0), L.ones(1, 2, 2)),
    "conv1d(bias)": lambda L, x: L.nn.functional.conv1d(x.unsqueeze(0), x[:, :2].unsqueeze(0), L.ones(1)),
    "cumsum": lambda L, x: x.cumsum(1), "select": lambda L, x: x.select(1, 1), "unfold": lambda L, x: x.unfold(1, 2, 1),
    "sort": lambda L, x: x.sort(1).values, "interpolate": lambda L, x: L.nn.functional.interpolate(x.unsqueeze(0), scale_factor=2.0),
}


def edges(L, op):
    x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
    y = OPS[op](L, x)
    return [(n.name() if n is not None else None, nr) for n, nr in y.grad_fn.next_functions]


@pytest.mark.parametrize("op", OPS)
def test_next_functions_as_torch(op):
    assert edges(microtorch, op) == edges(torch, op)


@pytest.mark.parametrize("op", ["x ** 2", "where(c, x, 0.)", "softmax", "x[0]"])
def test_a_node_hook_sees_one_gradient_per_edge(op):
    """grad_inputs (what a node hook receives) has one gradient per edge, as torch's; the gradient
    still reaches the input."""
    def run(L):
        x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = OPS[op](L, x * 1)
        seen = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_inputs)))
        y.sum().backward()
        return seen, x.grad.tolist()
    assert run(microtorch) == run(torch)


def test_edge_inputs_name_the_argument_of_each_edge():
    """viz pairs each edge with the forward argument it stands for: where's condition has none."""
    x = microtorch.tensor([1.0, -2.0], requires_grad=True)
    assert microtorch.where(x > 0, x, 0.0).grad_fn.edge_inputs() == (1, 2)
    assert (x * 2).grad_fn.edge_inputs() == (0, 1)
    assert x.view(2, 1).grad_fn.edge_inputs() == (0,)
