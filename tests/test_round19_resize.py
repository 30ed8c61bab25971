"""resize_, resize_as_, storage_offset and the deprecated resize / resize_as, beside torch.

NYU's DLSP20 tensor notebook resizes an alias of a tensor (`r = torch.Tensor(t); r.resize_(3, 8)`) and zeroes it to
show that t changed too; `t.resize_(0)` is how torch's warning about `out=` says to reuse an output. Each case runs
the same code in torch and in microtorch and compares shapes, strides, storage offsets, values, versions, warnings
and errors.
"""
import warnings

import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "mt": microtorch}


def _state(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.detach().numpy().tolist(), t._version)


def _both(program):
    """program(lib) run with each library: (result or (exception type name, first words)) for each."""
    out = {}
    for name, lib in LIBS.items():
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                result = program(lib)
            out[name] = (result, [(w.category.__name__, str(w.message)) for w in seen])
        except Exception as e:  # (compared: the type, and that microtorch's message starts as torch's)
            out[name] = ("raised", type(e).__name__, str(e))
    return out["torch"], out["mt"]


def _same(program, own_message=False):
    """Equal results and warnings, or the same exception type with a message that starts as torch's (own_message:
    microtorch's says more than torch's, which names neither the op nor the cause)."""
    t, m = _both(program)
    if t[0] == "raised":
        assert m[0] == "raised" and m[1] == t[1], (t, m)
        assert own_message or m[2].startswith(t[2].split(" (")[0][:60]) or t[2][:60] in m[2], (t[2], m[2])
    else:
        assert t == m


def _grid(lib, n=24, dtype=None):
    return lib.arange(float(n), dtype=dtype or lib.float64)


def test_dlsp20_alias_resized_then_zeroed():
    """The notebook's cell: r aliases t; resizing r keeps the storage, so zeroing r zeroes t."""
    def program(lib):
        t = lib.Tensor(2, 3, 4)
        t.copy_(lib.arange(24.).reshape(2, 3, 4))
        r = lib.Tensor(t)
        r.resize_(3, 8)
        before = _state(r)
        r.zero_()
        return before, tuple(t.shape), float(t.sum()), r.data_ptr() == t.data_ptr()
    _same(program)


CASES = {
    "same count": lambda lib: _grid(lib).resize_(3, 8),
    "shrink": lambda lib: _grid(lib).resize_(2, 5),
    "shrink then grow back": lambda lib: _grid(lib).resize_(2).resize_(4, 6),
    "to 0-d": lambda lib: _grid(lib).resize_(()),
    "to empty": lambda lib: _grid(lib).resize_(0),
    "a size list": lambda lib: _grid(lib).resize_([4, 3]),
    "a Size": lambda lib: _grid(lib).resize_(lib.Size([2, 2, 2])),
    "size keyword": lambda lib: _grid(lib).resize_(size=(3, 2)),
    "an int tensor as a size": lambda lib: _grid(lib).resize_(lib.tensor(2), 3),
    "transposed: storage order": lambda lib: _grid(lib, 6).reshape(2, 3).t().resize_(2, 3),
    "transposed, same shape: unchanged": lambda lib: _grid(lib, 6).reshape(2, 3).t().resize_(3, 2),
    "a slice: from its offset": lambda lib: _grid(lib, 10)[2:5].resize_(2, 3),
    "a column": lambda lib: _grid(lib, 12).reshape(3, 4)[:, 1].resize_(4),
    "channels_last": lambda lib: _grid(lib, 120).resize_(2, 3, 4, 5, memory_format=lib.channels_last),
    "channels_last_3d": lambda lib: _grid(lib, 120).resize_(1, 2, 3, 4, 5, memory_format=lib.channels_last_3d),
    "contiguous_format": lambda lib: _grid(lib, 6).reshape(2, 3).t().resize_(3, 2,
                                                                           memory_format=lib.contiguous_format),
    "integers": lambda lib: lib.arange(12).resize_(3, 4),
    "booleans": lambda lib: (lib.arange(6) > 2).resize_(2, 2),
    "float32": lambda lib: _grid(lib, 8, lib.float32).resize_(2, 2),
    "resize_as_": lambda lib: _grid(lib).resize_as_(lib.zeros(4, 5)),
    "resize_as_ keeps no layout of the template":
        lambda lib: _grid(lib, 120).resize_as_(lib.zeros(5, 4, 3, 2).to(memory_format=lib.channels_last)),
}


