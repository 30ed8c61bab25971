"""Hooks against torch: tensor hooks, retain_grad, post-accumulate hooks, node hooks,
multi-grad hooks, saved-tensor hooks, and the errors of a hook that returns a bad gradient."""
import warnings

import pytest
import torch

import microtorch
from autograd_oracle import LIBS, same, same_error


def leaf(T, values=(1.0, 2.0)):
    return T.tensor(list(values), requires_grad=True)


# ---- Tensor.register_hook -------------------------------------------------------------------
def test_double_the_gradient_example():
    # the example of the old torch docs: a hook returning a new gradient replaces it
    def prog(T):
        v = leaf(T, [0.0, 0.0, 0.0])
        h = v.register_hook(lambda grad: grad * 2)
        v.backward(T.tensor([1.0, 2.0, 3.0]))
        first = v.grad.clone()
        h.remove()
        v.backward(T.tensor([1.0, 2.0, 3.0]))
        return first, v.grad
    assert same(prog)[1][0].values.tolist() == [2.0, 4.0, 6.0]


def test_hooks_run_in_registration_order_each_seeing_the_previous_result():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 3
        y.register_hook(lambda g: log.append(("h1", g)) or g * 2)
        y.register_hook(lambda g: log.append(("h2", g)) or g + 1)
        y.register_hook(lambda g: log.append(("h3", g)))
        (y * y).sum().backward()
        return log, x.grad
    same(prog)


def test_retain_grad_sees_the_gradient_after_every_tensor_hook_whenever_registered():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 2
        y.register_hook(lambda g: log.append(("h1", g)) or g * 2)
        y.retain_grad()
        y.register_hook(lambda g: log.append(("h2", g)) or g + 1)
        (y * y).sum().backward()
        return log, y.grad, x.grad, y.retains_grad
    result = same(prog)[1]
    assert result[1].values.tolist() == [9.0, 17.0]  # ((4, 8) * 2) + 1: after both hooks


def test_a_leaf_used_twice_fires_its_hook_once_with_the_summed_gradient():
    def prog(T):
        log = []
        x = leaf(T)
        x.register_hook(lambda g: log.append(g))
        (x * x + x).sum().backward()
        return log, x.grad
    assert len(same(prog)[1][0]) == 1


def test_a_non_leaf_used_twice_fires_once():
    def prog(T):
        log = []
        x = leaf(T)
        y = x.exp()
        y.register_hook(lambda g: log.append(g))
        (y * 2 + y.sin()).sum().backward()
        return log
    assert len(same(prog)[1]) == 1


def test_removing_a_hook_inside_a_hook_takes_effect_from_the_next_backward():
    def prog(T):
        log, handles = [], {}
        x = leaf(T)
        y = x * 3

        def h1(g):
            log.append("h1")
            handles["h2"].remove()

        handles["h1"] = y.register_hook(h1)
        handles["h2"] = y.register_hook(lambda g: log.append("h2"))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return log
    assert same(prog)[1] == ["h1", "h2", "h1"]


def test_remove_is_idempotent_and_handles_are_context_managers():
    def prog(T):
        log = []
        x = leaf(T)
        h = x.register_hook(lambda g: log.append("x"))
        h.remove()
        h.remove()
        (x * 1).sum().backward()
        return log
    same(prog)
    x = leaf(microtorch)
    log = []
    with x.register_hook(lambda g: log.append(1)):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert log == [1]


def test_hooks_of_every_output_of_a_node_run_in_registration_order_even_with_no_gradient():
    # torch calls a tensor hook with None when its node runs but no gradient reached it
    def prog(T):
        log = []
        x = leaf(T)
        a, b = x.unbind()
        b.register_hook(lambda g: log.append(("b", g)))
        a.register_hook(lambda g: log.append(("a", g)))
        (a * 2).backward()
        return log, x.grad
    same(prog)


def test_a_hook_cannot_replace_a_missing_gradient():
    def prog(T):
        x = leaf(T)
        a, b = x.unbind()
        b.register_hook(lambda g: T.ones(()))
        (a * 2).backward()
    same_error(prog, "can't replace a None gradient with a non-None value")


def test_a_hook_may_use_tensors_that_require_grad():
    def prog(T):
        x = leaf(T)
        w = T.tensor([5.0, 5.0], requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: g * w)
        (y * y).sum().backward()
        return x.grad, w.grad
    same(prog)


