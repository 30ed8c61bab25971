"""scaled_dot_product_attention's backends beside torch 2.13 on a CPU (PyTorch's SDPA tutorial: `with
sdpa_kernel(SDPBackend.FLASH_ATTENTION): try: ... except RuntimeError: ...`).

torch.nn.attention (SDPBackend, sdpa_kernel) and torch.backends.cuda's switches (enable_flash_sdp, math_sdp_enabled,
..., the deprecated sdp_kernel): which kernel runs under each selection (the output's grad_fn names it), values and
gradients, the warnings and errors when no kernel is left, and the switches before, inside and after."""
import contextlib
import importlib
import inspect
import io
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"
PREFIX = "scaled_dot_product_attention(): "  # what microtorch's functional wrapper puts before a message (see below)


def attention(lib):
    return importlib.import_module(lib.__name__ + ".nn.attention")


def switches(lib):
    """everything sdpa_kernel sets: the enabled backends (torch's listing order), the priority order, and the four
    public getters"""
    cuda = lib.backends.cuda
    order = real_torch._C._get_sdp_priority_order() if lib is real_torch else \
        importlib.import_module("microtorch.ops._sdp_backends").priority_order()
    return (repr(attention(lib)._cur_sdpa_kernel_backends()), order, cuda.flash_sdp_enabled(),
            cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled())


@pytest.fixture(autouse=True)
def _restore_switches():
    """whatever a test does to the switches, the next one starts from torch's defaults"""
    yield
    for lib in LIBS:
        A = attention(lib)
        A._sdpa_kernel(list(A.SDPBackend.__members__.values()))
        A._sdpa_kernel([A.SDPBackend(v) for v in (1, 2, 0, 3, 4)], set_priority=True)
        lib.backends.cuda.allow_fp16_bf16_reduction_math_sdp(False)


def test_defaults_are_torchs():
    assert switches(microtorch) == switches(real_torch) == (
        "[<SDPBackend.CUDNN_ATTENTION: 3>, <SDPBackend.FLASH_ATTENTION: 1>, <SDPBackend.EFFICIENT_ATTENTION: 2>, "
        "<SDPBackend.MATH: 0>, <SDPBackend.OVERRIDEABLE: 4>]", [1, 2, 0, 3, 4], True, True, True, True)


def test_nn_attention_is_reachable_as_torchs():
    """`import torch` then torch.nn.attention.sdpa_kernel, without importing torch.nn.attention by name"""
    script = "import {0} as t; print(t.nn.attention.SDPBackend.MATH, t.nn.attention.sdpa_kernel.__name__)"
    out = [subprocess.run([sys.executable, "-c", script.format(lib.__name__)], capture_output=True, text=True,
                          check=True).stdout for lib in LIBS]
    assert out[0] == out[1] == "SDPBackend.MATH sdpa_kernel\n"


# ---- SDPBackend ---------------------------------------------------------------------------------------------------
def test_sdpbackend_members_print_as_torchs():
    got = []
    for lib in LIBS:
        S = attention(lib).SDPBackend
        got.append([(name, repr(m), str(m), int(m), m.name, m.value, hash(m), f"{m}") for name, m in
                    S.__members__.items()])
    assert got[0] == got[1]
    assert got[1][1][1] == "<SDPBackend.MATH: 0>"


def test_sdpbackend_class_prints_as_torchs():
    names = [(repr(attention(lib).SDPBackend).replace(lib.__name__ + ".", "torch."), attention(lib).SDPBackend.__name__,
              attention(lib).SDPBackend.__module__.replace(lib.__name__, "torch")) for lib in LIBS]
    assert names[0] == names[1] == ("<class 'torch.nn.attention._SDPBackend'>", "SDPBackend", "torch.nn.attention")


def _enum_behaviour(S):
    out = [S.MATH == 0, S.MATH != 0, S.MATH == S(0), S(True) == S.FLASH_ATTENTION, repr(S(9)), S(9).name,
           S.MATH == S.FLASH_ATTENTION, sorted(k for k in S.__members__), S.MATH.__index__()]
    for bad in (lambda: S("MATH"), lambda: S(2.0), lambda: list(S), lambda: S.MATH < S.FLASH_ATTENTION):
        try:
            bad()
            out.append("no error")
        except Exception as e:
            out.append(type(e).__name__)
    return out