@pytest.mark.parametrize("case", CASES)
def test_resize_in_place(case):
    def program(lib):
        t = CASES[case](lib)
        return _state(t)
    _same(program)


def test_growing_keeps_the_old_elements():
    """Growing past the storage keeps the elements it had (the new ones are uninitialized in torch: not compared)."""
    def program(lib):
        t = _grid(lib, 6)
        t.resize_(3, 4)
        return tuple(t.shape), t.stride(), t.flatten()[:6].tolist()
    _same(program)


def test_growing_an_empty_tensor_then_filling_it():
    """The legacy idiom: an empty tensor, resized, then filled."""
    def program(lib):
        t = lib.Tensor()
        t.resize_(2, 3).fill_(1.5)
        return _state(t)
    _same(program)


def test_writes_through_a_resized_view_reach_the_base():
    def program(lib):
        base = _grid(lib, 6)
        v = base[2:]
        v.resize_(2, 2)
        v.fill_(-1)
        return base.tolist(), v._base is base, v._version, base._version
    _same(program)


def test_reusing_an_out_tensor_after_resize_to_zero_does_not_warn():
    def program(lib):
        out = lib.ones(5)
        out.resize_(0)
        lib.add(lib.ones(2, 2), 1, out=out)
        return _state(out)
    _same(program)


ERRORS = {
    "a leaf that requires grad": lambda lib: lib.ones(3, requires_grad=True).resize_(2),
    "a result that requires grad": lambda lib: (lib.ones(3, requires_grad=True) * 2).resize_(3),
    "resize_as_ of a leaf that requires grad": lambda lib: lib.ones(3, requires_grad=True).resize_as_(lib.ones(2)),
    "a negative size": lambda lib: _grid(lib).resize_(2, -3),
    "a float size": lambda lib: _grid(lib).resize_(2.5),
    "a string size": lambda lib: _grid(lib).resize_("a"),
    "no size": lambda lib: _grid(lib).resize_(),
    "two sequences": lambda lib: _grid(lib).resize_((2, 3), 4),
    "channels_last of 2 dims": lambda lib: _grid(lib).resize_(4, 6, memory_format=lib.channels_last),
    "channels_last_3d of 4 dims": lambda lib: _grid(lib).resize_(1, 2, 3, 4, memory_format=lib.channels_last_3d),
    "preserve_format": lambda lib: _grid(lib).resize_(4, 6, memory_format=lib.preserve_format),
    "a template that is not a tensor": lambda lib: _grid(lib).resize_as_(5),
    "too many elements": lambda lib: _grid(lib).resize_(2 ** 62, 4),
}


# torch says "numel: integer multiplication overflow" for these
OWN_MESSAGES = {"a negative size": "negative dimension -3", "too many elements": "Storage size calculation overflowed"}


@pytest.mark.parametrize("case", ERRORS)
def test_resize_errors(case):
    _same(ERRORS[case], own_message=case in OWN_MESSAGES)
    if case in OWN_MESSAGES:
        with pytest.raises(RuntimeError, match=OWN_MESSAGES[case]):
            ERRORS[case](microtorch)


def test_requires_grad_is_refused_under_no_grad_too():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            x.resize_(2)
    _same(program)


def test_a_detached_tensor_may_be_resized():
    def program(lib):
        x = lib.arange(4.).requires_grad_()
        d = x.detach()
        d.resize_(2, 2)
        return _state(d), x.tolist(), x.requires_grad
    _same(program)