def test_hooks_see_gradients_that_require_grad_under_create_graph():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 3
        y.register_hook(lambda g: log.append(g.requires_grad))
        x.register_hook(lambda g: log.append(g.requires_grad))
        g, = T.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return log, g, gg
    same(prog)


def test_hooks_stay_with_the_value_they_were_registered_on_after_an_in_place_op():
    # torch: a hook registered before x.mul_() receives the gradient of the old value, while
    # retain_grad follows the tensor to its new grad_fn
    def prog(T):
        log = []
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        a.register_hook(lambda g: log.append(g))
        a.retain_grad()
        a.mul_(2)
        (a * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return log, a.grad, x.grad
    same(prog)


def test_hook_registration_errors():
    same_error(lambda T: T.tensor([1.0]).register_hook(lambda g: g),
               "cannot register a hook on a tensor that doesn't require gradient")
    same_error(lambda T: (leaf(T) * 2).register_post_accumulate_grad_hook(lambda t: None),
               "post accumulate grad hooks cannot be registered on non-leaf tensors")
    same_error(lambda T: T.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None),
               "cannot register a hook on a tensor that doesn't require gradient")
    same_error(lambda T: T.tensor([1.0]).retain_grad(), "can't retain_grad on Tensor that has requires_grad=False")


def test_retain_grad_details():
    def prog(T):
        x = leaf(T)
        x.retain_grad()  # a no-op on a leaf
        y = x * 2
        y.retain_grad()
        y.sum().backward(retain_graph=True)
        y.sum().backward()  # accumulates, like a leaf's .grad
        return x.retains_grad, y.retains_grad, y.grad, x.grad
    same(prog)


def test_retained_and_leaf_grads_under_create_graph():
    def prog(T):
        x = leaf(T)
        y = x * x
        y.retain_grad()
        (y * y).sum().backward(create_graph=True)
        first = (y.grad, y.grad.grad_fn.name(), x.grad, x.grad.grad_fn.name())
        (y * y).sum().backward(create_graph=True)
        return first, y.grad, y.grad.grad_fn.name(), x.grad, x.grad.grad_fn.name()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the reference cycle of create_graph
        same(prog)


def test_a_hook_may_modify_the_gradient_in_place():
    def prog(T):
        x = leaf(T)
        x.register_hook(lambda g: g.mul_(2))
        (x * 3).sum().backward()
        x.grad = T.tensor([10.0, 10.0])
        before = x.grad
        (x * 3).sum().backward()   # accumulates into the same tensor
        return x.grad, x.grad is before
    same(prog)


# ---- hooks and autograd.grad / backward(inputs=) ------------------------------------------
def test_autograd_grad_captures_a_non_leaf_after_its_hooks_and_stops_there():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 3
        y.register_hook(lambda g: log.append(("y", g)) or g * 10)
        x.register_hook(lambda g: log.append(("x", g)))
        y.grad_fn.register_prehook(lambda g: log.append("y node pre"))
        z = (y * y).sum()
        (g,) = T.autograd.grad(z, y)
        return g, log, x.grad
    result = same(prog)[1]
    assert result[0].values.tolist() == [60.0, 120.0]   # captured after the hook (x10)
    assert result[1] == [("y", result[1][0][1])]        # the input's node does not run


def test_autograd_grad_of_a_leaf_runs_its_hooks_but_not_post_accumulate():
    def prog(T):
        log = []
        x = leaf(T)
        x.register_hook(lambda g: log.append(("x", g)) or g * 10)
        x.register_post_accumulate_grad_hook(lambda t: log.append("post"))
        (g,) = T.autograd.grad((x * x).sum(), x)
        return g, log, x.grad
    same(prog)


def test_autograd_grad_also_fills_retained_grads():
    def prog(T):
        x = leaf(T)
        y = x * 3
        y.retain_grad()
        (g,) = T.autograd.grad((y * y).sum(), y)
        return g, y.grad
    same(prog)


def test_backward_with_inputs_runs_the_input_node_and_retains_its_grad():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 3
        y.register_hook(lambda g: log.append(("y", g)) or g * 10)
        y.grad_fn.register_prehook(lambda g: log.append("pre"))
        y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        (y * y).sum().backward(inputs=[y])
        return y.grad, x.grad, y.retains_grad, log
    same(prog)


# ---- register_post_accumulate_grad_hook -------------------------------------------------------
def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    def prog(T):
        log = []
        x = leaf(T)
        x.register_hook(lambda g: log.append(("pre", g)))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad.clone())))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return log
    same(prog)