def test_sdpbackend_compares_converts_and_refuses_as_torchs():
    """a pybind11 enum: equal only to members (not to ints), int() works, no order, not iterable"""
    assert _enum_behaviour(attention(microtorch).SDPBackend) == _enum_behaviour(attention(real_torch).SDPBackend)


def test_sdpbackend_refuses_a_string_with_torchs_first_line():
    first = []
    for lib in LIBS:
        with pytest.raises(TypeError) as e:
            attention(lib).SDPBackend("x")
        first.append(str(e.value).splitlines()[0])
    assert first[0] == first[1]


def test_nn_attention_names():
    ours = attention(microtorch)
    for name in ours.__all__:
        assert hasattr(attention(real_torch), name), name
    assert ours.WARN_FOR_UNFUSED_KERNELS is attention(real_torch).WARN_FOR_UNFUSED_KERNELS is False
    assert inspect.signature(ours.sdpa_kernel).parameters.keys() == \
        inspect.signature(attention(real_torch).sdpa_kernel).parameters.keys()


# ---- which kernel runs: every selection, on inputs that suit the fused kernel and on inputs that do not --------------
def _r(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


Q4, Q3 = (2, 3, 4, 8), (3, 4, 8)
CASES = {
    "4d": ([Q4] * 3, {}),
    "3d": ([Q3] * 3, {}),
    "4d dropout": ([Q4] * 3, {"dropout_p": 0.5}),
    "3d dropout": ([Q3] * 3, {"dropout_p": 0.5}),
    "4d causal": ([Q4] * 3, {"is_causal": True}),
    "3d causal": ([Q3] * 3, {"is_causal": True}),
    "4d bool mask": ([Q4] * 3, {"attn_mask": _r(4, 4) > 0}),
    "4d float mask": ([Q4] * 3, {"attn_mask": _r(4, 4)}),
    "4d mask (1, 4)": ([Q4] * 3, {"attn_mask": _r(1, 4)}),
    "4d mask (1, 3, 1, 4)": ([Q4] * 3, {"attn_mask": _r(1, 3, 1, 4)}),
    "4d 3-d mask": ([Q4] * 3, {"attn_mask": _r(3, 4, 4)}),
    "4d 1-d mask": ([Q4] * 3, {"attn_mask": _r(4)}),
    "4d 0-d mask": ([Q4] * 3, {"attn_mask": _r()}),
    "4d mask (3, 5)": ([Q4] * 3, {"attn_mask": _r(3, 5)}),
    "4d mask and causal": ([Q4] * 3, {"attn_mask": _r(4, 4), "is_causal": True}),
    "3d mask and causal": ([Q3] * 3, {"attn_mask": _r(4, 4), "is_causal": True}),
    "batch broadcast": ([Q4, (1, 3, 4, 8), (1, 3, 4, 8)], {}),
    "heads broadcast": ([Q4, (2, 1, 4, 8), (2, 1, 4, 8)], {}),
    "value head size": ([Q4, Q4, (2, 3, 4, 6)], {}),
    "key head size": ([Q4, (2, 3, 4, 6), Q4], {}),
    "gqa": ([(2, 4, 4, 8), (2, 2, 4, 8), (2, 2, 4, 8)], {"enable_gqa": True}),
    "gqa not dividing": ([(2, 4, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8)], {"enable_gqa": True}),
    "gqa key and value heads differ": ([(2, 4, 4, 8), (2, 2, 4, 8), (2, 4, 4, 8)], {"enable_gqa": True}),
    "5d": ([(1, 2, 3, 4, 8)] * 3, {}),
    "2d": ([(4, 8)] * 3, {}),
    "longer keys, scale": ([Q4, (2, 3, 6, 8), (2, 3, 6, 8)], {"scale": 0.3}),
    "float64": ([Q4] * 3, {"dtype": np.float64}),
    "int64": ([Q4] * 3, {"dtype": np.int64}),
}
SELECTIONS = [None, "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE", "ERROR",
              ["FLASH_ATTENTION", "MATH"], ["EFFICIENT_ATTENTION", "MATH"], ["OVERRIDEABLE", "FLASH_ATTENTION"],
              ["CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "FLASH_ATTENTION"], []]


def _selection(lib, sel):
    S = attention(lib).SDPBackend
    if sel is None:
        return contextlib.nullcontext()
    return attention(lib).sdpa_kernel(getattr(S, sel) if isinstance(sel, str) else [getattr(S, s) for s in sel])


def _inputs(lib, shapes, kw):
    kw = dict(kw)
    dtype = kw.pop("dtype", np.float32)
    qkv = [lib.tensor(_r(*s, dtype=np.float64, seed=i).astype(dtype)) for i, s in enumerate(shapes)]
    if dtype != np.int64:
        for t in qkv:
            t.requires_grad_()
    return qkv, {n: (lib.tensor(a) if isinstance(a, np.ndarray) else a) for n, a in kw.items()}


def _warnings_of(record):
    return [(w.category.__name__, str(w.message).split(" (Triggered internally at")[0]) for w in record]


def attend(lib, sel, shapes, kw):
    """(grad_fn name or exception type, output or message, gradients of q, k, v, warnings)"""
    qkv, kw = _inputs(lib, shapes, kw)
    lib.manual_seed(0)
    with _selection(lib, sel), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            out = lib.nn.functional.scaled_dot_product_attention(*qkv, **kw)
        except Exception as e:  # (the wrapper's prefix: test_error_texts_are_verbatim_at_the_public_function)
            return type(e).__name__, str(e).removeprefix(PREFIX), None, _warnings_of(record)
    grads = None
    if out.requires_grad:
        grads = lib.autograd.grad((out * lib.tensor(_r(*out.shape, seed=7))).sum(), qkv)
        grads = [g.numpy() for g in grads]
    return type(out.grad_fn).__name__, out.detach().numpy(), grads, _warnings_of(record)


def _same(want, got, what):
    assert got.shape == want.shape, what
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("sel", SELECTIONS, ids=[str(s) for s in SELECTIONS])
@pytest.mark.parametrize("case", list(CASES))
def test_kernel_values_gradients_warnings_and_errors_as_torch(case, sel):
    shapes, kw = CASES[case]
    want, got = (attend(lib, sel, shapes, kw) for lib in LIBS)
    assert got[0] == want[0], (got[:2], want[:2])
    assert got[3] == want[3]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    elif "dropout_p" not in kw:
        _same(want[1], got[1], "output")
        for a, b, name in zip(want[2] or (), got[2] or (), "qkv"):
            _same(a, b, f"grad of {name}")


def test_the_matrix_sees_every_outcome():
    """the cases above reach the fused kernel, the math path, both errors, and warnings with a reason"""
    seen = {attend(microtorch, s, *CASES[c])[0] for s in ("FLASH_ATTENTION", "MATH") for c in ("4d", "3d")}
    assert seen == {FLASH, "UnsafeViewBackward0", "RuntimeError"}
    kind, text, _, warned = attend(microtorch, "FLASH_ATTENTION", *CASES["3d"])
    assert text == "No available kernel.  Aborting execution." and len(warned) == 2
    kind, text, _, warned = attend(microtorch, "EFFICIENT_ATTENTION", *CASES["4d"])
    assert text.startswith("No viable backend for scaled_dot_product_attention was found.") and warned == []


def test_default_selection_runs_torchs_kernel_on_masks_and_broadcasts():
    """before the switches, microtorch ran its fused op on a 3-d mask and on broadcast batches, which torch sends
    down the math path"""
    for case in ("4d 3-d mask", "batch broadcast", "heads broadcast"):
        assert attend(microtorch, None, *CASES[case])[0] == "UnsafeViewBackward0"
    assert attend(microtorch, None, *CASES["4d mask (1, 3, 1, 4)"])[0] == FLASH


@pytest.mark.xfail(strict=True, reason="nn/functional.py's torch_checked wrapper (ops/_torch_order.py) puts "
                                       "'scaled_dot_product_attention(): ' before a message that does not name the op")
def test_error_texts_are_verbatim_at_the_public_function():
    F = microtorch.nn.functional
    q = microtorch.randn(3, 4, 8)
    with attention(microtorch).sdpa_kernel(attention(microtorch).SDPBackend.FLASH_ATTENTION), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as e:
            F.scaled_dot_product_attention(q, q, q)
    assert str(e.value) == "No available kernel.  Aborting execution."


def test_error_texts_are_verbatim_at_the_op():
    from microtorch.ops.attention import scaled_dot_product_attention
    q = microtorch.randn(3, 4, 8)
    A = attention(microtorch)
    with A.sdpa_kernel(A.SDPBackend.FLASH_ATTENTION), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as e:
            scaled_dot_product_attention(q, q, q)
    assert str(e.value) == "No available kernel.  Aborting execution."
    q4 = microtorch.randn(2, 3, 4, 8)
    with pytest.raises(IndexError) as e:
        scaled_dot_product_attention(q4, q4, q4, attn_mask=microtorch.zeros(4))
    assert str(e.value) == "Dimension out of range (expected to be in range of [-1, 0], but got -2)"


def test_warnings_point_at_the_callers_line():
    places = []
    for lib in LIBS:
        q = lib.randn(3, 4, 8)
        with _selection(lib, "FLASH_ATTENTION"), warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError):
                lib.nn.functional.scaled_dot_product_attention(q, q, q)
        places.append([w.filename for w in record])
    assert places[0] == places[1] == [__file__, __file__]


def test_switches_set_one_by_one_choose_as_sdpa_kernel():
    """torch.backends.cuda.enable_math_sdp(False) alone leaves the fused kernel, which 3-d inputs do not suit"""
    got = []
    for lib in LIBS:
        lib.backends.cuda.enable_math_sdp(False)
        got.append([attend(lib, None, *CASES[c])[:1] + attend(lib, None, *CASES[c])[3:] for c in ("4d", "3d")])
        lib.backends.cuda.enable_flash_sdp(False)
        got[-1].append(attend(lib, None, *CASES["4d"])[:2])
        lib.backends.cuda.enable_math_sdp(True)
        got[-1].append(attend(lib, None, *CASES["4d"])[0])
    assert got[0] == got[1]
    assert got[1][-1] == "UnsafeViewBackward0"


# ---- inputs with nothing to attend: torch answers before it picks a kernel -----------------------------------------
EMPTY = [((2, 3, 0, 8), (2, 3, 4, 8), (2, 3, 4, 8)), ((2, 3, 4, 8), (2, 3, 0, 8), (2, 3, 0, 8)),
         ((0, 3, 4, 8), (0, 3, 4, 8), (0, 3, 4, 8)), ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 0)),
         ((0, 8), (5, 8), (5, 8)), ((4, 0), (5, 0), (5, 3)), ((3, 4, 0), (3, 5, 0), (3, 5, 2)),
         ((0, 4, 8), (1, 5, 8), (1, 5, 8))]


