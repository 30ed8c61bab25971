"""In-place ops, version counters and views against torch: values, gradients, grad_fn names,
_version, and the errors (version errors at backward time, leaves, views of leaves...)."""
import random

import pytest
import torch

import microtorch
from autograd_oracle import LIBS, same, same_error

W4 = [1.0, 2.0, 3.0, 4.0]

OPS = {
    "add_": lambda T, a: a.add_(1),
    "add_ tensor alpha": lambda T, a: a.add_(T.tensor(W4), alpha=2),
    "sub_": lambda T, a: a.sub_(1),
    "mul_": lambda T, a: a.mul_(2),
    "mul_ tensor": lambda T, a: a.mul_(T.tensor(W4)),
    "div_": lambda T, a: a.div_(2),
    "pow_": lambda T, a: a.pow_(2),
    "pow_ tensor": lambda T, a: a.pow_(T.tensor(W4)),
    "zero_": lambda T, a: a.zero_(),
    "fill_": lambda T, a: a.fill_(3.0),
    "fill_ tensor": lambda T, a: a.fill_(T.tensor(3.0)),
    "clamp_": lambda T, a: a.clamp_(-1, 1),
    "clamp_ min": lambda T, a: a.clamp_(min=0),
    "copy_": lambda T, a: a.copy_(T.tensor(W4)),
    "relu_": lambda T, a: a.relu_(),
    "sigmoid_": lambda T, a: a.sigmoid_(),
    "tanh_": lambda T, a: a.tanh_(),
    "exp_": lambda T, a: a.exp_(),
    "neg_": lambda T, a: a.neg_(),
    "masked_fill_": lambda T, a: a.masked_fill_(T.tensor([True, False, True, False]), 0.5),
    "+=": lambda T, a: a.__iadd__(2),
    "-=": lambda T, a: a.__isub__(2),
    "*=": lambda T, a: a.__imul__(2),
    "/=": lambda T, a: a.__itruediv__(2),
    "x[i] = v": lambda T, a: a.__setitem__(1, 5.0),
    "x[i:j] = v": lambda T, a: a.__setitem__(slice(1, 3), 5.0),
    "x[:] = v": lambda T, a: a.__setitem__(slice(None), 5.0),
    "x[...] = t": lambda T, a: a.__setitem__(Ellipsis, T.tensor(W4)),
    "x[idx] = v": lambda T, a: a.__setitem__(T.tensor([0, 2]), 5.0),
    "x[mask] = v": lambda T, a: a.__setitem__(T.tensor([True, False, True, False]), 5.0),
    "x[list] = v": lambda T, a: a.__setitem__([0, 2], 5.0),
}


def leaf(T):
    return T.tensor([1.0, -3.0, 2.0, 0.5], requires_grad=True)


@pytest.mark.parametrize("op", OPS)
def test_in_place_op_values_gradient_name_and_version(op):
    def prog(T):
        x = leaf(T)
        a = x * 1
        v0 = a._version
        returned = OPS[op](T, a)
        facts = (returned is a, a._version - v0, a.grad_fn.name(), a.is_leaf, a)
        (a * T.tensor(W4)).sum().backward()
        return facts, x.grad
    same(prog)


@pytest.mark.parametrize("op", ["mul_", "add_", "exp_", "tanh_", "sigmoid_", "pow_", "relu_", "zero_", "fill_",
                                "copy_", "clamp_", "masked_fill_", "x[i] = v", "div_", "neg_"])
def test_modifying_an_output_that_was_saved_raises_torchs_version_error(op):
    # exp saves its result: any later in-place change to it is caught at backward time
    def prog(T):
        a = leaf(T).exp()
        OPS[op](T, a)
        a.sum().backward()
    ours, _ = same_error(prog, "one of the variables needed for gradient computation has been modified by an "
                               "inplace operation: [torch.FloatTensor [4]], which is output 0 of Exp, is at "
                               "version 1; expected version 0 instead.")
    assert "ExpBackward0" in str(ours)