def test_post_accumulate_grad_hook_runs_even_when_no_gradient_arrives():
    def prog(T):
        class NoGrad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return None
        log = []
        x = leaf(T)
        x.register_hook(lambda g: log.append(("x", g)))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad)))
        NoGrad.apply(x).sum().backward()
        return log, x.grad
    same(prog)


def test_optimizer_style_post_accumulate_hook():
    def prog(T):
        x = leaf(T)

        def step(p):
            with T.no_grad():
                p.sub_(0.1 * p.grad)
            p.grad = None
        x.register_post_accumulate_grad_hook(step)
        (x * x).sum().backward()
        return x, x.grad, x._version
    same(prog)


# ---- Node.register_hook / register_prehook --------------------------------------------------
def test_node_hooks_order_and_replacement():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 3
        z = y.exp()

        def pre(go):
            log.append(("pre", go))
            return (go[0] * 2,)

        def post(gi, go):
            log.append(("post", gi, go))
            return (gi[0] + 1,)

        z.grad_fn.register_prehook(pre)
        z.grad_fn.register_hook(post)
        y.register_hook(lambda g: log.append(("y", g)))
        z.register_hook(lambda g: log.append(("z", g)))
        z.sum().backward()
        return log, x.grad
    same(prog)


def test_node_hook_with_none_and_removal():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 2
        h = y.grad_fn.register_prehook(lambda go: log.append("pre"))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        h.remove()
        y.grad_fn.register_prehook(lambda go: (None,))
        y.sum().backward()
        return log, x.grad
    same(prog)


def test_accumulate_grad_node_hooks():
    def prog(T):
        log = []
        x = leaf(T)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: log.append(("acc pre", go)))
        acc.register_hook(lambda gi, go: log.append(("acc post", gi, go)))
        x.register_hook(lambda g: log.append(("x", g)))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post acc"))
        y.sum().backward()
        return log, acc.name(), type(acc).__name__
    same(prog)


def test_node_metadata_and_names():
    def prog(T):
        x = leaf(T)
        y = x * 2
        y.grad_fn.metadata["k"] = 1
        nf = y.grad_fn.next_functions
        return (y.grad_fn.name(), y.grad_fn.metadata, type(nf[0][0]).__name__, nf[1],
                isinstance(y.grad_fn, T.autograd.graph.Node), repr(y.grad_fn).split(" ")[0])
    same(prog)


@pytest.mark.parametrize("case", ["pre_shape", "pre_count", "post_shape", "post_count", "post_dtype"])
def test_node_hook_returning_a_bad_value(case):
    def prog(T):
        x = leaf(T)
        y = x * 2
        if case == "pre_shape":
            y.grad_fn.register_prehook(lambda go: (go[0].sum(),))
        elif case == "pre_count":
            y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
        elif case == "post_shape":
            y.grad_fn.register_hook(lambda gi, go: (gi[0].sum(), None))
        elif case == "post_count":
            y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        else:
            y.grad_fn.register_hook(lambda gi, go: (gi[0].double(), None))
        y.sum().backward()
    fragment = {"pre_shape": "has changed the size of value", "post_shape": "has changed the size of value",
                "post_dtype": "has changed the type of value",
                "pre_count": "has returned an incorrect number of values (got 2, but expected 1)",
                "post_count": "has returned an incorrect number of values (got 1, but expected 2)"}[case]
    ours, _ = same_error(prog, "hook '<lambda>' " + fragment)
    assert "MulBackward0" in str(ours)  # names the node


# ---- a hook returning the wrong shape / dtype -----------------------------------------------
@pytest.mark.parametrize("where", ["leaf", "non-leaf"])
@pytest.mark.parametrize("bad", ["shape", "dtype", "not a tensor"])
def test_tensor_hook_returning_a_bad_gradient(where, bad):
    def prog(T):
        x = leaf(T)
        t = x if where == "leaf" else x * 2
        hook = {"shape": lambda g: g.sum(), "dtype": lambda g: g.double(), "not a tensor": lambda g: 3}[bad]
        t.register_hook(hook)
        (t * 2).sum().backward()
    fragment = {"shape": "hook '<lambda>' has changed the size of value",
                "dtype": "hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor",
                "not a tensor": "expected Variable, but hook returned 'int'"}[bad]
    ours, _ = same_error(prog, fragment)
    assert ("leaf tensor of shape [2]" if where == "leaf" else "output 0 of MulBackward0") in str(ours)