@pytest.mark.parametrize("sel", [None, "FLASH_ATTENTION", "EFFICIENT_ATTENTION"])
@pytest.mark.parametrize("shapes", EMPTY, ids=[str(s) for s in EMPTY])
def test_empty_inputs_as_torch(shapes, sel):
    want, got = (attend(lib, sel, shapes, {}) for lib in LIBS)
    assert got[0] == want[0]
    assert got[3] == want[3]
    if not isinstance(want[1], str):
        _same(want[1], got[1], "output")
        for a, b in zip(want[2], got[2]):
            _same(a, b, "gradient")


def test_empty_inputs_are_tied_to_the_inputs_as_torchs():
    chains = []
    for lib in LIBS:
        q = lib.randn(2, 3, 0, 8, requires_grad=True)
        fn, chain = lib.nn.functional.scaled_dot_product_attention(q, lib.randn(2, 3, 4, 8), lib.randn(2, 3, 4, 8)) \
            .grad_fn, []
        while fn is not None:
            chain.append(type(fn).__name__)
            fn = next((f for f, _ in fn.next_functions if f is not None), None)
        chains.append(chain)
    assert chains[0] == chains[1] == ["AddBackward0", "MulBackward1", "AddBackward0", "AddBackward0", "SumBackward0",
                                      "AccumulateGrad"]


