"""Custom autograd.Functions against torch: both styles, every ctx feature, errors naming the
Function, grad_fn names, double backward, once_differentiable."""
import warnings

import pytest
import torch

import microtorch
from autograd_oracle import same, same_error


def leaf(T, values=(1.0, 2.0)):
    return T.tensor(list(values), requires_grad=True)


def make(T, name, forward, backward, setup_context=None, **extra):
    """A Function subclass of T.autograd.Function named `name` (so grad_fn names compare)."""
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward), **extra}
    if setup_context is not None:
        body["setup_context"] = staticmethod(setup_context)
    return type(name, (T.autograd.Function,), body)


def cube(T):
    def forward(ctx, x, k=3):
        ctx.save_for_backward(x)
        ctx.k = k
        return x ** k

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.k * x ** (ctx.k - 1), None
    return make(T, "Cube", forward, backward)


def test_forward_backward_style_non_tensor_args_and_name():
    def prog(T):
        Cube = cube(T)
        x = leaf(T)
        y = Cube.apply(x, 3)
        y.sum().backward()
        return y, x.grad, y.grad_fn.name(), type(y.grad_fn).__name__, y.grad_fn.next_functions[0][1]
    assert same(prog)[1][2] == "CubeBackward"


def test_double_backward_through_a_custom_function():
    def prog(T):
        Cube = cube(T)
        x = leaf(T)
        y = Cube.apply(x, 3)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = T.autograd.grad(gg.sum(), x)
        return g, gg, ggg, g.grad_fn.name()
    same(prog)


def test_a_backward_made_of_other_custom_functions_supports_higher_order():
    def prog(T):
        def cos_forward(ctx, x):
            ctx.save_for_backward(x)
            return x.cos()

        def cos_backward(ctx, g):
            (x,) = ctx.saved_tensors
            return -g * x.sin()
        Cos = make(T, "Cos", cos_forward, cos_backward)

        def sin_forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        def sin_backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * Cos.apply(x)
        Sin = make(T, "Sin", sin_forward, sin_backward)
        x = leaf(T)
        (g,) = T.autograd.grad(Sin.apply(x).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg, g.grad_fn.name()
    same(prog)


def test_setup_context_style_binds_keyword_and_default_arguments():
    def prog(T):
        def forward(x, k=2):
            return x * k, x + k

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*output)
            ctx.mark_non_differentiable(output[1])
            ctx.inputs_seen = len(inputs)
            ctx.k = inputs[1]

        def backward(ctx, g, g2):
            a, b = ctx.saved_tensors
            return g * ctx.k, None
        F = make(T, "Scale", forward, backward, setup_context)
        x = leaf(T)
        results = []
        for args, kwargs in [((x,), {}), ((x, 3), {}), ((x,), {"k": 5})]:
            x.grad = None
            a, b = F.apply(*args, **kwargs)
            a.sum().backward()
            results.append((a, b.requires_grad, a.grad_fn.inputs_seen, x.grad))
        return results
    same(prog)


def test_vjp_may_be_defined_instead_of_backward():
    def prog(T):
        F = type("Vjp", (T.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2),
                                                  "vjp": staticmethod(lambda ctx, g: g * 5)})
        x = leaf(T)
        F.apply(x).sum().backward()
        return x.grad
    same(prog)


def test_several_outputs_materialized_grads_and_returning_none():
    def prog(T):
        log = []

        def forward(ctx, x):
            return x * 2, x * 3

        def backward(ctx, g1, g2):
            log.append((g1, g2))
            return g1 * 2 + g2 * 3
        F = make(T, "Two", forward, backward)
        x = leaf(T)
        a, b = F.apply(x)
        a.sum().backward()
        return log, x.grad, a.grad_fn is b.grad_fn, [t.grad_fn.name() for t in (a, b)]
    same(prog)