# ---- register_multi_grad_hook -----------------------------------------------------------------
def test_multi_grad_hook_all_waits_for_every_participating_tensor():
    def prog(T):
        log = []
        a, b, c = leaf(T, [1, 2]), leaf(T, [3, 4]), leaf(T, [5, 6])
        h = T.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: log.append(("all", type(gs).__name__, gs)))
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        (a * b).sum().backward(retain_graph=True)      # c is not part of this graph: None
        (a * b * c).sum().backward()
        h.remove()
        (a * b * c).sum().backward()
        return log
    same(prog)


def test_multi_grad_hook_all_with_inputs_and_non_leaves():
    def prog(T):
        log = []
        x = leaf(T)
        a, b = x * 2, x * 3
        T.autograd.graph.register_multi_grad_hook((a, b), lambda gs: log.append(gs))
        (a * b).sum().backward(retain_graph=True)
        log.append(T.autograd.grad((a * b).sum(), a))
        (a * b).sum().backward(inputs=[b])
        return log
    same(prog)


def test_multi_grad_hook_all_refuses_a_leaf_during_autograd_grad_like_torch():
    def prog(T):
        x = leaf(T)
        y = x * 2
        T.autograd.graph.register_multi_grad_hook([x, y], lambda gs: None)
        T.autograd.grad((y * 3).sum(), [x])
    same_error(prog, "A leaf node was passed to _will_engine_execute_node")


def test_multi_grad_hook_any_fires_once_per_backward_and_its_result_is_ignored():
    def prog(T):
        log = []
        a, b = leaf(T, [1, 2]), leaf(T, [3, 4])
        T.autograd.graph.register_multi_grad_hook((a, b), lambda g: log.append(g) or g * 0, mode="any")
        (a * b * 2).sum().backward(retain_graph=True)
        (a * 3).sum().backward()
        return log, a.grad, b.grad
    same(prog)


def test_multi_grad_hook_bad_mode():
    same_error(lambda T: T.autograd.graph.register_multi_grad_hook((leaf(T),), print, mode="some"),
               "Expects mode to be one of ('all', 'any') but got some")


# ---- saved_tensors_hooks -----------------------------------------------------------------------
def test_saved_tensors_hooks_pack_at_save_unpack_in_backward():
    def prog(T):
        log = []
        x = leaf(T)

        def pack(t):
            log.append(("pack", t, T.is_grad_enabled(), (t * 1).requires_grad))
            return t * 1

        def unpack(t):
            log.append(("unpack", t))
            return t
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * x          # saves both inputs
            z = y.exp()        # saves its output
        log.append("backward")
        z.sum().backward()
        return log, x.grad
    same(prog)


def test_saved_tensors_hooks_may_pack_to_anything_and_skip_the_version_check():
    def prog(T):
        x = leaf(T)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.tolist(), lambda p: T.tensor(p)):
            y = x.exp()
        y.sum().backward()
        a = x * 1
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
            b = a * a
        a.add_(1)  # not detected behind hooks: the gradient uses the new value, as in torch
        b.sum().backward()
        return x.grad
    same(prog)


def test_saved_tensors_hooks_double_backward_and_nesting():
    def prog(T):
        log = []
        x = leaf(T)
        with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t.detach(), lambda t: t):
            with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t.detach(), lambda t: t):
                y = (x * x).exp()
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return log, g, gg
    same(prog)


def test_saved_tensors_hooks_in_a_custom_function_and_under_no_grad():
    def prog(T):
        log = []

        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                a = ctx.saved_tensors
                b = ctx.saved_tensors
                return g * a[0] * b[0]
        x = leaf(T)
        with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda p: log.append("unpack") or p):
            with T.no_grad():
                (x * 2).exp()   # nothing is saved without a graph
            y = F.apply(x)
        y.sum().backward()
        return log, x.grad
    same(prog)


def test_saved_tensors_hooks_errors():
    def bad_unpack(T):
        x = leaf(T)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 3):
            y = x.exp()
        y.sum().backward()
    same_error(bad_unpack, "Output of saved tensor unpack_hook expected to be a Tensor but got result of type int")

    def freed(T):
        x = leaf(T)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
            y = x.exp()
        y.sum().backward()
        y.sum().backward()
    same_error(freed, "Trying to backward through the graph a second time")


def test_disable_saved_tensors_hooks():
    def inside(T):
        with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    same_error(inside, "no hooks here")

    def around(T):
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
                pass
    same_error(around, "no hooks here")

    def plain(T):  # saving without hooks is fine while disabled
        x = leaf(T)
        with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            y = x.exp()
        y.sum().backward()
        return x.grad
    same(plain)