def test_an_inference_tensor_outside_inference_mode():
    def program(lib):
        with lib.inference_mode():
            t = lib.zeros(4)
        t.resize_(2)
    _same(program)


def test_torch_resize_as_():
    _same(lambda lib: _state(lib.resize_as_(_grid(lib, 6), lib.zeros(2, 2))))


DEPRECATED = {
    "resize": lambda lib, x: x.resize(2, 3),
    "resize_as": lambda lib, x: x.resize_as(lib.zeros(3, 2)),
    "resize of a transposed tensor": lambda lib, x: x.reshape(2, 3).t().resize(6),
}


@pytest.mark.parametrize("case", DEPRECATED)
@pytest.mark.parametrize("grad", [False, True])
def test_deprecated_resize(case, grad):
    """A warning, a reshape (a view where the tensor is contiguous) and torch's node, ResizeBackward."""
    def program(lib):
        x = lib.arange(6., dtype=lib.float64, requires_grad=grad)
        y = DEPRECATED[case](lib, x)
        node = y.grad_fn.name() if y.grad_fn is not None else None
        shares = y.data_ptr() == x.data_ptr()
        grad_of_x = None
        if grad:
            (y * lib.arange(6., dtype=lib.float64).reshape(y.shape)).sum().backward()
            grad_of_x = x.grad.tolist()
        return tuple(y.shape), y.stride(), y.tolist(), node, shares, y._base is x, grad_of_x
    _same(program)


def test_deprecated_resize_keeps_the_number_of_elements():
    _same(lambda lib: lib.arange(6., requires_grad=True).resize(4, 2))


def test_deprecated_resize_takes_ints_only():
    """torch's resize multiplies what it is given: a tuple fails its count check."""
    _same(lambda lib: lib.arange(6.).resize((3, 2)), own_message=True)


def test_deprecated_resize_warns_at_the_users_line():
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated") as seen:
        microtorch.arange(6.).resize(2, 3)
    assert seen[0].filename == __file__


VIEWS = {
    "slice": lambda t: t[3:],
    "row": lambda t: t.reshape(4, 6)[2],
    "column": lambda t: t.reshape(4, 6)[:, 5],
    "narrow": lambda t: t.reshape(4, 6).narrow(1, 2, 3),
    "diagonal": lambda t: t.reshape(4, 6).diagonal(offset=2),
    "transpose of a slice": lambda t: t.reshape(4, 6)[1:, 2:].t(),
    "unbind": lambda t: t.reshape(4, 6).unbind(0)[3],
    "split": lambda t: t.split(10)[2],
    "expand of a slice": lambda t: t[5:6].expand(3),
    "select of a view of a view": lambda t: t.view(2, 3, 4)[1][2],
    "a fresh tensor": lambda t: t.clone(),
}


@pytest.mark.parametrize("case", VIEWS)
def test_storage_offset(case):
    _same(lambda lib: VIEWS[case](_grid(lib)).storage_offset())


def test_a_resized_alias_shares_memory():
    """A check on the test itself: a tensor made by resize_ shares the storage (so this test can fail)."""
    t = microtorch.arange(6.)
    r = microtorch.Tensor(t)
    r.resize_(2, 3)
    r[1, 2] = 50.0
    assert t[5].item() == 50.0 and np.shares_memory(r.numpy(), t.numpy())


def test_a_tensor_over_read_only_memory():
    """from_numpy of a read-only array (torch warns): its views' storage offsets, and resize_, which keeps its
    elements (microtorch resizes a writable copy: numpy will not write into that buffer)."""
    def program(lib):
        data = np.arange(6.0)
        data.flags.writeable = False
        t = lib.from_numpy(data)
        offset = t[2:].storage_offset()
        t.resize_(2, 2)
        return offset, t.tolist(), t.storage_offset()
    theirs, ours = _both(program)
    assert ours[0] == theirs[0]  # (the values; torch also warns, once in a process, about the non-writable array)