# ---- half precision -----------------------------------------------------------------------------------------------
def test_math_path_computes_half_in_float32_as_torch():
    got = []
    for lib in LIBS:
        q = lib.tensor(_r(2, 2, 4, 8), dtype=lib.float16)
        with _selection(lib, "MATH"):
            out = lib.nn.functional.scaled_dot_product_attention(q.requires_grad_(), q * 0.5, q * 0.25)
        got.append((type(out.grad_fn).__name__, str(out.dtype).split(".")[-1], out.detach().numpy()))
    assert got[0][:2] == got[1][:2] == ("ToCopyBackward0", "float16")
    np.testing.assert_array_equal(got[0][2], got[1][2])


def test_fused_kernel_on_half_short_keys_is_torchs_to_the_bit():
    """torch's kernel keeps scores and sums in float32 and rounds the unnormalised probabilities to half before
    their product with v. With few keys microtorch gives its bits; from about 8 keys on, torch's vector loops
    differ in the last bits and outputs by a few float16 ulps (test_tutorial_blocks_as_torch's tolerance)"""
    got = []
    for lib in LIBS:
        q, k, v = (lib.tensor(_r(2, 2, n, 8, seed=i) * 2, dtype=lib.float16) for i, n in enumerate((5, 4, 4)))
        out = lib.nn.functional.scaled_dot_product_attention(q.requires_grad_(), k, v)
        assert type(out.grad_fn).__name__ == FLASH
        got.append(out.detach().numpy())
    np.testing.assert_array_equal(got[0], got[1])