def test_set_materialize_grads_false_passes_none():
    def prog(T):
        log = []

        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x * 2, y * 3

        def backward(ctx, ga, gb):
            log.append((ga is None, gb is None))
            return (ga * 2 if ga is not None else None), (gb * 3 if gb is not None else None)
        F = make(T, "NoMat", forward, backward)
        x, y = leaf(T), leaf(T)
        a, b = F.apply(x, y)
        b.sum().backward()
        return log, x.grad, y.grad
    same(prog)


def test_mark_non_differentiable_and_integer_outputs():
    def prog(T):
        log = []

        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return x.max(), idx, x.long()

        def backward(ctx, gv, gidx, glong):
            log.append((gidx, glong))
            x, idx = ctx.saved_tensors
            g = T.zeros_like(x)
            g[idx] = gv
            return g
        F = make(T, "Max", forward, backward)
        x = leaf(T, [1.0, 3.0, 2.0])
        v, idx, as_long = F.apply(x)
        v.backward()
        return x.grad, idx.requires_grad, as_long.requires_grad, v.requires_grad, log
    same(prog)

    def only_output_non_differentiable(T):
        F = make(T, "ND", lambda ctx, x: (lambda y: (ctx.mark_non_differentiable(y), y)[1])(x * 2),
                 lambda ctx, g: g)
        y = F.apply(leaf(T))
        assert not y.requires_grad and y.grad_fn is None
        y.sum().backward()
    same_error(only_output_non_differentiable, "element 0 of tensors does not require grad and does not have a grad_fn")


def test_non_tensor_outputs_are_returned_as_they_are():
    def prog(T):
        log = []

        def forward(ctx, x):
            return x * 2, 5, None

        def backward(ctx, g, g2, g3):
            log.append((g2, g3))
            return g
        F = make(T, "Mixed", forward, backward)
        x = leaf(T)
        a, five, none = F.apply(x)
        a.sum().backward()
        return five, none, log, x.grad
    same(prog)


def test_needs_input_grad():
    def prog(T):
        log = []

        def forward(ctx, x, y, k):
            log.append(ctx.needs_input_grad)
            return x * y * k

        def backward(ctx, g):
            log.append(ctx.needs_input_grad)
            return g, None, None
        F = make(T, "Nig", forward, backward)
        x = leaf(T)
        F.apply(x, T.ones(2), 2).sum().backward()
        with T.no_grad():
            F.apply(x, T.ones(2), 2)
        return log, x.grad
    same(prog)


def test_saved_tensors_version_check_and_release():
    def modified(T):
        Cube = cube(T)
        a = leaf(T) * 1
        y = Cube.apply(a, 2)
        a.add_(1)
        y.sum().backward()
    ours, _ = same_error(modified, "[torch.FloatTensor [2]], which is output 0 of Add, is at version 1; expected "
                                   "version 0 instead.")
    assert "CubeBackward" in str(ours)

    def after_backward(T):
        Cube = cube(T)
        y = Cube.apply(leaf(T))
        y.sum().backward()
        return y.grad_fn.saved_tensors
    same_error(after_backward, "Trying to backward through the graph a second time")

    def nothing_saved_after_backward(T):
        F = make(T, "Nothing", lambda ctx, x: x * 2, lambda ctx, g: g)
        y = F.apply(leaf(T))
        y.sum().backward()
        return y.grad_fn.saved_tensors
    same_error(nothing_saved_after_backward, "Trying to backward through the graph a second time")

    def retained(T):
        Cube = cube(T)
        y = Cube.apply(leaf(T))
        y.sum().backward(retain_graph=True)
        return y.grad_fn.saved_tensors
    same(retained)


