"""What the nodes of the view, shape, indexing, scan and rearranging ops show, beside torch 2.13: every
`grad_fn._saved_<name>` torch's node has (`_saved_dim`, `_saved_dims`, `_saved_dim0`, `_saved_index`, `_saved_start`,
`_saved_end`, `_saved_step`, `_saved_split_size`, `_saved_repeats`, `_saved_shifts`, `_saved_k`, `_saved_offset`,
`_saved_diagonal`, `_saved_sparse_grad`, `_saved_self_sym_sizes`, ...), with its value and Python type, before and
after backward: the arguments as the user gave them (a negative one read as an unsigned 64-bit int, -1 as
18446744073709551615), or as torch's own callers pass them (movedim's permutation, cat's dim in split's backward).
The nodes a backward formula records (create_graph=True) show what torch's do: unsqueeze(-1)'s backward squeezes
dim -1, cumsum's flips along the dim as given, narrow_copy's is a slice_backward."""
import pytest
import torch

import microtorch
from tests.saved_compare import STRIDES, assert_saves_as_torch, observe


def _a(T):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=T.float64, requires_grad=True)


def _b(T):
    return T.tensor([[1.5, -0.5, 3.0], [0.1, 0.2, 0.3]], dtype=T.float64, requires_grad=True)


def _v(T):
    return T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=True)


def _s(T):
    return T.tensor(0.75, dtype=T.float64, requires_grad=True)


def _x4(T):
    return T.arange(32, dtype=T.float64).reshape(1, 2, 4, 4).sin().requires_grad_()


def _j(T):
    return T.tensor([[0, 1], [2, 0]])


def _i(T):
    return T.tensor([0, 2])


SHAPE = {
    "squeeze_dim": lambda T: _a(T)[None].squeeze(0),
    "squeeze_negative_dim": lambda T: _a(T)[None].squeeze(-3),
    "squeeze_keyword_dim": lambda T: _a(T)[None].squeeze(dim=-3),
    "squeeze_dim_not_one": lambda T: _a(T).squeeze(-1),
    "squeeze_dims": lambda T: _a(T)[None].squeeze((0, -1)),
    "squeeze_dims_list": lambda T: _a(T)[None, :, None].squeeze([-1, 0]),
    "squeeze_all": lambda T: _a(T)[None].squeeze(),
    "squeeze_0d": lambda T: _s(T).squeeze(-1),
    "matmul_row": lambda T: _v(T) @ _a(T).T,
    "unsqueeze": lambda T: _a(T).unsqueeze(0),
    "unsqueeze_negative": lambda T: _a(T).unsqueeze(-1),
    "unsqueeze_0d": lambda T: _s(T).unsqueeze(-1),
    "none_index": lambda T: _a(T)[None, ..., None],
    "atleast_3d": lambda T: T.atleast_3d(_a(T)),
    "permute": lambda T: _x4(T).permute(0, 2, 3, 1),
    "permute_negative": lambda T: _a(T).permute(-1, 0),
    "permute_keyword": lambda T: _a(T).permute(dims=(-1, -2)),
    "permute_0d": lambda T: _s(T).permute(()),
    "T": lambda T: _a(T).T,
    "movedim": lambda T: _x4(T).movedim((1, 2), (-1, 0)),
    "transpose": lambda T: _a(T).transpose(1, 0),
    "transpose_negative": lambda T: _a(T).transpose(-1, -2),
    "swapaxes": lambda T: _a(T).swapaxes(-2, 1),
    "mT": lambda T: _a(T).mT,
    "H": lambda T: _a(T).H,
    "H_of_H": lambda T: _a(T).H.H,
    "t": lambda T: _a(T).t(),
    "repeat": lambda T: _a(T).repeat(1, 2, 1),
    "repeat_size": lambda T: _a(T).repeat(T.Size([2, 1])),
    "tile": lambda T: _a(T).tile(2),
    "cat": lambda T: T.cat([_a(T), _b(T)]),
    "cat_negative": lambda T: T.cat([_a(T), _b(T)], -1),
    "cat_keyword": lambda T: T.cat((_a(T), _b(T)), dim=-2),
    "cat_legacy_empty": lambda T: T.cat([_v(T), T.zeros(0, dtype=T.float64)]),
    "hstack": lambda T: T.hstack([_a(T), _b(T)]),
    "dstack": lambda T: T.dstack([_v(T), _v(T)]),
    "stack": lambda T: T.stack([_a(T), _b(T)], 1),
    "stack_negative": lambda T: T.stack([_a(T), _b(T)], -3),
    "split_sizes": lambda T: _a(T).split([1, 2], 1)[0],
    "split_sizes_negative": lambda T: _a(T).split((2, 1), -1)[1],
    "split_with_sizes": lambda T: _a(T).split_with_sizes([1, 2], -1)[0],
    "split_size": lambda T: _a(T).split(2, -1)[0],
    "split_empty_dim": lambda T: T.zeros(2, 0, dtype=T.float64, requires_grad=True).split(2, 1)[0],
    "chunk": lambda T: _a(T).chunk(2, -1)[0],
    "chunk_more_than_size": lambda T: _a(T).chunk(5, 1)[0],
    "chunk_empty_dim": lambda T: T.zeros(2, 0, dtype=T.float64, requires_grad=True).chunk(2, -1)[0],
    "unbind": lambda T: _a(T).unbind()[0],
    "unbind_negative": lambda T: _a(T).unbind(dim=-2)[1],
    "flip": lambda T: _a(T).flip(0),
    "flip_dims_as_given": lambda T: _a(T).flip((-1, 0)),
    "flip_list": lambda T: _a(T).flip([1, 0]),
    "flip_0d": lambda T: _s(T).flip(0),
    "fliplr": lambda T: _a(T).fliplr(),
    "narrow": lambda T: _a(T).narrow(1, 0, 2),
    "narrow_negative": lambda T: _a(T).narrow(dim=-1, start=-2, length=1),
    "diagonal": lambda T: _a(T).diagonal(),
    "diagonal_negative": lambda T: _a(T).diagonal(-1, -1, -2),
    "diagonal_keywords": lambda T: _a(T).diagonal(offset=-5, dim1=1, dim2=0),
    "diagonal_4d": lambda T: T.diagonal(_x4(T), 1, -3, -4),
    "diag": lambda T: _a(T).diag(-1),
    "view": lambda T: _a(T).view(3, 2),
    "expand": lambda T: _a(T).expand(2, 2, 3),
}

