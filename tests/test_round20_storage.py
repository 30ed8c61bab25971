"""The storage API (microtorch/_storage.py) against torch 2.13: "Deep Learning with PyTorch" ch. 3's cells, the
str of storages, writes through a storage, the deprecation warning, errors, set_ and the legacy classes.

What each library prints is compared after naming torch's module as microtorch's (torch.float32 ->
microtorch.float32, torch.storage.TypedStorage -> microtorch.storage.TypedStorage), as the rest of microtorch does."""
import copy
import warnings

import numpy as np
import pytest
import torch

import microtorch
from microtorch import _storage

LIBS = (torch, microtorch)


def _shown(text):
    """torch's text as microtorch shows it."""
    return str(text).replace("torch.", "microtorch.").replace("micromicrotorch.", "microtorch.")


def _same(f):
    """f(lib) for torch and microtorch (deprecation warnings silenced), compared as printed."""
    outs = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(f(lib))
    assert _shown(outs[0]) == str(outs[1]), f"torch:\n{outs[0]}\nmicrotorch:\n{outs[1]}"
    return outs


def _raised(f):
    """(type name, message) of what f raises, or ('no error', result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "no error", f()
        except Exception as e:  # noqa: BLE001 (any exception is compared)
            return type(e).__name__, str(e)


def _same_error(f, whole_message=True):
    outs = [_raised(lambda: f(lib)) for lib in LIBS]
    assert outs[1][0] == outs[0][0], outs
    if whole_message:
        assert str(outs[1][1]) == _shown(outs[0][1]), outs
    return outs


# ---- the book's cells (Deep Learning with PyTorch, 3.7) -------------------------------------------------------------
def _chapter3(lib):
    shown = []
    points = lib.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    shown.append(repr(points.storage()))
    points_storage = points.storage()
    shown += [repr(points_storage[0]), repr(points.storage()[1])]
    points_storage[0] = 2.0
    shown.append(repr(points))
    second_point = points[1]
    shown += [repr(second_point.storage_offset()), repr(second_point.size()), repr(points.stride())]
    points_t = points.t()
    shown += [repr(id(points.storage()) == id(points_t.storage())),
              repr(points.storage().data_ptr() == points_t.storage().data_ptr())]
    shown += [repr(points_t.stride()), repr(points_t.storage_offset()), repr(len(second_point.storage())),
              repr(second_point.storage().tolist()), repr(points[2].storage_offset())]
    return "\n".join(shown)


def test_the_books_chapter_3_cells_print_as_torchs():
    outs = _same(_chapter3)
    assert "[microtorch.storage.TypedStorage(dtype=microtorch.float32, device=cpu) of size 6]" in outs[1]
    assert " 4.0\n 1.0\n 5.0\n 3.0\n 2.0\n 1.0\n[" in outs[1]


def _fastai_01_matmul(lib):
    c = lib.tensor([10.0, 20, 30])
    m = lib.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]])
    t = c.expand_as(m)
    return "\n".join(map(repr, [t, t.storage(), t.stride(), t.shape, c.unsqueeze(0).storage(), c[:, None].stride()]))


def test_fastai_01_matmuls_broadcasting_cells_print_as_torchs():
    outs = _same(_fastai_01_matmul)
    assert " 10.0\n 20.0\n 30.0\n[microtorch.storage.TypedStorage(dtype=microtorch.float32, device=cpu) of size 3]" \
        in outs[1]


def test_the_comparison_can_fail():
    with pytest.raises(AssertionError):
        _same(lambda lib: lib.tensor([1.0, 2.0] if lib is torch else [1.0, 3.0]).storage())
    with pytest.raises(AssertionError):
        _same_error(lambda lib: lib.tensor([1.0]).storage()[5 if lib is torch else 0])


def test_a_write_through_the_storage_shows_in_every_tensor_over_it():
    def run(lib):
        points = lib.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
        row, col, points_t = points[1], points[:, 1], points.t()
        s = row.storage()
        s[0] = 2.0
        s[-1] = 7.0
        points_t.storage()[3] = -1.0
        points.untyped_storage()[4] = 0  # (a byte of the third element)
        return repr((points, row, col, points_t, s.tolist()))
    _same(run)


def test_a_write_into_the_tensor_shows_in_a_storage_taken_before():
    def run(lib):
        x = lib.zeros(2, 3)
        s, u = x.storage(), x.untyped_storage()
        x[1, 2] = 5.0
        x.t()[0, 1] = 1.0
        return repr((s.tolist(), u.tolist()))
    _same(run)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]]),
    lambda lib: lib.arange(12.0).reshape(3, 4)[1:, ::2],
    lambda lib: lib.arange(6).view(2, 3).t()[1],
    lambda lib: lib.zeros(3).expand(2, 3),
    lambda lib: lib.tensor([1.0, 2.0, 3.0, 4.0])[1:].view(lib.int16),
    lambda lib: lib.tensor(3.5),
    lambda lib: lib.tensor([]),
    lambda lib: lib.ones(2, 3, dtype=lib.float64).permute(1, 0)[2:],
], ids=["points", "strided", "int-t", "expanded", "reinterpreted", "0-d", "empty", "sliced"])
def test_a_views_storage_is_its_bases_whole_storage(make):
    def run(lib):
        x = make(lib)
        s, u = x.storage(), x.untyped_storage()
        return repr((len(s), s.size(), s.dtype, s.nbytes(), s.element_size(), len(u), u.nbytes(),
                     x.storage_offset(), x.stride(), s.tolist(), u.tolist()))
    _same(run)


def test_views_share_one_storage_as_in_torch():
    def run(lib):
        a = lib.arange(6.0).reshape(2, 3)
        views = [a[1], a.t(), a[:, 1:], a.view(6), a.detach()]
        ptrs = [v.storage().data_ptr() == a.storage().data_ptr() for v in views]
        same = [v.untyped_storage() is a.untyped_storage() for v in views]
        copies = [a.clone().storage().data_ptr() == a.storage().data_ptr(),
                  a.t().contiguous().untyped_storage() is a.untyped_storage()]
        return repr((ptrs, same, copies, a.storage() is a.storage(), a.storage().data_ptr() == a.data_ptr()))
    _same(run)


# ---- str and repr ---------------------------------------------------------------------------------------------
DATA = {"float32": [1.5, 1e10, 1 / 3, -0.0, float("inf"), float("nan")], "float64": [1.5, -2.0, 1 / 3, 1e-300],
        "int64": [1, -2, 2 ** 40], "bool": [True, False, True], "float16": [1.5, 2.0, 1 / 3], "int32": [7, -8],
        "int16": [3], "int8": [-128, 127], "uint8": [0, 255, 17], "complex64": [1 + 2j, -0.5j],
        "complex128": [1 / 3 + 1j]}


@pytest.mark.parametrize("dt", sorted(DATA))
def test_str_and_repr_of_a_storage_are_torchs(dt):
    def run(lib):
        x = lib.tensor(DATA[dt], dtype=getattr(lib, dt))
        s, u = x.storage(), x.untyped_storage()
        return "\n".join([str(s), repr(s), str(u), repr(u), repr(list(s)), repr(s[0]), repr(type(s[0])),
                          s.type(), repr(x.storage_type())])
    outs = _same(run)
    assert f"[microtorch.storage.TypedStorage(dtype=microtorch.{dt}, device=cpu) of size {len(DATA[dt])}]" in outs[1]


def test_str_of_empty_0d_and_meta_storages():
    _same(lambda lib: "\n".join(repr(s) for s in (
        lib.tensor([]).storage(), lib.tensor([]).untyped_storage(), lib.tensor(2.5).storage(),
        lib.empty(3, 2, device="meta").storage(), lib.empty(3, device="meta").untyped_storage())))


# ---- the deprecation warning -------------------------------------------------------------------------------------
def _warnings_of(lib, f):
    (torch.storage if lib is torch else _storage)._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(lib)
    return [(w.category, str(w.message).split(". ")[0], w.filename) for w in caught]


@pytest.mark.parametrize("use", [
    lambda lib: (lib.ones(2).storage(), lib.ones(2).storage(), len(lib.ones(2).storage())),
    lambda lib: lib.FloatStorage([1.0, 2.0]).tolist(),
    lambda lib: lib.TypedStorage(3),
    lambda lib: lib.ones(2)._typed_storage()[0],
    lambda lib: lib.ones(2)._typed_storage().tolist(),
    lambda lib: (lib.ones(2).untyped_storage()[0], lib.ones(2)._typed_storage()),
    lambda lib: repr(lib.ones(2).untyped_storage()),
], ids=["storage-thrice", "FloatStorage", "TypedStorage", "getitem", "tolist", "untyped-only", "untyped-repr"])
def test_typed_storage_warns_once_as_torch(use):
    outs = [_warnings_of(lib, use) for lib in LIBS]
    assert outs[1] == outs[0]
    assert all(w == (UserWarning, "TypedStorage is deprecated", __file__) for w in outs[1])


def test_the_warning_is_given_once_per_process():
    first = _warnings_of(microtorch, lambda lib: lib.ones(2).storage())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        microtorch.ones(2).storage()
        microtorch.FloatStorage(2)[0] = 1.0
    assert len(first) == 1 and caught == []


# ---- indexing: what items are, and torch's errors ---------------------------------------------------------------
@pytest.mark.parametrize("idx", [0, 5, -1, -6, 6, -7, 100, 1.0, "a", None, True, np.int64(1), slice(1, 3),
                                 slice(None), (0,)], ids=repr)
def test_typed_storage_indexing_as_torch(idx):
    out = _same_error(lambda lib: lib.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]]).storage()[idx])
    if isinstance(idx, int) and not isinstance(idx, bool) and not -6 <= idx < 6:
        assert out[1][0] == "IndexError"


@pytest.mark.parametrize("idx,value", [
    (0, 2.0), (-1, 7), (5, True), (6, 1.0), (-7, 1.0), (slice(1, 3), 0.5), (slice(None), 9.0), (slice(0, 6, 2), 1.0),
    (1.0, 1.0), ("a", 1.0), (np.int64(0), 1.0), (slice(0, 2), [1.0, 2.0]),
], ids=repr)
def test_typed_storage_item_assignment_as_torch(idx, value):
    def run(lib):
        x = lib.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
        v = lib.tensor(value) if isinstance(value, list) else value
        x.storage()[idx] = v
        return repr(x)
    _same_error(run, whole_message=not isinstance(idx, int) or -6 <= idx < 6)  # (the IndexError's own words)


def test_typed_storage_item_assignment_converts_as_tensor_assignment():
    def run(lib):
        i = lib.tensor([1, 2, 3]).storage()
        i[0], i[1], i[2] = 2.7, -2.7, True
        b = lib.tensor([True, False]).storage()
        b[1] = 3
        return repr((i.tolist(), b.tolist()))
    _same(run)


def test_a_storage_cannot_be_an_item():
    _same_error(lambda lib: lib.ones(2).storage().__setitem__(0, lib.ones(2).untyped_storage()))


@pytest.mark.parametrize("idx", [0, 3, -1, 16, -17, 1.0, "a", None, True, np.int64(1), slice(1, 4), slice(5, 2),
                                 slice(-3, None), slice(2, 100), slice(None, None, 2)], ids=repr)
def test_untyped_storage_indexing_as_torch(idx):
    def run(lib):
        got = lib.tensor([[4.0, 1.0], [5.0, 3.0]]).untyped_storage()[idx]
        return got.tolist() if isinstance(got, (lib.UntypedStorage,)) else got
    _same_error(run)


def test_a_slice_of_an_untyped_storage_shares_its_bytes():
    def run(lib):
        x = lib.tensor([1.0, 2.0])
        u = x.untyped_storage()
        part = u[4:8]
        part[3] = 0
        return repr((part.data_ptr() - u.data_ptr(), len(part), x, repr(part)))
    _same(run)


@pytest.mark.parametrize("idx,value", [
    (0, 5), (3, 256), (2, -1), (-1, 5), (16, 5), (True, 9), (0, True), (0, 1.5), (0, np.int64(3)), (1.0, 1),
    (slice(1, 3), 7), (slice(-2, None), 5), (slice(1, 100), 6), (slice(0, 16, 2), 0), (0, "a"), (0, [1]),
], ids=repr)
def test_untyped_storage_item_assignment_as_torch(idx, value):
    def run(lib):
        u = lib.tensor([[4.0, 1.0], [5.0, 3.0]]).untyped_storage()
        u[idx] = value
        return repr(u.tolist())
    _same_error(run, whole_message=not (isinstance(idx, int) and not 0 <= idx < 16))  # (microtorch says why)


def test_an_untyped_items_value_as_torch_for_a_tensor():
    _same_error(lambda lib: lib.ones(4).untyped_storage().__setitem__(0, lib.tensor(4)))


# ---- methods -------------------------------------------------------------------------------------------------
def test_fill_and_copy_write_through():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0])
        s = x.storage()
        shown = [s.fill_(5.0) is s, repr(x)]
        shown += [s.copy_(lib.FloatStorage([7, 8, 9])) is s, repr(x)]
        shown += [s.copy_(lib.IntStorage([1, 2, 3])) is s, repr(s.tolist())]  # (bytes, not values)
        u = x.untyped_storage()
        shown += [u.fill_(1) is u, repr(x), u.copy_(lib.tensor([0.5, 1.0, 2.0]).untyped_storage()) is u, repr(x)]
        return repr(shown)
    _same(run)


@pytest.mark.parametrize("call", [
    lambda lib, s, u: s.copy_(lib.FloatStorage([1.0])),
    lambda lib, s, u: s.copy_(lib.DoubleStorage([1.0, 2.0, 3.0])),
    lambda lib, s, u: s.copy_(lib.tensor([1.0, 2.0, 3.0])),
    lambda lib, s, u: u.copy_(lib.UntypedStorage(3)),
    lambda lib, s, u: u.fill_(1.5),
    lambda lib, s, u: u.fill_(np.int64(2)),
    lambda lib, s, u: u.fill_(300).tolist(),
    lambda lib, s, u: u.fill_(-1).tolist(),
    lambda lib, s, u: s.fill_(True).tolist(),
])
def test_fill_and_copy_errors_as_torch(call):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0])
        return call(lib, x.storage(), x.untyped_storage())
    _same_error(run)


def test_clone_cpu_copy_and_conversions():
    def run(lib):
        x = lib.tensor([1.5, -2.0, 0.0])
        s, u = x.storage(), x.untyped_storage()
        c, dc, cc, uc = s.clone(), copy.deepcopy(s), copy.copy(s), u.clone()
        c[0], dc[1], cc[2], uc[0] = 9.0, 9.0, 9.0, 9
        shown = [repr(x), c.data_ptr() != s.data_ptr(), s.cpu().data_ptr() == s.data_ptr(), u.cpu() is u,
                 u.untyped() is u, s.untyped() is u, type(s.cpu()).__name__, uc.data_ptr() != u.data_ptr()]
        shown += [repr(getattr(s, name)()) for name in ("double", "float", "half", "long", "int", "short", "char",
                                                        "byte", "bool", "complex_float", "complex_double")]
        shown += [repr(u.float()), repr(u.long().tolist())]
        return "\n".join(map(str, shown))
    _same(run)


def test_attributes_as_torch():
    def run(lib):
        s, u = lib.arange(4).storage(), lib.arange(4).untyped_storage()
        return repr((s.dtype, s.device, s.is_cuda, s.is_sparse, s.is_shared(), s.is_pinned(), s.get_device(),
                     s.element_size(), s.nbytes(), u.device, u.is_cuda, u.is_sparse, u.is_shared(), u.is_pinned(),
                     u.get_device(), u.element_size(), u.nbytes(), u.size(), u.type(), s.type(), bool(s),
                     bool(lib.tensor([]).storage()), list(iter(s)), len(list(iter(u)))))
    _same(run)


def test_storages_cannot_grow_here():
    s = microtorch.ones(2).untyped_storage()
    assert s.resizable() is False and not hasattr(s, "resize_")


def test_legacy_classes_and_is_storage():
    def run(lib):
        fs = lib.FloatStorage([1, 2, 3])
        x = lib.ones(2, dtype=lib.int64)
        return repr((fs.tolist(), type(fs).__name__, fs.type(), isinstance(fs, lib.FloatStorage),
                     isinstance(fs, lib.DoubleStorage), isinstance(fs, lib.TypedStorage),
                     isinstance(x.storage(), lib.LongStorage), isinstance(x, lib.LongStorage),
                     issubclass(lib.FloatStorage, lib.TypedStorage), lib.Storage is lib.FloatStorage,
                     lib.typename(lib.FloatStorage), lib.FloatStorage.dtype, lib.FloatStorage().size(),
                     lib.FloatStorage(3).size(), x.storage_type(), lib.is_storage(fs), lib.is_storage(x),
                     lib.is_storage(x.untyped_storage()), lib.LongStorage((4, 5)).tolist(),
                     lib.TypedStorage([1, 2], dtype=lib.float64).tolist(), lib.TypedStorage(2).dtype,
                     lib.UntypedStorage([1, 2, 300]).tolist(), lib.UntypedStorage(3).size(),
                     lib.FloatStorage(wrap_storage=lib.UntypedStorage([1] * 8)).size(),
                     lib.TypedStorage(wrap_storage=lib.UntypedStorage([8, 0, 0, 0, 12, 0, 0, 0]),
                                      dtype=lib.int32).tolist()))
    _same(run)


@pytest.mark.parametrize("make", [
    lambda lib: lib.FloatStorage([1.0], dtype=lib.float64), lambda lib: lib.FloatStorage(1, 2),
    lambda lib: lib.FloatStorage(2.5), lambda lib: lib.TypedStorage(2.5),
    lambda lib: lib.TypedStorage(wrap_storage=lib.UntypedStorage(8)),
    lambda lib: lib.UntypedStorage([1.5]), lambda lib: lib.UntypedStorage(2.5),
])
def test_constructor_errors_are_torchs_types(make):
    _same_error(make, whole_message=False)


# ---- set_ ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    lambda lib, s: (s, 1, (2,), (2,)), lambda lib, s: (s,), lambda lib, s: (s, 0, (2, 2)),
    lambda lib, s: (s, 0, (2, 2), (1, 2)), lambda lib, s: (s, 1, [2]), lambda lib, s: (s, 1, lib.Size([2]), [1]),
    lambda lib, s: (s.untyped(), 1, (2,)), lambda lib, s: (s.untyped(),), lambda lib, s: (),
    lambda lib, s: (lib.tensor([]).set_(s, 1, (3,)),), lambda lib, s: (lib.tensor([]).set_(s, 1, (3,)), 1, (2,)),
    lambda lib, s: (lib.arange(8.0)[2:], 3, (2,), (2,)),
])
def test_set_as_torch(args):
    def run(lib):
        base = lib.tensor([1.0, 2.0, 3.0, 4.0])
        t = lib.tensor([0.0])
        before = t._version
        out = t.set_(*args(lib, base.storage()))
        shown = [out is t, repr(t), t.storage_offset(), t.stride(), t._version - before]
        if t.numel():
            t[(0,) * t.ndim] = 10.0
            shown += [repr(base), t.storage().data_ptr() == base.storage().data_ptr()]
        return repr(shown)
    _same(run)


def test_set_to_another_tensor_aliases_it():
    def run(lib):
        x, y = lib.arange(6.0).reshape(2, 3).t(), lib.zeros(1)
        y.set_(x)
        y[0, 1] = -1.0
        return repr((x, y, y.stride(), y.is_set_to(x), x.is_set_to(y), y.is_set_to(x.clone())))
    _same(run)


def test_is_set_to_as_torch():
    def run(lib):
        a = lib.tensor([1.0, 2.0])
        return repr((a.is_set_to(a), a.is_set_to(a[:]), a.is_set_to(a.view(2)), a.is_set_to(a[1:]),
                     a.is_set_to(lib.tensor([1.0, 2.0])), a.is_shared()))
    _same(run)


@pytest.mark.parametrize("call", [
    lambda lib, s: lib.tensor([], dtype=lib.int64).set_(s),
    lambda lib, s: lib.tensor([], dtype=lib.int64).set_(lib.tensor([1.0])),
    lambda lib, s: lib.tensor([]).set_(s, -1, (2,)),
    lambda lib, s: lib.tensor([]).set_(s, 1),
    lambda lib, s: lib.tensor([]).set_("a"),
    lambda lib, s: lib.tensor([1.0], requires_grad=True).set_(s),
    lambda lib, s: lib.tensor([1.0], requires_grad=True).set_(lib.tensor([2.0])),
    lambda lib, s: lib.tensor([]).set_(lib.tensor([]).set_(s)[::2], 1, (1,)),
])
def test_set_errors_are_torchs_types(call):
    _same_error(lambda lib: call(lib, lib.tensor([1.0, 2.0, 3.0, 4.0]).storage()), whole_message=False)


def test_set_under_no_grad_keeps_requires_grad():
    def run(lib):
        w = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            w.set_(lib.tensor([1.0, 2.0]).storage())
        return repr((w, w.requires_grad, w.grad_fn, w.is_leaf))
    _same(run)


def test_set_past_the_storages_end_raises_here():
    """torch grows the storage; microtorch's cannot grow in place, and says so."""
    s = microtorch.tensor([1.0, 2.0, 3.0, 4.0]).storage()
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16.*cannot grow"):
        microtorch.tensor([]).set_(s, 0, (10,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grown = torch.tensor([]).set_(torch.tensor([1.0, 2.0, 3.0, 4.0]).storage(), 0, (10,))
    assert grown.shape == (10,)  # (if torch stops growing, this test should follow it)


def test_set_from_a_tensor_requiring_grad_is_refused_here():
    """torch gives grad_fn=<NotImplemented>, whose backward cannot run: microtorch refuses, naming the fix."""
    with pytest.raises(RuntimeError, match="source.detach"):
        microtorch.tensor([0.0]).set_(microtorch.tensor([1.0, 2.0], requires_grad=True))


# ---- devices and transforms -----------------------------------------------------------------------------------
def test_meta_storages_have_no_data():
    def run(lib):
        m = lib.empty(3, 2, device="meta")
        return repr((m.storage().size(), m.untyped_storage().nbytes(), m.storage().device, m.storage().data_ptr()))
    _same(run)
    _same_error(lambda lib: lib.empty(3, device="meta").storage()[0])
    _same_error(lambda lib: lib.empty(3, device="meta").untyped_storage().tolist())


def test_vmap_has_no_storage():
    _same_error(lambda lib: lib.func.vmap(lambda t: t.storage().size())(lib.ones(2, 3)), whole_message=False)


def test_storage_of_a_parameter_and_of_a_tensor_requiring_grad():
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.storage()[0] = 5.0  # (as torch: no version change, no autograd check)
        return repr((p.storage().tolist(), x, x._version))
    _same(run)


def test_inference_mode_storage_writes():
    def run(lib):
        with lib.inference_mode():
            q = lib.ones(2)
            q.storage()[0] = 3.0
        return repr(q)
    _same(run)


def test_the_names_are_exported():
    import microtorch.storage as module
    assert module.TypedStorage is microtorch.TypedStorage and module.UntypedStorage is microtorch.UntypedStorage
    for name in ("TypedStorage", "UntypedStorage", "FloatStorage", "LongStorage", "BoolStorage", "Storage",
                 "is_storage"):
        assert name in microtorch.__all__ and hasattr(torch, name)