def test_saving_outputs_intermediates_and_none():
    def prog(T):
        def forward(ctx, x):
            out = x.exp()
            tmp = x * 2
            ctx.save_for_backward(out, tmp, None)
            return out

        def backward(ctx, g):
            out, tmp, nothing = ctx.saved_tensors
            assert nothing is None
            return g * out + 0 * tmp
        F = make(T, "SaveOut", forward, backward)
        x = leaf(T)
        y = F.apply(x)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg
    same(prog)

    def save_a_number(T):
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2
        make(T, "SaveInt", forward, lambda ctx, g: g).apply(leaf(T)).sum().backward()
    same_error(save_a_number, "save_for_backward can only save variables, but argument 1 is of type int")


def test_mark_dirty():
    def forward(ctx, x, y):
        x.add_(y)
        ctx.mark_dirty(x)
        return x

    def backward(ctx, g):
        return g, g

    def prog(T):
        F = make(T, "AddInPlace", forward, backward)
        x, y = leaf(T), leaf(T, [3.0, 4.0])
        a = x * 1
        v0 = a._version
        out = F.apply(a, y)
        facts = (out is a, a._version - v0, a.grad_fn.name())
        (a * T.tensor([1.0, 2.0])).sum().backward()
        return facts, x.grad, y.grad
    same(prog)

    def saved_then_dirtied(T):
        F = make(T, "AddInPlace", forward, backward)
        x, y = leaf(T), leaf(T, [3.0, 4.0])
        a = x * 1
        b = a * a
        F.apply(a, y)
        b.sum().backward()
    same_error(saved_then_dirtied, "which is output 0 of AddInPlace, is at version 2; expected version 0 instead.")

    def leaf_dirtied(T):
        F = make(T, "AddInPlace", forward, backward)
        F.apply(leaf(T), leaf(T))
    same_error(leaf_dirtied, "a leaf Variable that requires grad has been used in an in-place operation.")

    def view_dirtied(T):  # the base's history is rewritten (CopySlices), as for built-in in-place ops
        F = make(T, "AddInPlace", forward, backward)
        x, y = leaf(T), leaf(T, [3.0, 4.0])
        a = x * 1
        v = a[1:]
        F.apply(v, y[1:])
        names = (a.grad_fn.name(), v.grad_fn.name())
        (a * T.tensor([1.0, 2.0])).sum().backward()
        return names, x.grad, y.grad
    same(view_dirtied)

    def buffer_dirtied(T):
        F = make(T, "AddInPlace", forward, backward)
        y = leaf(T, [3.0, 4.0])
        a = T.zeros(2)
        out = F.apply(a, y)
        return out is a, a.grad_fn.name(), a.requires_grad
    same(buffer_dirtied)


def test_mark_dirty_with_a_tensor_that_is_not_an_input_warns():
    for T in (torch, microtorch):
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y
        F = make(T, "DirtyOther", forward, lambda ctx, g: g)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            F.apply(leaf(T)).sum().backward()
        assert any("mark_dirty() received a tensor that was not an input" in str(x.message) for x in w), T


def test_returning_an_input_unchanged_gives_a_new_tensor():
    def prog(T):
        F = make(T, "Identity", lambda ctx, x: x, lambda ctx, g: g * 2)
        x = leaf(T)
        y = F.apply(x)
        y.sum().backward()
        return y is x, y.grad_fn.name(), x.grad, y._version
    same(prog)


def test_no_input_requires_grad_or_no_grad_mode():
    def prog(T):
        Cube = cube(T)
        y = Cube.apply(T.tensor([1.0, 2.0]))
        with T.no_grad():
            z = Cube.apply(leaf(T))
        return y.requires_grad, y.grad_fn, z.requires_grad, z.grad_fn
    same(prog)


