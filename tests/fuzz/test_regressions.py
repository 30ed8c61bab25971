"""Each class of difference the fuzzer found, as a small hand-written program compared with torch.

A case is a fuzz Program (tests/fuzz/program.py) run on both libraries by the fuzzer's own runner,
so everything it compares is compared here too: values, grad_fn names and graph nodes, flags,
exception types, first-order grads and their requires_grad, second-order grads, and .grad after
backward() (seed 1 makes the runner do all three).
"""
import numpy as np
import pytest

from .check import check_program
from .compare import real
from .program import Leaf, Program, Step


def _program(leaves, steps):
    """leaves: {name: (array, requires_grad)}; steps: [(op, expr over L/F and names)], bound to v0, v1..."""
    prog = Program(1, [Leaf(k, np.asarray(a, dtype=np.float64), rg) for k, (a, rg) in leaves.items()], [])
    for i, (op, expr) in enumerate(steps):
        prog.steps.append(Step(f"v{i}", op, expr, inplace=op == "inplace"))
    return prog


def assert_like_torch(leaves, steps):
    diffs = real(check_program(_program(leaves, steps)))
    assert not diffs, diffs


X0 = {"x": ([[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]], True)}  # a zero in each row
X00 = {"x": ([[0.0, 0.0, 2.0], [0.0, 1.0, -1.0]], True)}  # two zeros in a row


@pytest.mark.parametrize("leaves", [X0, X00], ids=["one-zero", "two-zeros"])
@pytest.mark.parametrize("expr", ["L.prod(x)", "L.prod(x, dim=1)", "L.prod(x, dim=0, keepdim=True)",
                                  "x.prod(-1) * 2.0"])
def test_prod_at_zero_has_a_second_order(leaves, expr):
    """torch's product-of-the-others is differentiable (it has a graph with create_graph=True)."""
    assert_like_torch(leaves, [("prod", expr)])


@pytest.mark.parametrize("base", [[0.0, 0.0, 1.5], [[0.0], [2.0]]])
def test_pow_tensor_exponent_at_zero_base(base):
    """d/db 0^b is 0 for b >= 0, and its own derivative is 0 * log 0 = NaN in torch."""
    leaves = {"a": (base, False), "b": ([2.0, 0.0, 0.5], True)}
    assert_like_torch(leaves, [("pow", "L.pow(a, b)")])


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.5, 1, float("inf")])
def test_norm_at_a_zero(p):
    """a zero entry and a zero norm: torch masks the division, so its second order is NaN there."""
    leaves = {"x": ([[-2.0, 0.0, 1.0], [0.0, 0.0, 0.0]], True)}
    assert_like_torch(leaves, [("norm", f"L.norm(x, p={p!r}, dim=1)")])


def test_relu_passes_the_gradient_of_a_nan():
    """torch's threshold_backward zeroes where result <= 0; NaN is not <= 0, so its gradient flows."""
    leaves = {"x": ([[-1.0, 2.0, 0.0, 3.0]], False), "a": ([-2.0], True)}
    steps = [("std", "L.std(x, dim=0, correction=2, keepdim=False)"), ("sub", "L.sub(v0, a)"), ("relu", "L.relu(v1)")]
    assert_like_torch(leaves, steps)