@pytest.mark.parametrize("op, name", [("mul_", "Mul"), ("zero_", "Zero"), ("x[i] = v", "torch::autograd::CopySlices"),
                                      ("copy_", "torch::autograd::CopyBackwards"), ("add_", "Add")])
def test_modifying_a_saved_input_names_its_current_grad_fn(op, name):
    def prog(T):
        a = leaf(T) * 2
        b = a * a          # mul saves its inputs
        OPS[op](T, a)
        b.sum().backward()
    same_error(prog, f"[torch.FloatTensor [4]], which is output 0 of {name}, is at version 1; expected version 0 "
                     "instead. Hint: enable anomaly detection")


@pytest.mark.parametrize("case", ["tanh", "sigmoid", "exp", "mul", "mul const", "add", "relu", "pow", "div",
                                  "sin", "matmul", "sum"])
def test_ops_save_what_torch_saves(case):
    # the same programs raise (or run) as in torch: x modified after being used by each op
    def prog(T):
        x = leaf(T)
        a = x * 1
        w = T.tensor(W4, requires_grad=True)
        out = {"tanh": lambda: a.tanh(), "sigmoid": lambda: a.sigmoid(), "exp": lambda: a.exp(),
               "mul": lambda: a * w, "mul const": lambda: a * 3, "add": lambda: a + w, "relu": lambda: a.relu(),
               "pow": lambda: a ** 2, "div": lambda: w / a, "sin": lambda: a.sin(),
               "matmul": lambda: a @ w, "sum": lambda: a.sum()}[case]()
        a.add_(1)
        out.sum().backward()
        return x.grad, w.grad
    same(prog)


def test_version_error_with_a_leaf_modified_under_no_grad_and_a_constant():
    def prog(T):
        x = leaf(T)
        y = x * x
        with T.no_grad():
            x.add_(1)
        y.sum().backward()
    same_error(prog, "[torch.FloatTensor [4]] is at version 1; expected version 0 instead.")

    def const(T):
        x = leaf(T)
        w = T.tensor(W4)
        y = x * w
        w.add_(1)
        y.sum().backward()
    same_error(const, "is at version 1; expected version 0 instead.")


def test_in_place_op_on_a_leaf_that_requires_grad():
    same_error(lambda T: leaf(T).mul_(2), "a leaf Variable that requires grad is being used in an in-place operation.")
    same_error(lambda T: leaf(T).__setitem__(0, 2.0),
               "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    same_error(lambda T: leaf(T)[1:].mul_(2),
               "a view of a leaf Variable that requires grad is being used in an in-place operation.")

    def under_no_grad(T):  # what optimizers do
        x = leaf(T)
        v = x[1:]
        with T.no_grad():
            x.mul_(2)
            v.add_(1)
        return x, x._version, x.requires_grad, x.is_leaf, x.grad_fn
    same(under_no_grad)


def test_a_leaf_that_does_not_require_grad_takes_the_history_of_what_is_written():
    def prog(T):
        x = leaf(T)
        b = T.zeros(4)
        b.add_(x)
        facts = (b.grad_fn.name(), b.is_leaf, b.requires_grad)
        b.sum().backward()
        return facts, x.grad
    same(prog)


def test_integer_tensors_count_versions_too():
    def prog(T):
        b = T.tensor([1, 2])
        b.add_(1)
        b[0] = 3
        return b, b._version
    same(prog)


def test_in_place_type_and_shape_errors():
    same_error(lambda T: T.tensor([1, 2]).add_(1.5), "result type Float can't be cast to the desired output type Long")
    same_error(lambda T: T.zeros(3).add_(T.ones(2, 3)), "output with shape [3] doesn't match the broadcast shape")
    same_error(lambda T: (leaf(T) * 1).expand(2, 4).mul_(2),
               "unsupported operation: more than one element of the written-to tensor refers to a single memory "
               "location. Please clone() the tensor before performing the operation.")