@pytest.mark.parametrize("case", ["too few", "too many", "too many non-None"])
def test_wrong_number_of_gradients_names_the_function(case):
    def prog(T):
        if case == "too few":
            F = make(T, "TooFew", lambda ctx, x, y: x * y, lambda ctx, g: g)
            F.apply(leaf(T), leaf(T)).sum().backward()
        elif case == "too many":
            F = make(T, "TooMany", lambda ctx, x: x * 2, lambda ctx, g: (g, g, None))
            F.apply(leaf(T)).sum().backward()
        else:  # extra trailing Nones are allowed, as in torch
            F = make(T, "ExtraNone", lambda ctx, x: x * 2, lambda ctx, g: (g, None, None))
            x = leaf(T)
            F.apply(x).sum().backward()
            return x.grad
    if case == "too many non-None":
        same(prog)
    else:
        expected = {"too few": "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)",
                    "too many": "function TooManyBackward returned an incorrect number of gradients (expected 1, "
                                "got 3)"}[case]
        same_error(prog, expected)


@pytest.mark.parametrize("case", ["scalar for vector", "longer", "broadcastable", "other dtype", "not a tensor",
                                  "for a non-tensor input", "for an input without grad"])
def test_gradients_of_the_wrong_shape_or_type(case):
    grads = {"scalar for vector": lambda T, g: g.sum(), "longer": lambda T, g: T.ones(3),
             "broadcastable": lambda T, g: T.ones(3, 2), "other dtype": lambda T, g: g.double(),
             "not a tensor": lambda T, g: 3.0}

    def prog(T):
        if case == "for a non-tensor input":
            F = make(T, "Bad", lambda ctx, x, k: x * k, lambda ctx, g: (g, g))
            x = leaf(T)
            F.apply(x, 3).sum().backward()
        elif case == "for an input without grad":
            F = make(T, "Bad", lambda ctx, x, y: x * y, lambda ctx, g: (g, g))
            x = leaf(T)
            F.apply(x, T.ones(2)).sum().backward()
        else:
            F = make(T, "Bad", lambda ctx, x: x * 2, lambda ctx, g: grads[case](T, g))
            x = leaf(T)
            F.apply(x).sum().backward()
        return x.grad
    fragments = {"scalar for vector": "Function BadBackward returned an invalid gradient at index 0 - got [] but "
                                      "expected shape compatible with [2]",
                 "longer": "Function BadBackward returned an invalid gradient at index 0 - got [3] but expected "
                           "shape compatible with [2]",
                 "not a tensor": "expected Variable or None (got float)",
                 "for a non-tensor input": "function BadBackward returned a gradient different than None at "
                                           "position 2, but the corresponding forward input was not a Variable"}
    if case in fragments:
        ours, _ = same_error(prog, fragments[case])
        assert "Bad" in str(ours)
    else:  # summed back / cast / dropped, as torch does
        same(prog)


def test_once_differentiable():
    def square(T):
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x
        return make(T, "Square", forward, backward)

    def once(T):
        x = leaf(T)
        (g,) = T.autograd.grad(square(T).apply(x).sum(), x)
        (g2,) = T.autograd.grad(square(T).apply(x).sum(), x, create_graph=True)  # seed has no graph
        return g, g2.requires_grad
    same(once)

    def twice(T):
        x = leaf(T)
        y = square(T).apply(x)
        (g,) = T.autograd.grad((y * y).sum(), x, create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
        g.sum().backward()
    same_error(twice, "trying to differentiate twice a function that was marked with @once_differentiable")


def test_hooks_on_a_custom_function_node():
    def prog(T):
        log = []
        Cube = cube(T)
        x = leaf(T)
        y = Cube.apply(x)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go)))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        y.register_hook(lambda g: log.append(("y", g)))
        y.sum().backward()
        return log, x.grad
    same(prog)


def test_class_usage_mistakes():
    def instantiate(T):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = cube(T)()
        return [type(x.message).__name__ for x in w], f
    for T in (torch, microtorch):
        kinds, f = instantiate(T)
        assert kinds == ["DeprecationWarning"]
    same_error(lambda T: cube(T)()(leaf(T)), "Legacy autograd function with non-static forward method is deprecated")
    same_error(lambda T: type("NoBackward", (T.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2)})
               .apply(leaf(T)).sum().backward(),
               "You must implement either the backward or vjp method for your custom autograd.Function to use it with "
               "backward mode AD.")


