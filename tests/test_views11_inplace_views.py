"""In-place view ops (t_, transpose_, squeeze_, unsqueeze_, swapaxes_, swapdims_) on a view or on a tensor with
views, beside torch 2.13: the refusals (an output of split/unbind/chunk or a view of one, a view made under
no_grad, a view of a leaf), the regenerated histories of the other views, gradients and second order."""
import re

import numpy as np
import pytest
import torch

import microtorch as mt

OPS = {"t_": lambda v: v.t_(), "transpose_": lambda v: v.transpose_(0, 1), "squeeze_": lambda v: v.squeeze_(),
       "unsqueeze_": lambda v: v.unsqueeze_(0), "swapaxes_": lambda v: v.swapaxes_(0, -1),
       "swapdims_": lambda v: v.swapdims_(-1, 0)}
A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # (float64: the same bits on both sides)


def outcome(fn):
    """what a student sees of fn(): its value as a list, or the exception's type and the start of its message"""
    try:
        return fn()
    except Exception as e:
        return type(e).__name__, re.sub(r"^\w+\(\): ", "", str(e))[:60]  # (microtorch may name the op first)


def chain(node):
    """names down the first edges of node"""
    names = []
    while node is not None and not node.name().endswith("AccumulateGrad"):
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def both(fn):
    return [outcome(lambda: fn(T)) for T in (torch, mt)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("views", ["split", "unbind", "chunk", "view of split", "split of a leaf"])
def test_a_multi_output_view_is_refused(op, views):
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a if views == "split of a leaf" else a * 2
        v = {"split": lambda: x.split(1)[1], "unbind": lambda: x.unbind(1)[0], "chunk": lambda: x.chunk(3, 1)[2],
             "view of split": lambda: x.split(1)[0][:, 1:], "split of a leaf": lambda: x.split(1)[0]}[views]()
        before = chain(v.grad_fn)
        err = outcome(lambda: OPS[op](v))
        return err, before == chain(v.grad_fn), tuple(v.shape), v._version
    t, m = both(run)
    assert t[0][0] == "RuntimeError" and t[0][1].startswith("Output ")
    assert m == t


@pytest.mark.parametrize("op", OPS)
def test_a_view_made_under_no_grad_is_refused(op):
    def run(T):
        x = T.tensor(A, requires_grad=True) * 2
        with T.no_grad():
            v = x[:, :2]
        return outcome(lambda: OPS[op](v)), v._version
    t, m = both(run)
    assert t[0] == ("RuntimeError", "A view was created in no_grad mode and is being modified inp") and m == t


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("which", ["base", "view"])
def test_the_other_views_are_regenerated_and_the_modified_one_keeps_its_node(op, which):
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a.sin()
        v, w, u = x[:, 1:], x[0], x.view(3, 2)
        OPS[op](x if which == "base" else v)
        names = [chain(t.grad_fn) for t in (x, v, w, u)]
        loss = (x * x).sum() + (v ** 3).sum() + (w * 5).sum() + (u.exp()).sum()
        g, = T.autograd.grad(loss, a, create_graph=True)
        gg, = T.autograd.grad((g * g).sum(), a)
        return names, [x._version, v._version], g.detach().numpy().round(12).tolist(), gg.numpy().round(12).tolist()
    t, m = both(run)
    assert m == t
    assert t[0][0 if which == "base" else 1][0] in ("TBackward1", "TransposeBackward1", "SqueezeBackward3", "UnsqueezeBackward1")


def test_a_view_of_a_modified_view_has_it_as_its_history():
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a * 1
        v = x[:, 1:]
        u = v[0]
        v.t_()
        u2 = v[0]
        (u2 * T.tensor([1.0, 2.0])).sum().backward()
        return chain(u.grad_fn), chain(u2.grad_fn), u2._base is x, a.grad.tolist()
    t, m = both(run)
    assert t[0] == ["AsStridedBackward0", "MulBackward0"] and t[1] == ["SelectBackward0", "TBackward1", "SliceBackward0",
                                                                        "MulBackward0"]
    assert m == t


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("which", ["base", "view", "split"])
def test_under_no_grad_every_view_is_regenerated(op, which):
    """torch records nothing, but the version changed: each view (the modified one too) reads as AsStridedBackward0
    of its base, and an output of split raises when its grad_fn is read"""
    def run(T):
        x = T.tensor(A, requires_grad=True) * 2
        v, w = (x.split(1) if which == "split" else (x[:, 1:], x[1]))
        with T.no_grad():
            OPS[op](x if which == "base" else v)
        return [outcome(lambda: chain(t.grad_fn)) for t in (x, v, w)]
    t, m = both(run)
    assert m == t


def test_a_tensor_that_needs_no_gradient_takes_them_freely():
    def run(T):
        x = T.tensor(A)
        p, q = x.split(1)
        p.t_()
        v = x[:, 1:]
        x.unsqueeze_(0)
        return tuple(p.shape), tuple(x.shape), p.grad_fn, v.grad_fn, x._version
    t, m = both(run)
    assert m == t


@pytest.mark.parametrize("which", ["base", "view"])
def test_retain_grad_stays_where_torch_keeps_it(which):
    """torch sets the in-place view op's node without moving retain_grad to it (the retained gradient keeps the old
    shape); the regenerated views take theirs along"""
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a * 2
        x.retain_grad()
        v, w = x[0], x[1]
        v.retain_grad(), w.retain_grad()
        x.t_() if which == "base" else v.unsqueeze_(0)
        (x * 2 + v.sum() * 3 + w * 5).sum().backward()
        return [None if t.grad is None else t.grad.tolist() for t in (x, v, w, a)]
    t, m = both(run)
    assert m == t


def test_the_regenerated_views_carry_the_gradient_into_the_modified_base():
    """hand-derived: x = a * 2 transposed in place, its old row 0 read through v (now x[:, 0]) times 10"""
    a = mt.tensor(np.array(A), requires_grad=True)
    x = a * 2
    v = x[0]
    x.t_()
    (v * 10).sum().backward()
    assert a.grad.tolist() == [[20.0, 20.0, 20.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("call", ["x.t_()", "x.transpose_(0, 5)", "x.squeeze_(7)", "x.unsqueeze_(9)", "x.swapaxes_(0, 9)",
                                  "x.swapdims_(-9, 0)"])
def test_a_bad_dim_names_the_inplace_op(call):
    """torch's type and message, naming the op called (t_() expects..., not t()); microtorch names it in front of
    torch's message where torch names none"""
    name, seen = call[2:call.index("(")], []
    for T in (torch, mt):
        with pytest.raises((RuntimeError, IndexError)) as e:
            eval(call, {"x": T.ones(2, 3, 4)})
        seen.append((e.type, str(e.value)))
    (t_type, t_msg), (m_type, m_msg) = seen
    assert m_type is t_type
    assert m_msg.startswith(t_msg) if t_msg.startswith(name) else m_msg.startswith(f"{name}(): {t_msg}")


def _identity(T):
    class Id(T.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, g):
            return g
    return Id


@pytest.mark.parametrize("kind", ["made under no_grad", "custom Function", "split"])
@pytest.mark.parametrize("mode", ["grad", "no_grad"])
@pytest.mark.parametrize("change", ["x.mul_(2)", "x.t_()", "w.mul_(2)", "w.unsqueeze_(0)"])
def test_a_view_torch_cannot_rebuild_raises_when_its_history_is_read(kind, mode, change):
    """once the base or another view changed in place (in grad mode or not), torch raises when the history of a
    view made under no_grad, returned by a custom Function, or one of split's outputs is read: its grad_fn, an op on
    it, backward through it (microtorch gave an `Error` node that raised at backward, or nothing under no_grad)"""
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a * 1
        if kind == "made under no_grad":
            with T.no_grad():
                v = x[0]
        else:
            v = _identity(T).apply(x) if kind == "custom Function" else x.split(1)[0]
        w = x[1]
        with T.no_grad() if mode == "no_grad" else T.enable_grad():
            eval(change, {"x": x, "w": w})
        return outcome(lambda: v.grad_fn), outcome(lambda: (v * 2).sum()), v.requires_grad
    t, m = both(run)
    assert t[0][0] == "RuntimeError" and m == t


def test_a_view_made_under_no_grad_of_a_tensor_that_needs_no_gradient_keeps_none():
    def run(T):
        x = T.tensor(A)
        with T.no_grad():
            v = x[0]
            p = x.split(1)[0]
        x.mul_(2)
        w = T.ones(3, dtype=T.float64, requires_grad=True)
        before = (v.grad_fn, p.grad_fn)
        x[1].mul_(w)  # (x now requires grad: its no_grad views cannot be rebuilt)
        return before, outcome(lambda: v.grad_fn), outcome(lambda: p.grad_fn)
    t, m = both(run)
    assert m == t


@pytest.mark.parametrize("kind", ["made under no_grad", "custom Function", "split"])
@pytest.mark.parametrize("write", ["v.mul_(2)", "v.t_()", "v.add_(1)"])
def test_writing_into_such_a_view_after_its_base_changed_gives_the_direct_error(kind, write):
    """torch's message for the view being modified itself ("is being modified inplace"), not the one for its base"""
    def run(T):
        x = T.tensor(A, requires_grad=True) * 1
        if kind == "made under no_grad":
            with T.no_grad():
                v = x[0]
        else:
            v = _identity(T).apply(x) if kind == "custom Function" else x.split(1)[0]
        x.mul_(2)
        return outcome(lambda: eval(write, {"v": v}))
    t, m = both(run)
    assert t[0] == "RuntimeError" and "is being modified in" in t[1] and m == t


@pytest.mark.parametrize("op", ["relu_", "exp_", "sigmoid_", "tanh_", "sqrt_"])
@pytest.mark.parametrize("view", ["x[1:]", "x[:, 0]", "x.t()", "x.view(6)", "a temporary x[0]"])
def test_double_backward_through_an_inplace_op_on_a_view(op, view):
    """the op's saved result has the view's history, as torch's: the second backward runs the op through the base's
    CopySlices (microtorch raised "backward through the graph a second time" without retain_graph); for a view
    that is gone, the op's own node, whose saved tensors CopySlices leaves to it, as torch's"""
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a.abs() * 1.5
        if view.startswith("a temporary"):
            getattr(x[0], op)()
            v = x[0]
        else:
            v = eval(view, {"x": x})
            getattr(v, op)()
        g, = T.autograd.grad((x.sin() * 2).sum() + (v * v).sum(), a, create_graph=True)
        g2, = T.autograd.grad((g ** 2).sum(), a)
        return arr_of(g), arr_of(g2), chain(v.grad_fn), [n.name() for n, _ in x.grad_fn.next_functions if n]
    t, m = both(run)
    assert m == t


def arr_of(t):
    return np.asarray(t.detach().numpy()).round(10).tolist()


@pytest.mark.parametrize("kind", ["made under no_grad", "custom Function", "split"])
@pytest.mark.parametrize("then", ["written", "base written"])
def test_a_view_of_such_a_view_is_one_too(kind, then):
    """torch's creation meta passes to a view of a view it cannot rebuild: writing into it is refused, and once its
    base changed its history cannot be read (microtorch let both through)"""
    def run(T):
        x = T.tensor(A, requires_grad=True) * 1
        if kind == "made under no_grad":
            with T.no_grad():
                v = x[0]
        else:
            v = _identity(T).apply(x)[0] if kind == "custom Function" else x.split(1)[0][0]
        u = v[1:]
        if then == "written":
            return outcome(lambda: u.mul_(2))
        x.mul_(2)
        return outcome(lambda: u.grad_fn)
    t, m = both(run)
    assert t[0] == m[0] == "RuntimeError"
    assert m[1] == t[1]  # (made under no_grad: u has a node of its own, SliceBackward0, and is "a view of a view")


@pytest.mark.parametrize("op", ["mul_(2)", "exp_()", "t_()", "unsqueeze_(0)"])
@pytest.mark.parametrize("view", ["x[1:]", "x[0]", "x.t()"])
def test_retain_grad_of_a_view_survives_its_own_inplace_op(op, view):
    """torch moves a view's retain_grad to its new history when the view itself is changed in place (microtorch
    dropped it: v.grad stayed None)"""
    def run(T):
        a = T.tensor(A, requires_grad=True)
        x = a * 1
        v = eval(view, {"x": x})
        v.retain_grad()
        eval("v." + op, {"v": v})
        ((v * 3).sum() + (x * x).sum()).backward()
        return None if v.grad is None else v.grad.tolist(), v.retains_grad, a.grad.tolist()
    t, m = both(run)
    assert t[0] is not None and m == t


@pytest.mark.parametrize("kind", ["made under no_grad", "split"])
def test_such_a_view_prints_with_an_invalid_grad_fn(kind):
    """torch prints grad_fn=<Invalid> for it (reading grad_fn itself raises): microtorch's print raised"""
    def run(T):
        x = T.tensor(A, requires_grad=True) * 1
        if kind == "split":
            v = x.split(1)[0]
        else:
            with T.no_grad():
                v = x[0]
        x.mul_(2)
        return repr(v).replace("microtorch", "torch"), str(v).replace("microtorch", "torch"), v.requires_grad
    t, m = both(run)
    assert "grad_fn=<Invalid>" in t[0] and m == t