# ---- version counters ---------------------------------------------------------------------
def test_views_share_the_version_counter_data_and_detach_as_torch():
    def prog(T):
        x = leaf(T)
        a = x.clone()
        views = [a.view(2, 2), a.reshape(2, 2), a[1:], a.view(2, 2).transpose(0, 1), a.detach(), a.view(2, 2).t(),
                 a.unsqueeze(0), a.view(2, 2)[0], a.expand(2, 4), a.view(2, 2).permute(1, 0), a[None]]
        d = a.data
        a.add_(1)
        d.mul_(2)   # .data has a counter of its own
        return ([v._version for v in views], [v._base is a for v in views], a._version, d._version,
                d._base is None, d.requires_grad, a.detach()._base is None)
    same(prog)


def test_data_modification_is_invisible_to_autograd():
    def prog(T):
        x = leaf(T)
        a = x.clone()
        y = a * a
        a.data.mul_(2)
        y.sum().backward()
        return x.grad, a._version
    same(prog)


def test_detach_shares_the_version_counter():
    def prog(T):
        x = leaf(T)
        a = x.clone()
        y = a * a
        a.detach().mul_(2)
        y.sum().backward()
    same_error(prog, "which is output 0 of Clone, is at version 1; expected version 0 instead.")


def test_in_place_on_a_detached_tensor_does_not_touch_the_original_history():
    def prog(T):
        x = leaf(T)
        a = x.clone()
        d = a.detach()
        w = T.ones(4, requires_grad=True)
        d.mul_(w)
        return a.grad_fn.name(), d.grad_fn.name(), a._version
    same(prog)


# ---- in-place on views: CopySlices -------------------------------------------------------------
W23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def base23(T):
    x = T.tensor([[1.0, -2.0, 3.0], [0.5, 2.0, -1.0]], requires_grad=True)
    return x, x * 1


def _names(*ts):
    return tuple(t.grad_fn.name() if t.grad_fn is not None else None for t in ts)


VIEW_CASES = {
    "row mul_": lambda T, a: a[0].mul_(2),
    "column slice exp_": lambda T, a: a[:, 1:].exp_(),
    "transpose add_": lambda T, a: a.t().add_(T.tensor([1.0, 2.0])),
    "view mul_ w": lambda T, a: a.view(6).mul_(T.arange(6.0)),
    "reshape relu_": lambda T, a: a.reshape(3, 2).relu_(),
    "view of view": lambda T, a: a[0][1:].mul_(3),
    "twice": lambda T, a: a[0].mul_(2).mul_(3),
    "setitem on a view": lambda T, a: a[0].__setitem__(1, 10.0),
    "x[i, list] = v": lambda T, a: a.__setitem__((0, [0, 2]), 7.0),
    "x[:, list] = v": lambda T, a: a.__setitem__((slice(None), [0, 2]), 7.0),
    "x[None] = v": lambda T, a: a.__setitem__(None, 1.0),
    "x[:, 1] = v": lambda T, a: a.__setitem__((slice(None), 1), 2.0),
    "x[0] = tensor": lambda T, a: a.__setitem__(0, T.tensor([1.0, 2.0, 3.0])),
    "x[0] = tensor requiring grad": lambda T, a: a.__setitem__(0, a[1] * 2),
    "copy_ into a column": lambda T, a: a[:, 0].copy_(a[:, 2]),
    "zero_ a row": lambda T, a: a[1].zero_(),
    "fill_ a slice": lambda T, a: a[:, ::2].fill_(-1.0),
    "masked_fill_ a row": lambda T, a: a[1].masked_fill_(T.tensor([True, False, True]), 0.0),
    "clamp_ a transpose": lambda T, a: a.t()[1:].clamp_(0, 1),
    "sigmoid_ a select": lambda T, a: a.select(1, 2).sigmoid_(),
    "narrow tanh_": lambda T, a: a.narrow(1, 0, 2).tanh_(),
    "unsqueeze neg_": lambda T, a: a.unsqueeze(0)[:, 1].neg_(),
    "base then view": lambda T, a: (a.mul_(2), a[0].add_(1)),
}