INDEX = {
    "select": lambda T: _a(T)[0],
    "select_negative": lambda T: _a(T)[-1],
    "select_column": lambda T: _a(T)[:, -1],
    "select_tensor": lambda T: _a(T)[:, T.tensor(-1)],
    "select_after_none": lambda T: _a(T)[None, -1],
    "select_ellipsis": lambda T: _a(T)[..., -1],
    "select_method": lambda T: _a(T).select(-2, -1),
    "select_keywords": lambda T: _a(T).select(dim=-1, index=0),
    "slice": lambda T: _a(T)[1:],
    "slice_step": lambda T: _a(T)[:, ::2],
    "slice_negative_start": lambda T: _a(T)[-10:],
    "slice_negative_end": lambda T: _a(T)[:, 1:-5],
    "slice_past_end": lambda T: _a(T)[:, 1:10],
    "slice_start_past_end": lambda T: _a(T)[:, 5:],
    "slice_empty": lambda T: _a(T)[:0],
    "slice_tensor_bounds": lambda T: _a(T)[T.tensor(1):],
    "slice_after_none": lambda T: _a(T)[:, None, 1:],
    "two_slices": lambda T: _a(T)[0:1, 0:1],
    "tensor_split": lambda T: T.tensor_split(_a(T), 3, dim=-1)[2],
    "hsplit": lambda T: _a(T).hsplit(3)[0],
    "index_select": lambda T: _a(T).index_select(1, _i(T)),
    "index_select_negative": lambda T: _a(T).index_select(dim=-1, index=_i(T)),
    "gather": lambda T: _a(T).gather(1, _j(T)),
    "gather_negative": lambda T: _a(T).gather(-2, T.tensor([[1, 0]])),
    "gather_sparse_grad_false": lambda T: _a(T).gather(-1, _j(T), sparse_grad=False),
    "take_along_dim": lambda T: _a(T).take_along_dim(_j(T), -1),
}

SCATTERS = {
    "select_scatter": lambda T: _a(T).select_scatter(_v(T), 0, 0),
    "select_scatter_negative": lambda T: _a(T).select_scatter(_b(T)[:, 0], -1, -1),
    "slice_scatter": lambda T: _a(T).slice_scatter(_b(T)[:, :1], 1, 0, 1),
    "slice_scatter_negative": lambda T: _a(T).slice_scatter(_b(T)[:, :1], -1, None, -2),
    "slice_scatter_defaults": lambda T: _a(T).slice_scatter(_b(T)[:, ::2], 1, step=2),
    "slice_scatter_end_past": lambda T: _a(T).slice_scatter(_b(T)[:, 1:], 1, -2, 100),
    "diagonal_scatter": lambda T: _a(T).diagonal_scatter(_v(T)[:2]),
    "diagonal_scatter_negative": lambda T: _a(T).diagonal_scatter(_v(T)[:2], -1, -1, -2),
}