# ---- sdpa_kernel: the switches before, inside and after ----------------------------------------------------------
def _states_through(lib, script):
    A = attention(lib)
    S = A.SDPBackend
    states = [switches(lib)]
    script(A, S, lambda: states.append(switches(lib)))
    states.append(switches(lib))
    return states


def _nested(A, S, note):
    with A.sdpa_kernel([S.MATH, S.FLASH_ATTENTION], set_priority=True) as context:
        note()
        assert context == {}
        with A.sdpa_kernel(S.MATH):
            note()
        note()
        with A.sdpa_kernel([S.CUDNN_ATTENTION, S.MATH, S.MATH], set_priority=True):
            note()
            with A.sdpa_kernel([S.FLASH_ATTENTION], set_priority=True):
                note()
            note()
        note()


def _raising_inside(A, S, note):
    try:
        with A.sdpa_kernel(S.FLASH_ATTENTION):
            note()
            raise KeyError("inside")
    except KeyError:
        note()


def _odd_lists(A, S, note):
    for backends in ([], [S.ERROR], [S.OVERRIDEABLE, S.EFFICIENT_ATTENTION], ["MATH"], [S.MATH, S.MATH]):
        with A.sdpa_kernel(backends):
            note()


def _one_by_one(A, S, note):
    for backend in S.__members__.values():
        with A.sdpa_kernel(backend):
            note()


@pytest.mark.parametrize("script", [_nested, _raising_inside, _odd_lists, _one_by_one],
                         ids=["nested, set_priority", "raising inside", "odd lists", "each backend"])
def test_switches_before_inside_and_after_as_torch(script):
    want, got = (_states_through(lib, script) for lib in LIBS)
    assert got == want
    assert got[0] == got[-1]


def test_sdpa_kernel_refuses_what_is_not_a_backend_or_list():
    got = []
    for lib in LIBS:
        for bad in ("MATH", (attention(lib).SDPBackend.MATH,), None, 0):
            with pytest.raises(AssertionError) as e:
                with attention(lib).sdpa_kernel(bad):
                    pass
            got.append(str(e.value))
    assert got[:4] == got[4:]
    assert got[0] == "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got str"


def test_cur_backends_with_priority_as_torch():
    got = []
    for lib in LIBS:
        A = attention(lib)
        with A.sdpa_kernel([A.SDPBackend.MATH, A.SDPBackend.CUDNN_ATTENTION], set_priority=True):
            got.append((repr(A._cur_sdpa_kernel_backends()), repr(A._cur_sdpa_kernel_backends(with_priority=True))))
    assert got[0] == got[1]


# ---- torch.backends.cuda -------------------------------------------------------------------------------------------
SETTERS = ["enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp", "enable_cudnn_sdp",
           "allow_fp16_bf16_reduction_math_sdp"]
GETTERS = ["flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled",
           "fp16_bf16_reduction_math_sdp_allowed"]


@pytest.mark.parametrize("setter, getter", list(zip(SETTERS, GETTERS)))
def test_switch_set_get_and_refuse_as_torch(setter, getter):
    got = []
    for lib in LIBS:
        cuda = lib.backends.cuda
        seen = [getattr(cuda, getter)()]
        for value in (False, True, False, 1, "yes", None, np.bool_(True), 0.0, lib.tensor(True)):
            try:
                getattr(cuda, setter)(value)
                seen.append(getattr(cuda, getter)())
            except Exception as e:
                seen.append((type(e).__name__, str(e)))
        got.append(seen)
    assert got[0] == got[1]