@pytest.mark.parametrize("case", VIEW_CASES)
def test_in_place_on_a_view_rewrites_the_base_history(case):
    def prog(T):
        x, a = base23(T)
        VIEW_CASES[case](T, a)
        facts = (a.grad_fn.name(), a._version, a.is_leaf)
        (a * T.tensor(W23)).sum().backward()
        return facts, a, x.grad
    same(prog)


@pytest.mark.parametrize("case", VIEW_CASES)
def test_copy_slices_keeps_the_op_inside_as_torch(case):
    """torch's CopySlices keeps the in-place op it applied inside itself: its next_functions are the
    base's old history and that op's other inputs (not the op's own node). (The edges of arguments
    that are not tensors are left out: microtorch lists one per argument, torch one per tensor.)"""
    def prog(T):
        x, a = base23(T)
        VIEW_CASES[case](T, a)
        return [(n.name(), nr) for n, nr in a.grad_fn.next_functions if n is not None]
    same(prog)


def test_copy_slices_frees_the_op_it_keeps():
    """A second backward through a CopySlices raises, as torch: the op's saved tensors went with the node's."""
    def prog(T):
        x, a = base23(T)
        y = T.tensor(2.0, requires_grad=True)
        a[0].mul_(y)
        (a * T.tensor(W23)).sum().backward()
        try:
            a.sum().backward()
        except RuntimeError as e:
            return "second backward", str(e)[:40], x.grad, y.grad
        return "no error"
    same(prog)


def test_copy_slices_second_order_with_a_transposed_gradient():
    """(fuzz seed 1816) the gradient reaching CopySlices may be laid out transposed (einsum's backward):
    the base's gradient is still the incoming one with the view's part replaced."""
    def prog(T):
        a0 = T.tensor([[[1.0, -0.5, -1.0]]], dtype=T.float64, requires_grad=True)
        a6 = T.tensor([[[1.0]], [[2.0]], [[3.0]]], dtype=T.float64, requires_grad=True)
        v0 = a0 * T.ones(1, 2, 1, dtype=T.float64)
        v0[0, 1:] = 2.0
        g = T.autograd.grad(T.einsum("abc,cad->", v0, a6), (a0, a6), create_graph=True)
        return g, T.autograd.grad(g[1].sum() + g[0].sum(), (a0, a6), allow_unused=True)
    same(prog)


def test_view_history_after_in_place_on_the_view():
    def prog(T):
        x, a = base23(T)
        v = a[:, 1:]
        old = v.grad_fn.name()
        v.exp_()
        facts = (old, _names(a, v), v._base is a, v.grad_fn.next_functions[0][0].name(), v.requires_grad)
        (v * T.tensor(W23)[:, 1:]).sum().backward()
        return facts, x.grad
    same(prog)