REARRANGE = {
    "trace": lambda T: _a(T)[:, :2].trace(),
    "roll": lambda T: _a(T).roll(1, 1),
    "roll_flat": lambda T: _a(T).roll(shifts=-2),
    "roll_negative": lambda T: _a(T).roll((1, -2), (-2, -1)),
    "roll_lists": lambda T: _a(T).roll([7], [0]),
    "rot90": lambda T: _a(T).rot90(),
    "rot90_negative_k": lambda T: _a(T).rot90(-1),
    "rot90_dims_as_given": lambda T: _a(T).rot90(k=5, dims=(-2, 1)),
    "rot90_zero": lambda T: _a(T).rot90(0, [1, 0]),
    "nansum": lambda T: _a(T).nansum(),
    "nansum_dim": lambda T: _a(T).nansum(-1),
    "nansum_dims_as_given": lambda T: _a(T).nansum((1, 0)),
    "nansum_keepdim": lambda T: _a(T).nansum((-1,), keepdim=True),
    "nansum_no_dims": lambda T: _a(T).nansum([]),
    "nansum_dtype": lambda T: _a(T).nansum(1, dtype=T.float32),
    "nansum_0d": lambda T: _s(T).nansum(0),
    "tril": lambda T: T.tril(_a(T)),
    "tril_negative": lambda T: T.tril(_a(T), -1),
    "tril_far": lambda T: _a(T).tril(diagonal=-100),
    "triu_negative": lambda T: _a(T).triu(-1),
    "cumsum": lambda T: _a(T).cumsum(1),
    "cumsum_negative": lambda T: _a(T).cumsum(dim=-2),
    "cumsum_dtype": lambda T: _a(T).cumsum(-1, dtype=T.float32),
    "cumsum_0d": lambda T: _s(T).cumsum(-1),
    "cumprod": lambda T: _a(T).cumprod(-1),
    "cumprod_dtype": lambda T: _a(T).cumprod(1, dtype=T.float32),
    "cumprod_0d": lambda T: _s(T).cumprod(0),
    "logcumsumexp": lambda T: _a(T).logcumsumexp(-2),
    "cummax": lambda T: _a(T).cummax(-1)[0],
    "cummin": lambda T: _a(T).cummin(0)[0],
    "renorm": lambda T: _a(T).renorm(2, 0, 1.),
    "renorm_types_as_given": lambda T: _a(T).renorm(3., -1, 2),
    "renorm_keywords": lambda T: _a(T).renorm(p=1, dim=-2, maxnorm=0.5),
    "unfold": lambda T: _a(T).unfold(1, 2, 1),
    "unfold_negative": lambda T: _a(T).unfold(dimension=-2, size=1, step=2),
    "unfold_0d": lambda T: _s(T).unfold(0, 1, 1),
    "narrow_copy": lambda T: _a(T).narrow_copy(1, 0, 2),
    "narrow_copy_negative": lambda T: _a(T).narrow_copy(dim=-1, start=-2, length=1),
    "narrow_copy_empty": lambda T: _a(T).narrow_copy(0, 0, 0),
}


def _second(f, x=_a):
    """the gradient of sum(f(x) ** 2), recorded (create_graph): its last node is the backward of f's op"""
    def g(T):
        leaf = x(T)
        return T.autograd.grad((f(T, leaf) ** 2).sum(), leaf, create_graph=True)[0]
    return g