def test_the_built_in_ops_are_functions_too():
    from microtorch.autograd.function import BackwardCFunction, Function
    from microtorch.ops.elementwise import Mul
    assert issubclass(Mul, Function)
    x = leaf(microtorch)
    y = x * x
    assert isinstance(y.grad_fn, BackwardCFunction) and y.grad_fn._forward_cls is Mul
    assert isinstance(y.grad_fn, microtorch.autograd.graph.Node)


@pytest.mark.parametrize("case", ["view output modified", "base of a view output modified",
                                  "returned input modified", "view output used after its base changed"])
def test_outputs_that_are_views_of_inputs_refuse_in_place_like_torch(case):
    def prog(T):
        def forward(ctx, x):
            return x if case == "returned input modified" else x.view(-1)

        def backward(ctx, g):
            return g.view(2, 2) if g.dim() == 1 else g
        F = make(T, "ViewOut", forward, backward)
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a = x * 1
        y = F.apply(a)
        facts = (y._base is a, y._version)
        if case in ("view output modified", "returned input modified"):
            y.mul_(2)
        else:
            a.mul_(2)
            (y.grad_fn.name(), y.sum().backward())
        return facts
    fragment = ("is a view and its base or another view of its base has been modified inplace. This view was created "
                "inside a custom Function" if "base" in case or "after" in case else
                "is a view and is being modified inplace. This view was created inside a custom Function")
    ours, _ = same_error(prog, "Output 0 of ViewOut " + fragment)
    assert "cloning the output of the custom Function" in str(ours)


def test_outputs_that_are_views_work_without_in_place():
    def prog(T):
        F = make(T, "ViewOut", lambda ctx, x: x.view(-1), lambda ctx, g: g.view(2, 2))
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a = x * 1
        y = F.apply(a)
        (y * T.arange(4.0)).sum().backward()
        return y._base is a, y.grad_fn.name(), x.grad
    same(prog)


def test_a_non_tensor_argument_gets_no_edge_as_torch():
    """torch gives a custom Function's node an edge per Tensor argument only: next_functions, the
    gradients a node hook sees, and the gradients that reach the inputs; backward still returns one
    gradient per argument of forward."""
    def prog(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, k, x, name, y):
                ctx.k = k
                return x * k + y

            @staticmethod
            def backward(ctx, g):
                return None, g * ctx.k, None, g

        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0])
        z = Scale.apply(3.0, x, "scale", y)
        seen = []
        z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_inputs)))
        edges = [(n.name() if n is not None else None, nr) for n, nr in z.grad_fn.next_functions]
        z.sum().backward()
        return edges, z.grad_fn.needs_input_grad, seen, x.grad
    same(prog)


def test_once_differentiable_error_node_is_torchs():
    """Under create_graph, once_differentiable's results hang from one torch::autograd::Error node with an edge per
    output (to a detached leaf, or None for a None gradient), as torch's; differentiating through it raises."""
    import torch

    def graph(T):
        from importlib import import_module
        once = import_module(T.__name__ + ".autograd.function").once_differentiable

        class Two(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            @once
            def backward(ctx, g):
                return g * 2, None

        def shape(node, depth=0):
            if node is None or depth > 3:
                return None
            name = type(node).__name__ if node.name().startswith("torch::") else node.name()
            return name, [shape(n, depth + 1) for n, _ in node.next_functions]
        x, y = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([3.0, 4.0], requires_grad=True)
        (gx,) = T.autograd.grad((Two.apply(x, y) * y).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="differentiate twice"):
            gx.sum().backward()
        return shape(gx.grad_fn), gx.tolist()
    assert graph(microtorch) == graph(torch) == (("Error", [("AccumulateGrad", []), None]), [6.0, 8.0])