def test_gpu_questions_answer_as_torch_on_a_cpu():
    got = []
    for lib in LIBS:
        cuda = lib.backends.cuda
        q = lib.randn(2, 3, 4, 8)
        params = cuda.SDPAParams(q, q, q, None, 0.0, True, False)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            answers = [cuda.can_use_flash_attention(params), cuda.can_use_efficient_attention(params, True),
                       cuda.can_use_cudnn_attention(params, debug=True), cuda.is_flash_attention_available(),
                       cuda.is_ck_sdpa_available()]
        got.append((answers, len(record), params.query is q, params.attn_mask, params.dropout, params.is_causal,
                    params.enable_gqa, cuda.SDPAParams.__name__))
        with pytest.raises(TypeError):
            cuda.SDPAParams(q, q, q, None, 0.0, True)
    assert got[0] == got[1]
    assert got[1][0] == [False] * 5


def _deprecated_sdp_kernel(lib):
    cuda = lib.backends.cuda
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        manager = cuda.sdp_kernel(enable_flash=False, enable_cudnn=False)
    said = [(w.category.__name__, str(w.message), w.filename.rsplit("/", 1)[-1]) for w in record]
    with manager as context:
        inside = switches(lib), context, attend(lib, None, *CASES["4d"])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with cuda.sdp_kernel(enable_flash=False, enable_math=False, enable_mem_efficient=False, enable_cudnn=False):
            nothing = attend(lib, None, *CASES["4d"])[:2]
    return said, inside, nothing, switches(lib)


def test_deprecated_sdp_kernel_as_torch():
    want, got = (_deprecated_sdp_kernel(lib) for lib in LIBS)
    assert got == want
    assert got[0][0][:1] == ("FutureWarning",) and got[0][0][2] == "contextlib.py"
    assert got[1][2] == "UnsafeViewBackward0"
    sig = [{n: p.default for n, p in inspect.signature(lib.backends.cuda.sdp_kernel).parameters.items()}
           for lib in LIBS]
    assert sig[0] == sig[1]


# ---- the tutorial's three blocks, and nn.MultiheadAttention under the switches -------------------------------------
def _tutorial(lib, dtype):
    """PyTorch's SDPA tutorial, its benchmark replaced by one call"""
    F = lib.nn.functional
    SDPBackend, sdpa_kernel = attention(lib).SDPBackend, attention(lib).sdpa_kernel
    query, key, value = (lib.tensor(_r(2, 4, 16, 8, seed=i), dtype=getattr(lib, dtype)) for i in range(3))
    printed, outputs = io.StringIO(), []
    with contextlib.redirect_stdout(printed), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with sdpa_kernel(SDPBackend.MATH):
            outputs.append(F.scaled_dot_product_attention(query, key, value))
            print("The math implementation runs")
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            try:
                outputs.append(F.scaled_dot_product_attention(query, key, value))
                print("The flash attention implementation runs")
            except RuntimeError:
                print("FlashAttention is not supported. See warnings for reasons.")
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            try:
                outputs.append(F.scaled_dot_product_attention(query, key, value))
                print("The memory efficient implementation runs")
            except RuntimeError:
                print("EfficientAttention is not supported. See warnings for reasons.")
    return printed.getvalue(), _warnings_of(record), [o.float().numpy() for o in outputs]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_tutorial_blocks_as_torch(dtype):
    want, got = (_tutorial(lib, dtype) for lib in LIBS)
    assert got[:2] == want[:2]
    assert got[0].splitlines()[-1] == "EfficientAttention is not supported. See warnings for reasons."
    tol = 1e-6 if dtype == "float32" else 4e-3  # (half: see test_fused_kernel_on_half_short_keys_is_torchs_to_the_bit)
    for a, b in zip(want[2], got[2]):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def _mha(lib):
    A, out = attention(lib), []
    for sel in ("MATH", "FLASH_ATTENTION"):
        for training, p in ((True, 0.0), (True, 0.5), (False, 0.5)):
            lib.manual_seed(0)
            mha = lib.nn.MultiheadAttention(8, 2, dropout=p, batch_first=True).train(training)
            x = lib.tensor(_r(2, 5, 8), requires_grad=True)
            with A.sdpa_kernel(getattr(A.SDPBackend, sel)), warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                try:
                    out.append(type(mha(x, x, x, need_weights=False)[0].grad_fn).__name__)
                except RuntimeError as e:
                    out.append(str(e))
            out.append(_warnings_of(record))
    return out


def test_multihead_attention_under_the_switches_as_torch():
    """MultiheadAttention(need_weights=False) attends through scaled_dot_product_attention: with dropout in training
    only the math path takes it"""
    want, got = _mha(real_torch), _mha(microtorch)
    assert got == want
    assert "No available kernel.  Aborting execution." in got