def test_siblings_and_views_are_regenerated_from_the_new_base():
    def prog(T):
        x, a = base23(T)
        v, u = a[0], a[1]
        v.mul_(2)
        facts = _names(u, v)
        (u * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return facts, x.grad
    same(prog)

    def base_then_view(T):
        x, a = base23(T)
        v = a[0]
        a.mul_(2)
        facts = _names(v)
        (v * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return facts, x.grad
    same(base_then_view)

    def interleaved(T):
        x, a = base23(T)
        v = a[0]
        v.mul_(2)
        a.add_(1)
        v.mul_(3)
        (v.sum() + (a * T.tensor(W23)).sum()).backward()
        return x.grad
    same(interleaved)

    def no_grad_in_place_still_regenerates(T):
        x, a = base23(T)
        v = a[0]
        with T.no_grad():
            a.mul_(2)
        (v * 1).sum().backward()
        return _names(v), x.grad
    same(no_grad_in_place_still_regenerates)

    def leaf_updated_under_no_grad(T):  # an optimizer step on a leaf that has a view
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = x[1:]
        with T.no_grad():
            x.mul_(2)
        (v * T.tensor([1.0, 2.0])).sum().backward()
        return _names(v), x.grad, v
    same(leaf_updated_under_no_grad)


def test_writing_gradients_into_a_buffer_that_does_not_require_grad():
    # the common pattern: out = zeros(...); out[i] = f(x)
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = T.zeros(2, 3)
        u = b[1]
        b[0] = x * 2
        b[1].copy_(x.exp())
        facts = (_names(b, u), b.requires_grad, b.is_leaf, u.requires_grad)
        (b * T.tensor(W23)).sum().backward()
        return facts, x.grad
    same(prog)


def test_writing_through_a_view_of_a_buffer():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.zeros(3)
        v = b[1:]
        v.copy_(x)
        facts = _names(b, v)
        (b * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return facts, x.grad
    same(prog)


def test_views_and_saved_tensors():
    def sibling_write(T):
        x, a = base23(T)
        v = a[0]
        y = v * v
        a[1] = 0.0
        y.sum().backward()
    same_error(sibling_write, "which is output 0 of AsStrided, is at version 1; expected version 0 instead.")

    def exp_of_view_then_modify_view(T):  # exp saved its output, not the view: fine
        x, a = base23(T)
        v = a[0]
        y = v.exp()
        v.mul_(2)
        y.sum().backward()
        return x.grad
    same(exp_of_view_then_modify_view)

    def exp_in_place_on_view_then_modify(T):
        x, a = base23(T)
        v = a[0]
        v.exp_()
        a[1].mul_(2)   # shares the version counter with v
        (a * 1).sum().backward()
    same_error(exp_in_place_on_view_then_modify, "is at version 2; expected version 1 instead.")


def test_hooks_and_retain_grad_of_a_view_modified_in_place():
    def prog(T):
        log = []
        x, a = base23(T)
        v = a[0]
        v.retain_grad()
        v.register_hook(lambda g: log.append(g))
        u = a[1]
        u.retain_grad()
        a.retain_grad()
        v.mul_(2)
        (a * T.tensor(W23)).sum().backward()
        return log, v.grad, v.retains_grad, u.grad, a.grad, x.grad
    same(prog)


def test_a_view_used_before_its_in_place_op_keeps_its_hooks_but_not_retain_grad():
    def prog(T):
        log = []
        x, a = base23(T)
        v = a[0]
        v.retain_grad()
        v.register_hook(lambda g: log.append(g))
        y = v * 2          # reaches v's old node: its hook fires, its retain_grad no longer does
        v.mul_(3)
        (y.sum() + (a * 10).sum()).backward()
        return v.grad, v.retains_grad, log, x.grad
    same(prog)


def test_double_backward_through_copy_slices():
    def prog(T):
        x, a = base23(T)
        a[0].mul_(a[1])
        a[:, 1].exp_()
        (g,) = T.autograd.grad((a * a).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        return g, gg
    same(prog)


@pytest.mark.parametrize("case", ["unbind", "split", "split sizes", "chunk", "unbind no grad base",
                                  "view made in no_grad", "no_grad view of buffer", "view of leaf"])
def test_in_place_on_views_that_torch_forbids(case):
    def prog(T):
        x, a = base23(T)
        if case == "unbind":
            a.unbind(0)[0].mul_(2)
        elif case == "split":
            a.split(1, 0)[1].mul_(2)
        elif case == "split sizes":
            a.split([1, 1], 0)[0].mul_(2)
        elif case == "chunk":
            a.chunk(2, 0)[0].mul_(2)
        elif case == "unbind no grad base":
            T.zeros(2, 3).unbind(0)[0].copy_(x[0])
        elif case == "view made in no_grad":
            with T.no_grad():
                v = a[0]
            v.mul_(2)
        elif case == "no_grad view of buffer":
            b = T.zeros(3)
            with T.no_grad():
                v = b[1:]
            v.copy_(x[0, :2])
        else:
            x[0].mul_(2)
    fragment = {"unbind": "Output 0 of Unbind is a view and is being modified inplace. This view is the output of "
                          "a function that returns multiple views.",
                "split": "Output 1 of Split is a view and is being modified inplace.",
                "split sizes": "Output 0 of SplitWithSizes is a view and is being modified inplace.",
                "chunk": "Output 0 of Split is a view",
                "unbind no grad base": "This view is the output of a function that returns multiple views.",
                "view made in no_grad": "A view was created in no_grad mode and is being modified inplace with grad "
                                        "mode enabled.",
                "no_grad view of buffer": "A view was created in no_grad mode and is being modified inplace",
                "view of leaf": "a view of a leaf Variable that requires grad is being used in an in-place operation."
                }[case]
    same_error(prog, fragment)


def test_multi_output_views_may_be_modified_without_grad():
    def prog(T):
        x, a = base23(T)
        u, w = a.split(1, 0)
        with T.no_grad():
            u.mul_(2)
        return a, a._version
    same(prog)


def test_a_view_made_in_no_grad_whose_base_is_then_modified():
    def prog(T):
        x, a = base23(T)
        with T.no_grad():
            v = a[0]
        a.mul_(2)
        (v * 2).sum().backward()
    same_error(prog, "A view was created in no_grad mode and its base or another view of its base has been "
                     "modified inplace with grad mode enabled.")


# ---- random programs of views and in-place ops --------------------------------------------
def _random_program(seed):
    """A list of steps over live tensors (0 is x*1 of a 3x4 leaf): take views, modify in
    place, compute out of place. Replayed identically on torch and microtorch."""
    rnd = random.Random(seed)
    steps, shapes = [], [(3, 4)]
    for _ in range(rnd.randint(3, 8)):
        i = rnd.randrange(len(shapes))
        shape = shapes[i]
        kind = rnd.choice(["view", "view", "inplace", "inplace", "inplace", "op"])
        if kind == "view" and len(shape) >= 1 and shape[0] > 1:
            v = rnd.choice(["row", "slice", "t", "flat", "unsqueeze"] if len(shape) == 2 else ["row", "slice"])
            if v == "row":
                new = shape[1:]
            elif v == "slice":
                new = (len(range(*slice(1, None, rnd.choice([1, 2])).indices(shape[0]))),) + shape[1:]
                v = ("slice", rnd.choice([1, 2]))
            elif v == "t":
                new = shape[::-1]
            elif v == "flat":
                new = (shape[0] * shape[1],)
            else:
                new = (1,) + shape
            if len(new) == 0:
                continue
            steps.append(("view", i, v))
            shapes.append(new)
        elif kind == "inplace":
            steps.append(("inplace", i, rnd.choice(["mul_", "add_x", "exp_", "sigmoid_", "zero_", "copy_x",
                                                    "mul_x", "setitem", "neg_", "clamp_", "setitem_idx",
                                                    "setitem_mask"])))
        else:
            steps.append(("op", i, rnd.choice(["sin", "mul2"])))
            shapes.append(shape)
    return steps


def _replay(steps, T):
    x = T.tensor([[0.1 * (i - 5) for i in range(j, j + 4)] for j in range(0, 12, 4)], requires_grad=True)
    live = [x * 1]
    for kind, i, what in steps:
        t = live[i]
        if kind == "view":
            if what == "row":
                live.append(t[0])
            elif what == "t":
                live.append(t.t())
            elif what == "flat":
                live.append(t.view(-1) if t.is_contiguous() else t.reshape(-1))
            elif what == "unsqueeze":
                live.append(t.unsqueeze(0))
            else:
                live.append(t[1::what[1]])
        elif kind == "inplace":
            other = (x[0, 0] * 0.5).expand(t.shape)
            {"mul_": lambda: t.mul_(1.5), "add_x": lambda: t.add_(other), "exp_": lambda: t.exp_(),
             "sigmoid_": lambda: t.sigmoid_(), "zero_": lambda: t.zero_(), "copy_x": lambda: t.copy_(other * 3),
             "mul_x": lambda: t.mul_(other), "neg_": lambda: t.neg_(), "clamp_": lambda: t.clamp_(-0.2, 0.3),
             "setitem": lambda: t.__setitem__(0, x[1, 1] * 2),
             "setitem_idx": lambda: t.__setitem__(T.tensor([0]), x[1, 2] * 3),
             "setitem_mask": lambda: t.__setitem__(t > 0.15, x[2, 0] * 4)}[what]()
        else:
            live.append(t.sin() if what == "sin" else t * 2)
    loss = sum((t * (k + 1)).sum() for k, t in enumerate(live))
    (g,) = T.autograd.grad(loss, x)
    return g, [t.grad_fn.name() if t.grad_fn is not None else None for t in live]


@pytest.mark.parametrize("seed", range(60))
def test_random_programs_of_views_and_in_place_ops_match_torch(seed):
    steps = _random_program(seed)
    same(lambda T: _replay(steps, T))


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_the_oracle_is_not_microtorch(T):
    assert (T is torch) != (T is microtorch)


MORE = {
    "clip_": lambda T, x, a: a.clip_(0, 2), "abs_": lambda T, x, a: a.abs_(), "sqrt_": lambda T, x, a: a.sqrt_(),
    "log_": lambda T, x, a: a.log_(), "sin_": lambda T, x, a: a.sin_(), "cos_": lambda T, x, a: a.cos_(),
    "square_": lambda T, x, a: a.square_(), "reciprocal_": lambda T, x, a: a.reciprocal_(),
    "sub_ alpha": lambda T, x, a: a.sub_(x, alpha=2),
    "+= broadcast, copy_ cast": lambda T, x, a: (a.__iadd__(x[0] * 2), a.copy_(x[1].double() * 2)),
    "float64 tensor mul_ float32": lambda T, x, a: a.double().mul_(x),
    "float32 tensor mul_ float64": lambda T, x, a: a.mul_(x.double()),
    "masked_fill_ with a tensor": lambda T, x, a: a.masked_fill_(T.tensor([[True, False], [False, True]]), x[0, 1] * 3),
    "pow_ by itself": lambda T, x, a: a.pow_(x),
    "div_ by itself": lambda T, x, a: a.div_(a),
    "mul_ by itself": lambda T, x, a: a.mul_(a),
    "overlapping setitem": lambda T, x, a: a.view(-1).__setitem__(slice(1, None), a.view(-1)[:-1]),
    "overlapping add_": lambda T, x, a: a.view(-1)[1:].add_(a.view(-1)[:-1]),
    "row += other row": lambda T, x, a: a[0].add_(a[1]),
}


@pytest.mark.parametrize("key", ["tensor", "list", "mask", "row and list", "2-d tensors"])
def test_index_assignment_of_a_value_that_requires_grad(key):
    def prog(T):
        x = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        w = T.tensor([7.0, 8.0], requires_grad=True)
        a = x * 1
        k = {"tensor": (slice(None), T.tensor([0, 2])), "list": (1, [0, 2]),
             "mask": T.tensor([[True, False, True], [False, False, False]]), "row and list": (0, [1, 2]),
             "2-d tensors": (T.tensor([0, 1]), T.tensor([2, 0]))}[key]
        a[k] = w * 2
        (a * T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        return a, a.grad_fn.name(), x.grad, w.grad
    same(prog)


@pytest.mark.parametrize("case", MORE)
def test_more_in_place_programs(case):
    def prog(T):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a = x * 1
        MORE[case](T, x, a)
        (a * T.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return a, a.grad_fn.name(), x.grad
    same(prog)