BACKWARDS = {
    "select_backward": _second(lambda T, a: a.select(-1, -2)),
    "slice_backward": _second(lambda T, a: a[:, -2:]),
    "narrow_backward": _second(lambda T, a: a.narrow(-1, 1, 2)),
    "diagonal_backward": _second(lambda T, a: a.diagonal(-1, -1, -2)),
    "diag_backward": _second(lambda T, a: a.diag()),
    "unfold_backward": _second(lambda T, a: a.unfold(-1, 2, 1)),
    "cat_backward": _second(lambda T, a: T.cat([a, a * 2], -1)),
    "stack_backward": _second(lambda T, a: T.stack([a, a * 2], -1)),
    "split_backward": _second(lambda T, a: a.split(1, -1)[0]),
    "unbind_backward": _second(lambda T, a: a.unbind(-1)[0]),
    "unsqueeze_backward": _second(lambda T, a: a.unsqueeze(-1)),
    "squeeze_backward": _second(lambda T, a: a.squeeze(-3), lambda T: _a(T)[None].detach().requires_grad_()),
    "squeeze_all_backward": _second(lambda T, a: a.squeeze(), lambda T: _a(T)[None].detach().requires_grad_()),
    "permute_backward": _second(lambda T, a: a.permute(0, 2, 3, 1), _x4),
    "transpose_backward": _second(lambda T, a: a.transpose(-1, 0)),
    "mT_backward": _second(lambda T, a: a.mT),
    "flip_backward": _second(lambda T, a: a.flip(-1)),
    "roll_backward": _second(lambda T, a: a.roll(-1, -1)),
    "roll_flat_backward": _second(lambda T, a: a.roll(1)),
    "rot90_backward": _second(lambda T, a: a.rot90(1, (1, 0))),
    "tril_backward": _second(lambda T, a: T.tril(a, -1)),
    "cumsum_backward": _second(lambda T, a: a.cumsum(-1)),
    "gather_backward": _second(lambda T, a: a.gather(-1, _j(T))),
    "cummax_backward": _second(lambda T, a: a.cummax(-1)[0]),
    "narrow_copy_backward": _second(lambda T, a: a.narrow_copy(-1, 1, 2)),
    "nansum_backward": _second(lambda T, a: a.nansum(-1)),
    "diagonal_scatter_backward": _second(lambda T, a: a.diagonal_scatter(_v(T)[:2], 0, -1, -2)),
}


@pytest.mark.parametrize("f", SHAPE.values(), ids=SHAPE.keys())
def test_shape_ops_show_what_torch_shows(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", INDEX.values(), ids=INDEX.keys())
def test_indexing_shows_what_torch_shows(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", SCATTERS.values(), ids=SCATTERS.keys())
def test_select_slice_and_diagonal_scatter_show_what_torch_shows(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", REARRANGE.values(), ids=REARRANGE.keys())
def test_scans_and_rearranging_ops_show_what_torch_shows(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", BACKWARDS.values(), ids=BACKWARDS.keys())
def test_the_nodes_of_backward_formulas_show_what_torch_shows(f):
    assert_saves_as_torch(f, skip=STRIDES)


def test_a_dim_shown_otherwise_fails_the_comparison():
    """the comparison can fail: unsqueeze(2) and unsqueeze(-1) give the same tensor, but torch's node shows the
    dim as given"""
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: _a(T).unsqueeze(-1 if T is torch else 2), skip=STRIDES)
    with pytest.raises(AssertionError):  # (and a number's type: renorm's maxnorm as given, 2 and not 2.0)
        assert_saves_as_torch(lambda T: _a(T).renorm(2, 0, 2 if T is torch else 2.0), skip=STRIDES)


def test_saved_values_stay_readable_after_backward():
    y = _a(microtorch).transpose(-1, 0)
    y.sum().backward()
    assert (y.grad_fn._saved_dim0, y.grad_fn._saved_dim1) == (2 ** 64 - 1, 0)
    z = _a(microtorch).narrow(-1, -2, 1)
    z.sum().backward()
    assert (z.grad_fn._saved_dim, z.grad_fn._saved_start, z.grad_fn._saved_end, z.grad_fn._saved_step) == \
        (2 ** 64 - 1, 1, 2, 1)


@pytest.mark.parametrize("op", ["unsqueeze", "transpose", "flip", "cumsum", "select", "narrow_copy", "roll"])
def test_the_values_and_tangents_stay_torchs(op):
    """a dim given negative only changes what the node shows: values, gradients and tangents are torch's"""
    f = {"unsqueeze": lambda a: a.unsqueeze(-1), "transpose": lambda a: a.transpose(-1, -2),
         "flip": lambda a: a.flip(-1), "cumsum": lambda a: a.cumsum(-1), "select": lambda a: a[:, -1],
         "narrow_copy": lambda a: a.narrow_copy(-1, 1, 2), "roll": lambda a: a.roll(-1, -1)}[op]
    out = {}
    for T in (torch, microtorch):
        a = _a(T)
        y = f(a)
        (g,) = T.autograd.grad((y ** 2).sum(), a, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), a)
        _, t = T.func.jvp(f, (a.detach(),), (T.ones_like(a).detach(),))
        out[T] = [r.detach().numpy().tolist() for r in (y, g, gg, t)]
    assert out[torch] == out[microtorch]


def test_observe_sees_the_same_node_names():
    theirs = observe(torch, lambda T: _a(T).narrow_copy(-1, 1, 2), skip=STRIDES)
    mine = observe(microtorch, lambda T: _a(T).narrow_copy(-1, 1, 2), names=list(theirs[2]), skip=STRIDES)
    assert theirs[2]["_saved_dim"] == mine[2]["_saved_dim"] == ("int", 2 ** 64 - 1)