def test_cross_entropy_under_an_infinite_gradient():
    """nll_loss writes the gradient into the target entries only: the others stay 0, not 0 * inf."""
    leaves = {"x": ([[2.0, -2.0, 0.0, 1.0], [0.0, 0.0, 1.0, -1.0]], True), "z": ([0.0], True)}
    steps = [("cross_entropy", "F.cross_entropy(x, L.tensor([3, 2]), reduction='none')"), ("div", "L.div(v0, z)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("b", [[0.0, 0.0], [0.0, 2.0]])
def test_div_by_zero_differentiates_twice_as_torch(b):
    """torch's d(a/b)/db is -g (a/b)/b: its inf and nan at b = 0 are torch's."""
    leaves = {"a": ([0.1, -2.0], True), "b": (b, True)}
    assert_like_torch(leaves, [("div", "L.div(a, b)")])


@pytest.mark.parametrize("views", ["v0.split([1, 2], dim=0)[1]", "v0.unbind(0)[0]", "v0.chunk(3)[2]"])
def test_a_split_output_cannot_be_used_after_its_base_changed(views):
    """torch raises when the view is next recorded (its grad_fn cannot be regenerated), not at backward."""
    leaves = {"x": ([-1.0, 0.5, 2.0], True)}
    steps = [("sin", "L.sin(x)"), ("split", views), ("inplace", "v0.mul_(2)"), ("mul", "v1 * 2")]
    assert_like_torch(leaves, steps)


def test_gather_saves_its_input():
    """gather's backward needs only the input's size, but torch saves the input: an in-place change fails."""
    leaves = {"x": ([[2.0, -1.0]], True)}
    steps = [("sin", "L.sin(x)"), ("gather", "L.gather(v0, 1, L.tensor([[1, 1, 0]]))"), ("inplace", "v0.div_(-2)")]
    assert_like_torch(leaves, steps)


Z = {"z": ([[0.0], [0.0]], True), "n": ([[2.0, -1.0]], True), "s": (0.0, True), "v": ([0.05, -0.2], True),
     "m": ([[[-0.0]]], False)}


@pytest.mark.parametrize("expr", [
    "L.rsqrt(z @ n)",                           # k = 1: torch's gemm multiplies, 0 * -1 is -0.0
    "1.0 / L.matmul(z.unsqueeze(0).expand(2, 2, 1), n)",  # the same, folded from 3-d
    "1.0 / L.einsum(',a->', s, v)",             # v is summed first, then multiplied: 0 * -0.15 = -0.0
    "1.0 / L.einsum(',abc->a', s, m)",          # size-1 labels are dropped, not summed
    "1.0 / L.einsum('ij,jk->ik', z, n)",        # a size-1 contraction is a product
    "1.0 / L.einsum('ij,kj->ik', z, z)",        # a real contraction adds from +0.0, as numpy
])
def test_the_sign_of_a_zero_product(expr):
    """torch's order of work decides whether a zero product is -0.0, and 1/x tells it apart (-inf)."""
    product, _, rest = expr.partition(" / ")
    op = "einsum" if "einsum" in rest else "matmul"
    assert_like_torch(Z, [(op, rest), ("div", f"{product} / v0")] if rest else [(op, expr)])


@pytest.mark.parametrize("expr", ["L.clamp(x, min=0)", "L.clamp(x, max=0.0)", "L.clamp(x, min=-x)", "L.relu(x)",
                                  "F.elu(x)", "L.maximum(x, -x)", "L.minimum(x, -x)", "L.clamp_min(x, 0.0)",
                                  "L.clamp_max(x, 0.0)"])
def test_min_and_max_keep_a_negative_zero(expr):
    """torch keeps x unless the bound is strictly beyond it: clamp(-0.0, min=0) is -0.0 (numpy: +0.0)."""
    leaves = {"x": ([-0.0, 0.0, 1.0, -2.0], True)}
    assert_like_torch(leaves, [("value", f"1.0 / {expr}")])


def test_prod_over_a_size_one_dim_with_a_zero():
    """the product of no others is a constant 1: the gradient has no graph (its requires_grad is torch's)."""
    assert_like_torch({"x": ([[1.0, -1.0, 0.0]], True)}, [("prod", "L.prod(x, dim=0, keepdim=True)")])


@pytest.mark.parametrize("steps", [
    [("permute", "x.reshape(1, 2, 3).permute(2, 1, 0)"),
     ("cross_entropy", "F.cross_entropy(v0, L.tensor([[0], [1], [1]]), reduction='none')")],
    [("cross_entropy", "F.cross_entropy(x[:0], L.zeros((0, 3), dtype=L.float64))")],  # probabilities, empty batch
    [("cross_entropy", "F.cross_entropy(x[:0].unsqueeze(-1), L.zeros((0, 1), dtype=L.int64), reduction='none')")],
])
def test_cross_entropy_layout_and_empty_batches(steps):
    """log_softmax's result is contiguous in torch; an empty mean is a NaN filled in place; an empty 3-d input."""
    assert_like_torch({"x": ([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], True)}, steps)


def test_flip_keeps_the_layout():
    """torch's flip of a transposed tensor is transposed too: reshape must then copy (UnsafeViewBackward0)."""
    leaves = {"x": ([[[1.0, 0.0, -1.0], [2.0, 3.0, 4.0]]], True)}
    assert_like_torch(leaves, [("transpose", "x.transpose(2, 1)"), ("flip", "L.flip(v0, (0, 1, 2))"),
                               ("reshape", "v1.reshape((6,))")])


@pytest.mark.parametrize("steps", [
    [("expand", "x.expand(3, 2, 3)"), ("inplace", "v0.zero_()")],
    [("expand", "x.expand(3, 2, 3)"), ("inplace", "v0.fill_(2.5)")],
    [("expand", "x.expand(3, 2, 3)"), ("setitem", "v0.__setitem__(0, 1.5) or v0")],  # x[0] has no repeats
    [("expand", "x[:1].expand(3, 2, 3)"), ("setitem", "v0.__setitem__(0, 1.5) or v0")],  # refused: it has
    [("expand", "x[:1].expand(3, 3)"), ("view", "v0.diagonal()"), ("inplace", "v1.add_(1.5)")],  # no overlap
    [("expand", "x[:, :0].expand(4, 2, 0)"), ("inplace", "v0.mul_(2)")],  # nothing to write
    [("expand", "x.expand(3, 2, 3)"), ("inplace", "v0.mul_(2)")],  # torch refuses: the same element twice
    [("exp", "L.exp(y)"), ("expand", "v0.expand(3, 2, 3)"), ("inplace", "v1.fill_(2.0)")],  # with a history
])
def test_writing_into_an_expanded_tensor(steps):
    """fill_/zero_ write one value, so torch allows them on an expand(); other ops only without overlap."""
    assert_like_torch({"x": ([[0.0, -2.0, 0.0], [1.0, 2.0, 3.0]], False), "y": ([[0.5, 1.0, 2.0]], True)}, steps)


@pytest.mark.parametrize("reduction", ["L.std(v0, dim=-1)", "L.sum(v0, dim=0)", "L.amax(v0, dim=1)",
                                       "L.logsumexp(v0, dim=-1)", "L.max(v0, dim=-1).values", "L.norm(v0, dim=2)"])
def test_reductions_are_contiguous(reduction):
    """torch's reductions return contiguous tensors whatever the input's layout: reshape is then a view."""
    leaves = {"x": (np.arange(24.0).reshape(2, 3, 4) / 7, True)}
    assert_like_torch(leaves, [("permute", "x.permute(2, 0, 1)"), ("sum", reduction), ("reshape", "v1.reshape(-1)")])


def test_matmul_folds_an_expanded_batch_as_torch():
    """a size-1 dim has stride 0 in numpy's broadcast_to; torch keeps a stride for which folding needs no copy."""
    leaves = {"x": (np.full((1, 3, 4, 1), -0.5), True), "v": ([1.3, 0.2, -0.4], False)}
    assert_like_torch(leaves, [("expand", "x.expand((-1, 3, -1, 3))"), ("matmul", "L.matmul(v0, v)")])


@pytest.mark.parametrize("steps", [
    [("t", "x.t()"), ("div", "L.div(v0, y)"), ("reshape", "v1.reshape((-1,))")],        # transposed like x.t()
    [("t", "x.t()"), ("div", "L.div(y, v0)"), ("reshape", "v1.reshape((-1,))")],        # C order like y
    [("permute", "z.permute((1, 0))"), ("add", "L.add(v0, w)"), ("view", "v1.view((6, 4, -1, 1))")],  # view refuses
    [("t", "x.t()"), ("where", "L.where(y > 0, v0, y)"), ("reshape", "v1.reshape((-1,))")],  # the condition decides
])
def test_elementwise_results_are_laid_out_as_torch(steps):
    """torch orders the result's dims by its operands' strides (the first operand that tells them apart)."""
    leaves = {"x": (np.arange(8.0).reshape(4, 2), True), "y": (np.ones((2, 4)) * 3, True),
              "z": (np.arange(12.0).reshape(3, 4), False), "w": (np.ones((2, 4, 3)), False)}
    assert_like_torch(leaves, steps)


def test_prod_with_two_zeros_under_backward_is_zero():
    """without create_graph, torch's prod backward with two zeros or more returns zeros, even for a NaN grad."""
    leaves = {"x": ([[0.0, 0.0]], True)}
    prog = _program(leaves, [("prod", "L.prod(x)"), ("std", "L.std(v0, dim=None, correction=2, keepdim=False)")])
    prog.seed = 3  # the runner's backward()-only programs
    assert not real(check_program(prog))


def test_mean_of_nothing_differentiates_twice_as_torch():
    """torch's mean backward expands, then divides: over an empty dim the second order is 0, not 0/0."""
    leaves = {"x": ([2.0], True), "w": ([-1.0], True)}
    assert_like_torch(leaves, [("getitem", "x[-1:-1]"), ("mean", "v0.mean(dim=(0,), keepdim=True)"),
                               ("matmul", "L.matmul(v1, w)")])


def test_cross_entropy_of_one_class_is_plus_zero():
    """a 1-d input: torch's nll_loss subtracts from 0 (so the loss is +0.0 where numpy's -x gives -0.0)."""
    leaves = {"x": ([-1.0], True)}
    assert_like_torch(leaves, [("cross_entropy", "F.cross_entropy(x, L.tensor(0), reduction='none')"),
                               ("pow_scalar", "L.pow(v0, -0.5)")])


V = 1 + np.tanh(1.0)  # three of them sum and divide to V + 2e-16


@pytest.mark.parametrize("steps", [
    [("std", "L.std(x, dim=0, unbiased=False, keepdim=True)")],
    [("sqrt", "L.sqrt(x * x)"), ("std", "L.std(v0, dim=(0,), correction=0)")],
    [("expand", "x[:1].expand(3, -1)"), ("sinh", "L.sinh(v0)"), ("std", "L.std(v0, dim=-2, correction=0)")],
    [("var", "L.var(x, dim=0)"), ("div", "1 / v0")],
    [("std", "L.std(x[:, :1], dim=0, correction=0)")],  # to one number: two passes, 2e-16 in torch too
])
def test_std_of_equal_values_is_an_exact_zero(steps):
    """(seeds 11225, 20532, 26122) torch reduces to several numbers with Welford's update, exact for
    equal values, so std's gradient is masked to 0 there; numpy's two passes left 2e-16."""
    leaves = {"x": ([[V, V, 2.0], [V, V, 0.5], [V, V, -1.0]], True)}
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("leaves, steps", [
    ({"x": ([[[-2.0, 1.0, 0.0]], [[0.0, 0.0, 2.0]]], True)},  # seed 28067: a nan gradient into 3 zeros
     [("prod", "L.prod(x)"), ("var", "L.var(v0, dim=None, correction=1, keepdim=True)")]),
    ({"x": ([[0.0, 0.0, 0.0]], True)}, [("sqrt", "L.sqrt(x)"), ("prod", "L.prod(v0)")]),  # seed 3313
    ({"x": ([[2.0, 0.0, 3.0, 0.0], [1.0, -1.0, 0.0, 2.0]], True), "z": ([0.0, 1.0, 0.0, 2.0], True)},
     [("cumprod", "L.cumprod(x, 1)"), ("div", "v0 / z")]),
    ({"x": ([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]], True)},  # complex: the gradient is conjugated
     [("cumprod", "L.cumprod(x.to(L.complex128) * L.tensor([1 + 2j, 0.5 - 1j, 2j]), 1).abs()")]),
])
def test_prod_and_cumprod_at_zeros_under_a_non_finite_gradient(leaves, steps):
    """torch's prod at a zero is the product of exclusive cumprods both ways, and cumprod's first-order
    gradient at a zero is 0 after the first zero of a slice whatever the gradient there (nan, inf)."""
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_differentiates_as_torch(approximate):
    """(seed 3283) gelu's gradient is torch's GeluBackwardBackward0 op: its derivative in x is
    (gg * g) * gelu''(x), so an infinite g at x = 0 gives -inf, not the nan of a product rule."""
    leaves = {"x": ([[0.0, -1.5, 2.0]], True), "p": ([0.648], False)}
    steps = [("F.gelu", f"F.gelu(x, approximate={approximate!r})"), ("neg", "L.neg(v0)"), ("pow", "L.pow(v1, p)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("equation", ["'ab->b'", "'ab->ba'", "'aa->'", "'ab->'"])
def test_one_operand_einsum_saves_nothing(equation):
    """(seed 88) torch's one-operand einsum is a sum or a view, which saves no values: changing the
    operand in place afterwards does not spoil the gradient."""
    leaves = {"x": ([[1.0, -2.0], [0.5, 3.0]], True)}
    steps = [("mul", "x * 1.5"), ("einsum", f"L.einsum({equation}, v0)"), ("inplace", "v0.mul_(2)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("op", ["v1.clamp_(min=0)", "v1.mul_(e)"])
def test_the_gradient_through_an_empty_rebased_view_has_no_graph(op):
    """(seeds 9376, 5741) torch's as_strided_backward of an empty (regenerated) view returns plain
    zeros, so a gradient that only passes there does not require grad under create_graph; but
    CopySlices still copies the in-place op's own gradient (here from e) into the base's."""
    leaves = {"x": ([[-1.0, 2.0]], True), "e": (np.zeros((1, 0)), True)}
    steps = [("add", "x + 1"), ("getitem", "v0[..., 2:]"), ("inplace", op),
             ("logsumexp", "L.logsumexp(v2, dim=0, keepdim=True)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("steps", [
    [("getitem", "x[:1, :1]"), ("einsum", "L.einsum('abc,cb->c', y, v0)"),  # seed 1816
     ("setitem", "y.__setitem__(0, 2.0) or y")],
    [("getitem", "x[0, :1]"), ("einsum", "L.einsum('a,a->', y[0, :, 0], v0)"), ("inplace", "y.mul_(2)")],  # 3782
    [("getitem", "x[0]"), ("einsum", "L.einsum('abc,b->c', y, v0)"), ("inplace", "y.mul_(2)")],  # a: summed first
    [("mul", "x * 2"), ("einsum", "L.einsum('ab,bc->ac', v0, y[0])"), ("inplace", "v0.mul_(2)")],
    [("mul", "x * 2"), ("einsum", "L.einsum('ab,bc->ac', v0, y[0])"), ("inplace", "y.mul_(2)")],  # raises
])
def test_two_operand_einsum_saves_what_torch_saves(steps):
    """torch sums a label only one operand has first (SumBackward1) and keeps that sum, not the operand,
    for backward; and it keeps an operand only for the other's gradient. Changing such an operand in
    place later is allowed."""
    leaves = {"x": ([[1.0, -2.0], [0.5, 3.0]], True), "y": ([[[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.0], [1.0, -1.0]]], False)}
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("equation, y", [("'aac,d->ca'", [-1.0]), ("'aab,ab->b'", [[2.0], [0.0]])])
def test_einsum_diagonal_gradient_under_an_infinite_gradient(equation, y):
    """(seed 11776) the gradient of a repeated label is put back on the diagonal with zeros elsewhere,
    as torch's diagonal backward, not multiplied by an identity matrix (inf * 0 would be nan)."""
    leaves = {"x": ([[[0.0], [1.0]], [[1.0], [-1.0]]], True), "y": (y, False)}
    steps = [("mul", "x * 1"), ("einsum", f"L.einsum({equation}, v0, y)"), ("scalar", "2.0 / v1")]
    assert_like_torch(leaves, steps)


def test_einsum_sums_an_empty_label_first():
    """(seed 17525) a label of size 0 in one operand and 1 in the other is summed first, as torch: the
    product then holds a 0 that an infinite gradient turns into nan."""
    leaves = {"a": (np.zeros((0, 0)), False), "b": ([[-1.0]], True), "c": ([-1.0], False)}
    steps = [("einsum", "L.einsum('ab,cb->c', a, b)"), ("div", "L.div(c, v0)")]
    assert_like_torch(leaves, steps)


def test_cat_gives_an_empty_input_a_gradient_with_no_graph():
    """(seed 18740) torch's cat backward gives a 1-d empty input plain zeros, so under create_graph
    that gradient does not require grad even when the others do."""
    leaves = {"e": (np.zeros(0), True), "x": ([0.5], True)}
    steps = [("cat", "L.cat([e, e], dim=-1)"), ("mul", "v0 * x")]
    assert_like_torch(leaves, steps)


def test_backward_through_a_write_into_an_expanded_view_raises():
    """(seed 25368) zero_() on an expand() of a non-leaf is allowed, but torch's CopySlices backward
    copies the gradient back into the expanded layout and raises there."""
    leaves = {"x": ([[1.0], [2.0], [0.0]], True)}
    steps = [("mul", "x * 2"), ("expand", "v0.expand((1, 3, 2))"), ("inplace", "v1.zero_()")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("split", ["L.split(y, 1, dim=0)[0]", "y.unbind(0)[1]"])
def test_a_split_of_a_constant_whose_base_then_requires_grad(split):
    """(seed 29035) a split()/unbind() output made while its base needed no gradient: once the base is
    overwritten in place from a tensor that requires grad, torch refuses to give it a history."""
    leaves = {"y": ([[1.0, 2.0], [3.0, 4.0]], False), "x": ([[-1.0, 0.5], [2.0, 1.0]], True)}
    steps = [("split", split), ("inplace", "y.copy_(x)"), ("mul", "v0 * 2")]
    assert_like_torch(leaves, steps)


def test_a_scalar_to_the_power_of_a_tensor_is_contiguous():
    """(seed 20281) torch's scalar ** tensor is laid out contiguously whatever the exponent's layout, so a
    matmul reading it folds with a view, not a copy."""
    leaves = {"x": (np.zeros((2, 1, 2)), True), "w": ([[0.0], [1.0]], False)}
    steps = [("transpose", "x.transpose(-1, 0)"), ("scalar", "2.0 ** v0"), ("matmul", "v1 @ w")]
    assert_like_torch(leaves, steps)


def test_a_comparison_is_laid_out_as_torch():
    """(seed 21528) a comparison of a permuted and a contiguous tensor is laid out like the first
    operand (TensorIterator), and where() keeps that layout, so a later matmul folds with a view."""
    leaves = {"x": (np.arange(27.0).reshape(3, 3, 3) % 4, True), "w": ([1.0, 1.0, -1.0], False)}
    steps = [("mul", "x * 1"), ("permute", "v0.permute((1, 2, 0))"), ("where", "L.where(v1 > v0, v1, v0)"),
             ("matmul", "L.matmul(v2, w)")]
    assert_like_torch(leaves, steps)


def test_unsqueeze_keeps_torch_strides():
    """(seed 16975) unsqueeze keeps the strides of size-1 dims and gives the new dim torch's stride;
    matmul's choice between folding and bmm reads them."""
    leaves = {"x": ([[[1.0, -1.0, 1.0]]], True), "w": ([-1.0, -1.0], False)}
    steps = [("getitem", "x[0:2:2, 0, :-1]"), ("unsqueeze", "v0.unsqueeze(-2)"), ("matmul", "v1 @ w")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("view", ["x.expand((3, -1, 3, 3))", "x[0, :, :, 0].t()[::2]"])
def test_flip_of_an_expanded_or_stepped_view_is_laid_out_as_torch(view):
    """(seed 44541) torch lays flip's result out as an elementwise result of its input: densely, in the
    input's order of dims, so that of an expanded view is contiguous and a later reshape a view."""
    leaves = {"x": ([[[[1.0]], [[2.0]], [[0.0]], [[0.0]]]], True)}
    steps = [("view", view), ("flip", "L.flip(v0, (0, -1))"), ("reshape", "v1.reshape(-1)")]
    assert_like_torch(leaves, steps)


def test_flip_along_a_size_one_dim_is_a_copy():
    """(seeds 27, 13945: a regression of the commit before) flip's result is a new tensor even where
    reversing is a no-op view, so an in-place op on the input later does not change it."""
    leaves = {"x": ([[1.0, -2.0, 0.5]], True)}
    steps = [("mul", "x * 1"), ("flip", "L.flip(v0, (0,))"), ("inplace", "v0.mul_(2)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_an_in_place_op_on_a_view_of_an_expanded_0d_tensor_writes_its_one_element(requires_grad):
    """fuzz seed 212973: the write into the 0-d base of an expand() raised numpy's ValueError."""
    steps = [("norm", "L.norm(x, p=0.5)"), ("expand", "v0.expand((2,))"), ("view", "v1[..., 1:]"),
             ("inplace", "v2.mul_(0)")]
    assert_like_torch({"x": ([[0.0]], requires_grad)}, steps)
    assert_like_torch({"x": ([[2.0, 0.5]], requires_grad)}, steps)


@pytest.mark.parametrize("p", ["1", "float('inf')"])
def test_the_gradient_of_sgn_is_an_exact_zero(p):
    """(seeds 416903, 448642) norm's backward multiplies by sgn(x), whose own gradient is torch's efficient
    zero tensor: dividing it by a zero afterwards (a's gradient through x = a / b) gives 0, not 0 / 0."""
    leaves = {"a": ([[0.0]], True), "b": ([[-2.0, 2.0, 0.0]], False)}
    steps = [("div", "L.div(a, b)"), ("norm", f"L.norm(v0, p={p})")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("target", ["L.zeros((0,), dtype=L.int64)", "L.tensor([-100, -100])"])
def test_cross_entropy_mean_over_no_target_differentiates_twice_as_torch(target):
    """(seed 431186) nll_loss's double backward in the incoming gradient is nll_loss of the gradient's
    gradient: with no target counted (an empty batch, or every target ignored) 'mean' is 0 / 0 = nan."""
    rows = 0 if "zeros" in target else 2
    leaves = {"x": (np.linspace(-1, 1, rows * 3).reshape(rows, 3), True), "s": ([[0.5]], True)}
    steps = [("cross_entropy", f"F.cross_entropy(x, {target}, reduction='mean')"), ("mul", "L.mul(v0, s)")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("equation", ["'abc,dae->ceb'", "'ab,b->a'", "'aab,b->'"])
def test_an_operand_torch_copies_may_change_in_place_after_einsum(equation):
    """(seed 402558) torch's reshape before its bmm copies an operand whose labels it cannot merge as a view
    (or sums a diagonal first): backward reads that copy, so an in-place op on the operand afterwards is
    allowed; where the reshape is a view ('ab,b->a' of a contiguous a), backward raises in both."""
    x = np.arange(16.0).reshape(4, 2, 2) if "abc" in equation else np.arange(8.0).reshape(2, 2, 2) \
        if "aab" in equation else np.arange(4.0).reshape(2, 2)
    y = [[[2.0], [-0.0], [2.0], [-1.0]]] if "abc" in equation else [1.0, -2.0]
    leaves = {"x": (x, False), "y": (y, True)}
    assert_like_torch(leaves, [("einsum", f"L.einsum({equation}, x, y)"), ("inplace", "x.relu_()")])


@pytest.mark.parametrize("x", [[[-0.0, 0.0, -0.0]], [[0.0, -0.0]] * 5, [[-0.0, 1.0, 0.0, -0.0, 0.0, -1.0]]])
@pytest.mark.parametrize("op", ["L.max", "L.min"])
def test_max_of_zeros_of_both_signs_is_torchs_zero(x, op):
    """(seeds 401435, 437445) 2.0 / max(x) is +inf or -inf as the zero torch's lanes keep is +0 or -0."""
    leaves = {"x": (x, False), "s": ([1.0], True)}
    assert_like_torch(leaves, [(op[2:], f"{op}(x)"), ("scalar", "2.0 / v0"), ("mul", "L.mul(v1, s)")])


def test_an_einsum_result_has_torchs_strides_for_size_one_dims():
    """(seed 464294) numpy's einsum left a size-1 dim's stride of its own ((4, 1) with strides (1, 4)); torch's is
    the size of the dims after it, and matmul's choice between folding and bmm reads it."""
    leaves = {"x": ([[[1.0], [1.0], [2.0], [1.0]], [[1.0], [1.0], [0.0], [2.0]]], True), "w": ([[0.5]], False)}
    steps = [("einsum", "L.einsum('abc->bc', x)"), ("reshape", "v0.reshape((4, -1, 1, 1))"), ("matmul", "L.matmul(v1, w)")]
    assert_like_torch(leaves, steps)


def test_the_negation_of_sgns_exact_zero_is_a_plain_minus_zero():
    """(seed 496868) torch's neg of a zero tensor is an ordinary tensor of -0: div's backward, -grad * (a / b) / b,
    then gives -0 * inf = nan where b = 0, not the exact zero's 0."""
    leaves = {"a": ([[[[-2.0]]]], False), "b": ([[[[2.0], [-1.0], [1.0]], [[2.0], [-2.0], [0.0]]]], True)}
    assert_like_torch(leaves, [("div", "L.div(a, b)"), ("norm", "L.norm(v0, p=float('inf'), dim=-2, keepdim=False)")])


@pytest.mark.parametrize("op", ["L.fmod(a, b)", "L.remainder(a, b)", "L.hypot(a, b)", "L.copysign(b, a)"])
def test_an_operand_backward_does_not_need_may_change_in_place(op):
    """(seed 500935) fmod's and remainder's gradient for a is the gradient itself, hypot's reads a and the result,
    copysign's gradient for its sign operand is 0: b changing in place afterwards leaves backward working."""
    leaves = {"a": ([-0.0, 1.5], True), "b": ([-2.0, 0.5], False)}
    assert_like_torch(leaves, [("binary2", op), ("inplace", "b.zero_()")])


@pytest.mark.parametrize("op", ["L.cummax(x, 0).values", "L.cumprod(x, 0)", "L.logcumsumexp(x, -1)",
                                "x.unfold(0, 1, 1)", "L.tile(x, (2,))", "F.normalize(x, dim=0)"])
def test_a_dim_op_on_a_0d_tensor_records_its_own_node(op):
    """(wider profile: seeds 500092, 500207, 500293, 500491, 500027, 500006)"""
    assert_like_torch({"x": (-1.5, True)}, [(op.split("(")[0].split(".")[-1], op), ("mul", "L.mul(v0, v0)")])


@pytest.mark.parametrize("op", ["L.cummax(x, 0).values", "L.cummin(x, -1).values"])
def test_cummax_of_an_empty_tensor_records_its_node(op):
    """(seed 501630) torch returns an empty input as it is, with CummaxBackward0 (microtorch gave a clone)."""
    prog = _program({"x": (np.zeros((1, 1, 0)), True)}, [("cummax", op)])
    assert not real(check_program(prog))


@pytest.mark.parametrize("op", ["L.std_mean(v0, 0)[1]", "L.var_mean(v0, 0)[1]", "L.t(v0.reshape(1, 1))"])
def test_a_node_checks_what_it_saved_even_for_an_output_it_ignores(op):
    """fuzz seeds 500988 (std_mean's mean, then its input changed in place: torch unpacks the saved input anyway and
    raises) and 503380 (t_ on a saved tensor counts a version)."""
    assert_like_torch({"a": ([[-1.0, 0.0]], True)}, [("sum", "(a * 1).sum()"), ("reduce", op),
                                                     ("inplace", "v0.mul_(2)")])


@pytest.mark.parametrize("op", ["L.aminmax(v0, dim=0).max", "L.aminmax(v0, dim=-1).min", "L.aminmax(v0).max"])
def test_aminmax_of_a_nan_spreads_nan_over_its_slice(op):
    """(seed 501296) torch divides the gradient by the count of the extreme, 0 where it is NaN: 0 / 0 and inf * 0
    make the whole slice's gradient NaN (microtorch counted at least 1)."""
    leaves = {"x": ([[1.0, 2.0], [1.0, np.nan], [0.5, 2.0]], True)}
    assert_like_torch(leaves, [("mul", "L.mul(x, 0.5)"), ("aminmax", op)])


@pytest.mark.parametrize("a", [[-np.inf, 7.5], [np.inf, -3.0]])
def test_remainders_divisor_gradient_reads_torchs_floor_division(a):
    """(seed 501578) d remainder(a, b) / db = -floor(a / b), torch's floor division: fmod first, so an infinite a
    gives NaN (numpy's floor of a / b gave inf), and -3 // inf is -1 (floor(-3 / inf) is -0)."""
    leaves = {"a": (a, False), "b": ([1.0, np.inf], True)}
    assert_like_torch(leaves, [("binary2", "L.remainder(a, b)")])


@pytest.mark.parametrize("op", ["L.median(v0)", "L.nanmedian(v0)"])
def test_the_median_of_all_saves_its_result(op):
    """(seed 502829 and seven more) torch's MedianBackward0 saves the result: changed in place, backward raises."""
    leaves = {"x": ([[0.5, -1.0], [2.0, 0.5]], True)}
    assert_like_torch(leaves, [("mul", "L.mul(x, 2.0)"), ("median", op), ("inplace", "v1.sub_(0.5)")])


def test_the_median_of_all_under_an_infinite_gradient():
    """torch writes grad / count at the median's places (masked_fill): the others stay 0, not inf * 0."""
    leaves = {"x": ([[0.5, -1.0], [2.0, 0.5]], True), "z": ([0.0], True)}
    assert_like_torch(leaves, [("median", "L.median(x)"), ("div", "L.div(v0, z)")])


@pytest.mark.parametrize("reps", ["(2, 1)", "(2, 3)", "(1, 2, 1)"])
def test_repeat_of_an_empty_tensor_keeps_its_gradients_graph(reps):
    """(seeds 504493, 504716) an empty dim repeated r times: torch's backward still reshapes and sums (its zeros
    shortcut is for a count of 0 only), so the gradient has a graph under create_graph (microtorch gave none)."""
    leaves = {"x": (np.zeros((1, 0)), True)}
    assert_like_torch(leaves, [("repeat", f"x.repeat{reps}"), ("sin", "L.sin(v0)")])


TIES = {"x": ([[1.0, 0.0, 1.0, 2.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.0, 2.0],
               [np.nan, 1.0, 1.0, 0.0, np.nan, 1.0, 0.0, 0.0, 1.0, np.nan, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0,
                0.0, 1.0]], True)}


@pytest.mark.parametrize("op", ["L.sort(x, 1).values", "L.sort(x, 1, descending=True).values", "L.topk(x, 5, 1).values",
                                "L.topk(x, 11, 1, largest=False, sorted=False).values", "L.kthvalue(x, 7, 1).values",
                                "L.mode(x, 1).values", "L.topk(x.t(), 3, 0).values"])
def test_equal_values_are_ordered_as_torchs_cpp_algorithms(op):
    """(seeds 501789, 501970, 507796) sort is std::sort, topk std::nth_element or std::partial_sort, kthvalue a
    quickselect, mode std::sort with `<`: the index each of several equal values gets, and so where its gradient
    goes, is theirs (microtorch's stable order put them elsewhere)"""
    assert_like_torch(TIES, [("order", op)])


@pytest.mark.parametrize("op", ["L.aminmax(v0, dim=0).max", "L.aminmax(v0).min"])
def test_aminmax_saves_its_results_even_when_0d(op):
    """(seed 508542) AminmaxBackward0 saves min and max: a 0-d one (numpy gave a scalar, not the result's array)
    changed in place makes backward raise, as in torch"""
    leaves = {"x": ([1.0, -0.5], True)}
    assert_like_torch(leaves, [("mul", "L.mul(x, 2.0)"), ("aminmax", op), ("inplace", "v1.clamp_(max=0.5)")])


@pytest.mark.parametrize("after", ["L.pow(v0, v0)", "L.log(v0)", "L.div(v0, z)"])
def test_logcumsumexp_passes_a_nan_or_infinite_gradient_as_torch(after):
    """(seed 510082) torch's logcumsumexp backward works in log space on each sign of the gradient: a NaN
    gradient counts in neither (0), an infinite one stays infinite (microtorch's weights matrix gave 0 * inf)"""
    leaves = {"x": ([[1.0, -2.0], [0.5, 3.0]], True), "z": ([0.0, 1.0], True)}
    assert_like_torch(leaves, [("logcumsumexp", "L.logcumsumexp(x, 0)"), ("after", after)])


@pytest.mark.parametrize("k", [1, 2, 3, 4, -1])
@pytest.mark.parametrize("x", [[[[0.0]]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
def test_rot90_is_a_copy_laid_out_as_torchs(k, x):
    """(seeds 513302, 517794) numpy's rot90 of a 1 x 1 tensor stayed a view of it, so an in-place op on the result
    changed the input; torch flips (a copy) and, for an odd k, transposes that copy (not contiguous)"""
    leaves = {"x": (x, False), "s": ([1.0], True)}
    assert_like_torch(leaves, [("rot90", f"L.rot90(x, {k})"), ("inplace", "v0.sub_(0.5)"), ("mul", "v0.mT @ v0 * s"),
                               ("view", "v0.view(-1)")])


@pytest.mark.parametrize("op", ["L.nan_to_num(v0)", "L.div(v0, s, rounding_mode='floor')",
                                "L.div(s, v0, rounding_mode='trunc')"])
def test_ops_keep_what_torchs_nodes_save(op):
    """(seed 516417) nan_to_num saves its input, div with a rounding mode its operands: changed in place
    afterwards, backward raises as in torch"""
    leaves = {"x": ([[2.0, -1.5]], True), "s": ([0.5], True)}
    assert_like_torch(leaves, [("mul", "x * 2.5"), ("op", op), ("inplace", "v0.sin_()")])


@pytest.mark.parametrize("equation", ["'aa,ca->c'", "'aab,b->'", "'aba,c->c'"])
def test_einsum_sums_a_diagonal_first_so_its_operand_may_change(equation):
    """(seed 522838) torch takes the diagonal of a repeated label, then sums a label only that operand has, and
    keeps the sum: the operand may change in place afterwards (microtorch kept the operand and refused)"""
    shapes = {"'aa,ca->c'": ((3, 3), (1, 1)), "'aab,b->'": ((2, 2, 3), (3,)), "'aba,c->c'": ((2, 3, 2), (4,))}
    sa, sb = shapes[equation]
    leaves = {"x": (np.arange(float(np.prod(sa))).reshape(sa) - 2, True), "y": (np.linspace(0.5, 1.5, int(np.prod(sb))).reshape(sb), True)}
    assert_like_torch(leaves, [("mul", "x * 1.5"), ("einsum", f"L.einsum({equation}, v0, y)"), ("inplace", "v0.add_(1.5)")])


@pytest.mark.parametrize("op", ["L.cummax(v0, 0).values", "L.cummin(v0, -1).values"])
def test_cummax_saves_its_input(op):
    """(seed 521653) CummaxBackward0 keeps self (torch's _saved_self): changed in place, backward raises"""
    leaves = {"x": ([[-2.0, 1.0], [0.5, 3.0]], True)}
    assert_like_torch(leaves, [("mul", "x * 1.5"), ("cummax", op), ("inplace", "v0.fill_(0.5)")])


def test_logcumsumexp_of_minus_zero_starts_at_plus_zero():
    """(seed 528750) torch's scan starts from -inf, so its first value is x + log1p(0): -0 becomes +0, and a
    division by it gives +inf (numpy's accumulate kept -0)"""
    leaves = {"x": ([[-0.0, 1.0], [-0.0, -0.0]], False), "s": ([1.0, 2.0], True)}
    assert_like_torch(leaves, [("logcumsumexp", "L.logcumsumexp(x, 0)"), ("div", "L.div(s, v0)")])


@pytest.mark.parametrize("op", ["L.amax(v0, dim=1)", "L.amax(v0, dim=0, keepdim=True)"])
def test_a_view_of_sgns_exact_zero_gradient_is_still_exact(op):
    """(seed 416903) amax's backward reshapes its gradient (a view): of sgn's exact zero that is torch's zero tensor
    again, so a later division by the count of a NaN maximum leaves 0, not 0 / 0"""
    leaves = {"x": ([[1.0, -2.0], [np.nan, 3.0]], True)}
    assert_like_torch(leaves, [("sgn", "L.sgn(x)"), ("amax", op)])


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf")])
def test_dists_backward_is_norms_of_the_difference(p):
    """(seed 530495) torch's dist backward is norm_backward of a - b: at a zero distance its second order is
    NaN for p = 2 (microtorch's own formula selected 0 there)"""
    leaves = {"a": ([[0.0, 1.0], [2.0, -1.0]], True), "b": ([[0.0, 1.0], [2.0, -1.0]], True)}
    assert_like_torch(leaves, [("dist", f"L.dist(a, b, {p!r})")])


@pytest.mark.parametrize("op", ["v0.masked_fill_(v0 > 0, 1.0)", "v0.index_fill_(2, L.tensor([0]), 5.0)"])
def test_masked_and_index_fill_of_an_expanded_tensor_write_through(op):
    """(seed 542056) torch still allows these two in-place fills on an expanded tensor (with a deprecation warning)
    and writes into the shared memory; microtorch refused as for the other in-place ops"""
    leaves = {"x": ([[1.0]], False), "s": ([2.0], True)}
    assert_like_torch(leaves, [("expand", "x.expand((1, 2, 2))"), ("inplace", op), ("mul", "L.mul(x, s)")])


@pytest.mark.parametrize("op", ["L.addcmul(v0, v0, c, value=0.5)", "L.addcmul(v0, c, v0)",
                                "L.addcdiv(v0, v0, c, value=0.5)", "L.addcdiv(v0, c, v0)"])
def test_addcmul_addcdiv_save_what_torch_saves(op):
    """(seed 548079) addcmul keeps each tensor only for the other's gradient; addcdiv always keeps tensor2 and
    tensor1 for tensor2's: an operand changed in place afterwards raises exactly where torch's does"""
    leaves = {"x": ([1.0, -1.0], True), "c": ([1.5, 3.0], False)}
    assert_like_torch(leaves, [("mul", "x * 2.0"), ("binary2", op), ("inplace", "v0.t_()")])


_VIEW_OPS = ["t_()", "transpose_(0, -1)", "squeeze_()", "unsqueeze_(0)", "swapaxes_(0, 1)", "swapdims_(1, 0)"]


@pytest.mark.parametrize("op", _VIEW_OPS)
@pytest.mark.parametrize("view", ["L.split(v0, 1, dim=0)[1]", "v0.unbind(0)[0][None]", "L.chunk(v0, 2, -1)[0][:1]"])
def test_an_inplace_view_op_on_a_multi_output_view_is_refused(op, view):
    """(seeds 508825, 510594, 515805, 521520, 523607, 531957, 533794) torch refuses t_, squeeze_... on an output
    of split/unbind/chunk, or a view of one, as it refuses mul_ there; microtorch changed the view"""
    leaves = {"x": ([[0.5, -1.0], [2.0, 0.25]], True)}
    assert_like_torch(leaves, [("acos", "L.sin(x)"), ("split", view), ("inplace", f"v1.{op}")])


@pytest.mark.parametrize("op", _VIEW_OPS)
@pytest.mark.parametrize("which", ["v0", "v1"])
@pytest.mark.parametrize("after", ["L.rsqrt(v2)", "v2 * 2.0", "L.maximum(v2, v2[:1])", "v2.expand(2, 2, 2)"])
def test_an_inplace_view_op_regenerates_the_other_views(op, which, after):
    """(seeds 502103, 512664, 513535, 523036, 524713, 527399, 531109, 539466) after t_, transpose_... on a
    tensor or on one of its views, torch's other views of that tensor read as AsStridedBackward0 of the base
    (their version changed); the modified one keeps the in-place op's own node"""
    leaves = {"x": ([[0.5, 1.0], [2.0, 0.25]], True)}
    steps = [("exp", "L.exp(x)"), ("view", "v0[:, :]"), ("view", "v0.view(2, 2)"), ("inplace", f"{which}.{op}"),
             ("after", after)]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("op", ["t_()", "squeeze_()", "unsqueeze_(0)", "transpose_(0, -1)"])
@pytest.mark.parametrize("split", ["L.split(v0, 1, dim=0)[0]", "v0.unbind(0)[0]", "L.chunk(v0, 2, -1)[-1]"])
def test_an_inplace_view_op_on_a_base_makes_its_multi_output_views_unusable(op, split):
    """(seeds 504022, 504981, 523013, 524717, 524940, 537046) after t_, squeeze_... on a tensor, torch's
    outputs of split/unbind/chunk of it raise when their grad_fn is read (a gather of one, backward through
    one); microtorch kept their old history"""
    leaves = {"x": ([[1.5, -1.0]], True), "y": ([[0.5], [2.0]], True)}
    steps = [("matmul", "y @ x"), ("split", split), ("inplace", f"v0.{op}"), ("mul", "v1 * 2.0")]
    assert_like_torch(leaves, steps)


@pytest.mark.parametrize("op", ["exp_()", "sigmoid_()", "tanh_()", "sqrt_()", "relu_()"])
@pytest.mark.parametrize("view", ["a.expand((3, 2))", "a[1:]", "a.t()"])
def test_a_result_saved_by_an_inplace_op_on_a_view_has_the_views_history(op, view):
    """(seed 438580) torch unpacks the result an in-place op on a view saved with the view's new history (over the
    base's CopySlices), so a second-order gradient reaches that op once, through CopySlices; microtorch's reached it
    a second time directly (other second-order values, or "backward through the graph a second time")"""
    leaves = {"a": ([[0.5, 2.0], [1.0, 0.25], [1.5, 3.0]], False), "s": ([[1.5]], True)}
    assert_like_torch(leaves, [("view", view), ("inplace", "v0.div_(s)"), ("inplace", f"v1.{op}")])


@pytest.mark.parametrize("steps", [
    [("expand", "x.expand((0, 2))"), ("tile", "L.tile(v0, (2,))"), ("inplace", "v1.div_(y)")],
    [("expand", "x.expand((0, 2))"), ("repeat", "v0.repeat(3, 1)"), ("inplace", "v1.mul_(2.0)")],
])
def test_tiling_an_empty_expanded_tensor_gives_a_writable_one(steps):
    """(seed 3558493) numpy's tile of an empty input is a view of it, read-only when the input is an expand(): an
    in-place op on the result raised, where torch's repeat returns a tensor of its own"""
    assert_like_torch({"x": (np.zeros((0, 1)), False), "y": (np.zeros((0, 1)), False)}, steps)
