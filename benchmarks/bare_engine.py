"""The least a Python autograd engine on numpy does per op, for W6's ops only: a floor to measure against.

Each op makes one object holding its array, its inputs and a closure that maps the output's gradient to
the inputs' gradients; backward sorts the graph and runs the closures. Nothing else: no checks, no
dtype rules, no strides, no version counters, no hooks, no saved-tensor bookkeeping, no events, no
second order. `overhead_bench.py --floor` runs the W6 step on it beside torch and microtorch, so the
share of microtorch's time that goes to behaving like torch can be read off one table. (It is not a
library: it knows exactly the calls of that step.)
"""
import numpy as np

float64 = np.float64


def tensor(data, dtype=None, requires_grad=False):
    return Bare(np.array(data, dtype=dtype), requires_grad=requires_grad)


def _unbroadcast(g, shape):
    """g summed back to shape (the dims broadcasting added or stretched)."""
    while g.ndim > len(shape):
        g = g.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdims=True)
    return g


def _lift(x):
    return x if isinstance(x, Bare) else Bare(np.asarray(x, dtype=np.float64))


class Bare:
    __slots__ = ("data", "grad", "inputs", "vjp", "requires_grad")

    def __init__(self, data, inputs=(), vjp=None, requires_grad=False):
        self.data, self.grad, self.inputs, self.vjp, self.requires_grad = data, None, inputs, vjp, requires_grad

    def __add__(self, other):
        other = _lift(other)
        a, b = self.data, other.data
        return Bare(a + b, (self, other), lambda g: (_unbroadcast(g, a.shape), _unbroadcast(g, b.shape)))

    __radd__ = __add__

    def __mul__(self, other):
        other = _lift(other)
        a, b = self.data, other.data
        return Bare(a * b, (self, other), lambda g: (_unbroadcast(g * b, a.shape), _unbroadcast(g * a, b.shape)))

    __rmul__ = __mul__

    def __rsub__(self, number):
        return Bare(number - self.data, (self,), lambda g: (-g,))

    def __matmul__(self, other):
        a, b = self.data, other.data
        return Bare(a @ b, (self, other), lambda g: (g @ b.T, a.T @ g))

    def relu(self):
        out = np.maximum(self.data, 0.0)
        return Bare(out, (self,), lambda g: (g * (out > 0),))

    def sum(self):
        shape = self.data.shape
        return Bare(np.asarray(self.data.sum()), (self,), lambda g: (np.broadcast_to(g, shape),))

    def mean(self):
        shape, n = self.data.shape, self.data.size
        return Bare(np.asarray(self.data.mean()), (self,), lambda g: (np.broadcast_to(g / n, shape),))

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:  # depth-first, each node after its inputs
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((x, False) for x in node.inputs)
        grads = {id(self): np.ones(())}
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node.vjp is None:
                if node.requires_grad:
                    node.grad = g if node.grad is None else node.grad + g
                continue
            for x, gx in zip(node.inputs, node.vjp(g)):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