def test_save_on_cpu_is_transparent():
    def prog(T):
        x = leaf(T)
        with T.autograd.graph.save_on_cpu():
            y = (x * x).exp()
        y.sum().backward()
        return x.grad
    same(prog)


@pytest.mark.parametrize("T", LIBS, ids=["torch", "microtorch"])
def test_hook_handles_have_remove(T):
    x = leaf(T)
    y = x * 2
    handles = [x.register_hook(lambda g: g), y.register_hook(lambda g: g), x.register_post_accumulate_grad_hook(print),
               y.grad_fn.register_hook(lambda gi, go: None), y.grad_fn.register_prehook(lambda go: None),
               T.autograd.graph.register_multi_grad_hook([x, y], print)]
    for h in handles:
        h.remove()
        h.remove()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_torch_is_only_the_oracle():
    assert "torch" not in microtorch.__dict__ and torch is not microtorch


# ---- what the ops save (seen through pack hooks): what torch saves --------------------------
SAVING_OPS = {
    "add": lambda T, a, b: a + b, "sub": lambda T, a, b: a - b, "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b, "pow 2": lambda T, a, b: a ** 2, "pow tensor": lambda T, a, b: a ** b,
    "exp": lambda T, a, b: a.exp(), "log": lambda T, a, b: a.log(), "sin": lambda T, a, b: a.sin(),
    "cos": lambda T, a, b: a.cos(), "tanh": lambda T, a, b: a.tanh(), "sigmoid": lambda T, a, b: a.sigmoid(),
    "relu": lambda T, a, b: a.relu(), "sqrt": lambda T, a, b: a.sqrt(), "abs": lambda T, a, b: a.abs(),
    "neg": lambda T, a, b: -a, "sum": lambda T, a, b: a.sum(), "mean": lambda T, a, b: a.mean(),
    "matmul": lambda T, a, b: a @ b.t(), "max": lambda T, a, b: a.max(), "softmax": lambda T, a, b: a.softmax(-1),
    "log_softmax": lambda T, a, b: a.log_softmax(-1), "clamp": lambda T, a, b: a.clamp(0.2, 0.8),
    "select": lambda T, a, b: a[0], "view": lambda T, a, b: a.view(-1), "t": lambda T, a, b: a.t(),
    "reciprocal": lambda T, a, b: a.reciprocal(), "where": lambda T, a, b: T.where(a > 0.5, a, b),
    "maximum": lambda T, a, b: T.maximum(a, b), "cat": lambda T, a, b: T.cat([a, b]),
    "masked_fill": lambda T, a, b: a.masked_fill(a > 0.5, 0.0), "norm": lambda T, a, b: a.norm(),
    "prod": lambda T, a, b: a.prod(), "mm": lambda T, a, b: a.mm(b.t()), "mse_loss":
        lambda T, a, b: T.nn.functional.mse_loss(a, b), "linear": lambda T, a, b: T.nn.functional.linear(a, b),
    "mul by a number": lambda T, a, b: a * 2, "number times": lambda T, a, b: 2 * a,
    "div by a number": lambda T, a, b: a / 2, "number over": lambda T, a, b: 2 / a,
    "nll_loss sum": lambda T, a, b: T.nn.functional.nll_loss(a, T.tensor([0, 1, 2]), reduction="sum"),
    "cross_entropy weight": lambda T, a, b: T.nn.functional.cross_entropy(a, T.tensor([0, 1, 2]), weight=T.ones(4)),
    "cross_entropy": lambda T, a, b: T.nn.functional.cross_entropy(a, T.tensor([0, 1, 2])),
}
KNOWN_SAVING_DIFFERENCES = {}


@pytest.mark.parametrize("op", SAVING_OPS)
def test_ops_save_the_tensors_torch_saves(op):
    if op in KNOWN_SAVING_DIFFERENCES:
        pytest.xfail(KNOWN_SAVING_DIFFERENCES[op])

    def prog(T):
        a = T.tensor([[0.1 * (i + 4 * j + 1) for i in range(4)] for j in range(3)], requires_grad=True)
        b = T.tensor([[0.1 * (i + 4 * j + 2) for i in range(4)] for j in range(3)], requires_grad=True)
        shapes = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
            SAVING_OPS[op](T, a, b)
        return sorted(shapes)
    same(prog)
