"""microtorch.nn.utils.rnn against torch 2.13: padding, packing and unpacking batches of sequences (values, dtypes,
grad_fn names and the graphs behind them, gradients, errors), RNN/LSTM/GRU on a PackedSequence (outputs, final states
at each sequence's length, gradients), and the textbook pattern of Raschka's ch. 15 (Embedding, pack_padded_sequence,
LSTM, hidden[-1], Linear) trained from the same seed, its batches padded by a DataLoader's collate_fn."""
import sys

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

LIBS = (torch, mt)


def _names(fn, depth=3):
    """a node and what it points to, `depth` levels down, by name (None for an edge without a node)"""
    if fn is None:
        return "None"
    if depth == 0:
        return fn.name()
    return fn.name() + "(" + ",".join(_names(f, depth - 1) for f, _ in fn.next_functions) + ")"


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(a, b, what):
    """bit for bit, with the same dtype (by name) and shape"""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{what}: {a.dtype} vs {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"{what}: {tuple(a.shape)} vs {tuple(b.shape)}"
    np.testing.assert_array_equal(_np(a), _np(b), err_msg=what)


def _seqs(lib, lengths, feat=(2,), dtype=None, grad=True, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n,) + feat) for n in lengths]
    return [lib.tensor(a, dtype=dtype, requires_grad=grad) for a in arrays]


# ---------------------------------------------------------------- the module itself


def test_a_real_submodule_and_an_attribute():
    from microtorch.nn.utils.rnn import pad_sequence, PackedSequence  # noqa: F401
    import microtorch.nn.utils.rnn as r
    assert mt.nn.utils.rnn is r is sys.modules["microtorch.nn.utils.rnn"]
    assert sorted(r.__all__) == sorted(torch.nn.utils.rnn.__all__)
    for name in torch.nn.utils.rnn.__all__:
        assert callable(getattr(mt.nn.utils.rnn, name)), name


# ---------------------------------------------------------------- pad_sequence


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("value", [0.0, -1.5])
def test_pad_sequence_as_torch(batch_first, side, value):
    out, grads = [], []
    for lib in LIBS:
        seqs = _seqs(lib, [2, 4, 1], feat=(3,), dtype=lib.float64)
        p = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=value, padding_side=side)
        seed = lib.tensor(np.arange(p.numel(), dtype=np.float64).reshape(tuple(p.shape)))
        grads.append(lib.autograd.grad((p * seed).sum(), seqs))
        out.append(p)
    _same(out[1], out[0], "padded")
    assert _names(out[1].grad_fn, 4) == _names(out[0].grad_fn, 4)
    assert out[1].grad_fn.name() == "torch::autograd::CopySlices"
    for a, b in zip(grads[1], grads[0]):
        _same(a, b, "gradient")


def test_pad_sequence_keeps_the_first_dtype_and_takes_a_tensor():
    for dtype_a, dtype_b, value in (("int64", "int64", 0), ("int64", "int64", 2.7), ("float32", "float64", 0.5),
                                    ("float64", "float32", 0), ("bool", "bool", 1)):
        res = [lib.nn.utils.rnn.pad_sequence([lib.ones(3, dtype=getattr(lib, dtype_a)),
                                              lib.zeros(1, dtype=getattr(lib, dtype_b))], True, value)
               for lib in LIBS]
        _same(res[1], res[0], f"{dtype_a}, {dtype_b}, {value}")
    x = np.arange(6.).reshape(3, 2)  # a tensor: each row is a sequence of length 2
    res = [lib.nn.utils.rnn.pad_sequence(lib.tensor(x)) for lib in LIBS]
    _same(res[1], res[0], "a tensor of sequences")


@pytest.mark.parametrize("call, exc", [
    ("R.pad_sequence([])", RuntimeError),
    ("R.pad_sequence([lib.ones(2)], padding_side='up')", RuntimeError),
    ("R.pad_sequence([lib.ones(2, 3), lib.ones(1, 4)])", RuntimeError),
    ("R.pad_sequence([lib.ones(2), [1.0]])", TypeError),
    ("R.pad_sequence([lib.tensor(1.0)])", RuntimeError),
    ("R.pad_sequence(5)", RuntimeError),
])
def test_pad_sequence_errors_as_torch(call, exc):
    messages = []
    for lib in LIBS:
        with pytest.raises(exc) as info:
            eval(call, {"R": lib.nn.utils.rnn, "lib": lib})
        messages.append(str(info.value))
    assert messages[1].startswith(messages[0].split(" at non-singleton")[0]), messages


# ---------------------------------------------------------------- pack_padded_sequence


def _padded(lib, shape=(4, 3, 2), seed=1):
    x = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(x, requires_grad=True)


@pytest.mark.parametrize("lengths, sort, batch_first", [
    ([4, 2, 1], True, False), ([1, 4, 2], False, False), ([2, 2, 1], True, False), ([3, 3, 3], False, False),
    ([3, 4, 2], False, True), ([4, 4, 1], True, True)])
@pytest.mark.parametrize("kind", ["list", "numpy", "int64", "int32", "float"])
def test_pack_padded_sequence_as_torch(lengths, sort, batch_first, kind):
    shape = (3, 4, 2) if batch_first else (4, 3, 2)
    outs, grads = [], []
    for lib in LIBS:
        x = _padded(lib, shape)
        lens = {"list": lengths, "numpy": np.array(lengths), "int64": lib.tensor(lengths),
                "int32": lib.tensor(lengths, dtype=lib.int32), "float": [float(n) for n in lengths]}[kind]
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=sort)
        node = p.data.grad_fn  # (what it saved, read before backward frees it)
        outs.append((p, node._saved_batch_first, node._saved_input_sym_sizes, node._saved_result1))
        seed = lib.tensor(np.arange(p.data.numel(), dtype=np.float64).reshape(tuple(p.data.shape)))
        grads.append(lib.autograd.grad((p.data * seed).sum(), x)[0])
    (theirs, *saved_t), (ours, *saved_o) = outs
    assert type(ours).__name__ == "PackedSequence" and isinstance(ours, tuple) and len(ours) == 4
    for field in ("data", "batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(ours, field), getattr(theirs, field)
        assert (a is None) == (b is None), field
        if a is not None:
            _same(a, b, field)
    assert ours.data.grad_fn.name() == "PackPaddedSequenceBackward0"
    assert _names(ours.data.grad_fn, 2) == _names(theirs.data.grad_fn, 2)
    assert saved_o[:2] == saved_t[:2] and type(saved_o[1]) is tuple
    _same(saved_o[2], saved_t[2], "_saved_result1")
    _same(grads[1], grads[0], "gradient")


def test_packing_with_create_graph_as_torch():
    """the gradient's own graph is torch's (a copy per step into zeros), and its gradient too"""
    for batch_first, lengths in ((False, [4, 2, 1]), (True, [2, 2, 1, 1])):
        res = []
        for lib in LIBS:
            x = lib.tensor(np.arange(24.).reshape(4, 3, 2) / 10, requires_grad=True)
            p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first)
            (g,) = lib.autograd.grad((p.data ** 2).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad((g ** 3).sum(), x)
            res.append((g, gg, _names(g.grad_fn, 5)))
        _same(res[1][0], res[0][0], "gradient")
        _same(res[1][1], res[0][1], "second gradient")
        assert res[1][2] == res[0][2]


def test_packing_saves_its_batch_sizes_and_refuses_forward_mode():
    for lib in LIBS:
        x = _padded(lib)
        y = lib.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1]).data.sum()
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
        fw = lib.autograd.forward_ad
        with fw.dual_level(), pytest.raises(NotImplementedError, match="forward AD with _pack_padded_sequence"):
            lib.nn.utils.rnn.pack_padded_sequence(fw.make_dual(x.detach(), lib.ones_like(x)), [4, 2, 1])


@pytest.mark.parametrize("call, exc", [
    ("R.pack_padded_sequence(x, [2, 4, 1])", RuntimeError),
    ("R.pack_sequence([lib.ones(1), lib.ones(2)])", RuntimeError),
    ("R.pack_padded_sequence(x, [4, 2, 0])", RuntimeError),
    ("R.pack_padded_sequence(x, [4, 2, -1], enforce_sorted=False)", RuntimeError),
    ("R.pack_padded_sequence(x, [4, 2])", RuntimeError),
    ("R.pack_padded_sequence(x, lib.tensor([[4, 2, 1]]))", RuntimeError),
    ("R.pack_padded_sequence(x, lib.tensor(3))", RuntimeError),
    ("R.pack_padded_sequence(lib.ones(0, 3), [1, 1, 1])", RuntimeError),
    ("R.pack_padded_sequence(lib.ones(3), [3])", IndexError),
    ("R.pack_sequence([])", RuntimeError),
    ("R.pad_packed_sequence(R.pack_padded_sequence(x, [4, 2, 1]), total_length=3)", ValueError),
    ("R.PackedSequence(x)", AssertionError),
    ("R.PackedSequence(x, lib.tensor([2, 1], device='meta'))", ValueError),
])
def test_packing_errors_as_torch(call, exc):
    messages = []
    for lib in LIBS:
        with pytest.raises(exc) as info:
            eval(call, {"R": lib.nn.utils.rnn, "lib": lib, "x": _padded(lib)})
        messages.append(str(info.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("n", [7, 40, 300])
def test_equal_lengths_are_sorted_as_torch(n):
    """enforce_sorted=False sorts the lengths as torch.sort does: sequences of equal length keep torch's order"""
    lens = np.random.default_rng(n).integers(1, 6, n)
    res = [lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(np.arange(5. * n).reshape(5, n)), lens,
                                                 enforce_sorted=False) for lib in LIBS]
    for field in range(4):
        _same(res[1][field], res[0][field], f"field {field}")


def test_a_packed_batch_prints_as_torch():
    res = []
    for lib in LIBS:
        x = lib.tensor(np.arange(12.).reshape(4, 3) / 4, dtype=lib.float32, requires_grad=True)
        res.append(repr(lib.nn.utils.rnn.pack_padded_sequence(x, [1, 4, 2], enforce_sorted=False)))
    assert res[1] == res[0]
    assert "grad_fn=<PackPaddedSequenceBackward0>" in res[1]


def test_the_unsorted_message_names_the_way_out():
    with pytest.raises(RuntimeError, match=r"`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                           r"is True. You can pass `enforce_sorted=False`"):
        mt.nn.utils.rnn.pack_padded_sequence(mt.ones(3, 2), [1, 3])


# ---------------------------------------------------------------- back: pad_packed_sequence, unpad, unpack


@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length, value", [(None, 0.0), (6, -2.0)])
def test_pad_packed_sequence_as_torch(sort, batch_first, total_length, value):
    lengths = [4, 3, 1] if sort else [3, 4, 1]
    outs, grads = [], []
    for lib in LIBS:
        seqs = _seqs(lib, lengths)
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=sort)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first, value, total_length)
        seed = lib.tensor(np.arange(padded.numel(), dtype=np.float64).reshape(tuple(padded.shape)))
        grads.append(lib.autograd.grad((padded * seed).sum(), seqs))
        outs.append((padded, lens))
    _same(outs[1][0], outs[0][0], "padded")
    _same(outs[1][1], outs[0][1], "lengths")
    assert _names(outs[1][0].grad_fn, 4) == _names(outs[0][0].grad_fn, 4)
    for a, b in zip(grads[1], grads[0]):
        _same(a, b, "gradient")


def test_round_trips_as_torch():
    res = []
    for lib in LIBS:
        R = lib.nn.utils.rnn
        seqs = _seqs(lib, [2, 5, 3])
        back = R.unpack_sequence(R.pack_sequence(seqs, enforce_sorted=False))
        padded = R.pad_sequence(seqs) * 1.0  # (not a leaf: unpad_sequence transposes it in place, as torch's)
        lengths = lib.as_tensor([len(s) for s in seqs])
        unpadded = R.unpad_sequence(padded, lengths)
        grads = lib.autograd.grad(sum((s * s).sum() for s in back + unpadded), seqs)
        res.append((back, unpadded, tuple(padded.shape), grads, [_names(s.grad_fn, 3) for s in back]))
    for i, (a, b) in enumerate(zip(res[1][0] + res[1][1], res[0][0] + res[0][1])):
        _same(a, b, f"sequence {i}")
    assert res[1][2] == res[0][2] == (3, 5, 2)
    for a, b in zip(res[1][3], res[0][3]):
        _same(a, b, "gradient")
    assert res[1][4] == res[0][4]


def test_unpad_sequence_of_a_leaf_that_requires_grad_fails_as_torch():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.nn.utils.rnn.unpad_sequence(_padded(lib), lib.tensor([4, 2, 1]))


def test_invert_permutation_as_torch():
    for perm in ([2, 0, 1], [0], [3, 1, 0, 2]):
        _same(mt.nn.utils.rnn.invert_permutation(mt.tensor(perm)),
              torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)), str(perm))
    assert mt.nn.utils.rnn.invert_permutation(None) is None


# ---------------------------------------------------------------- PackedSequence


def test_packed_sequence_is_torch_named_tuple():
    res = [lib.nn.utils.rnn.pack_sequence([lib.tensor([1, 2, 3]), lib.tensor([4, 5]), lib.tensor([6])])
           for lib in LIBS]
    assert repr(res[1]) == repr(res[0])
    ours = res[1]
    assert ours._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    data, batch_sizes, sorted_indices, unsorted_indices = ours
    assert data is ours.data and batch_sizes is ours[1] and sorted_indices is None and unsorted_indices is None
    again = mt.nn.utils.rnn.PackedSequence((ours.data, ours.batch_sizes))
    assert again.data is ours.data and again.sorted_indices is None
    made = mt.nn.utils.rnn.PackedSequence(ours.data, ours.batch_sizes, mt.tensor([1, 0, 2]))
    _same(made.unsorted_indices, torch.tensor([1, 0, 2]), "unsorted_indices from sorted_indices")


def test_packed_sequence_conversions():
    for lib in LIBS:
        p = lib.nn.utils.rnn.pack_sequence(_seqs(lib, [3, 2], grad=False), enforce_sorted=True)
        assert p.to(lib.float64) is p and p.double() is p and p.is_cuda is False and p.is_pinned() is False
        q = lib.nn.utils.rnn.pack_sequence(_seqs(lib, [2, 3], grad=False), enforce_sorted=False)
        for method, dtype in (("float", "float32"), ("half", "float16"), ("long", "int64"), ("int", "int32"),
                              ("short", "int16"), ("char", "int8"), ("byte", "uint8")):
            r = getattr(q, method)()
            assert type(r).__name__ == "PackedSequence" and r.data.dtype == getattr(lib, dtype), method
            assert r.batch_sizes is q.batch_sizes and r.sorted_indices.tolist() == [1, 0]
        assert q.to("cpu") is q and q.cpu() is q
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            q.cuda()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            q.pin_memory()


# ---------------------------------------------------------------- the recurrent layers on packed batches


LAYERS = ["RNN(3, 4)", "RNN(3, 4, num_layers=2, nonlinearity='relu', bidirectional=True)",
          "RNN(3, 4, bias=False, batch_first=True)", "LSTM(3, 4)", "LSTM(3, 4, num_layers=2, bidirectional=True)",
          "LSTM(3, 5, batch_first=True)", "GRU(3, 4)", "GRU(3, 4, num_layers=2, batch_first=True, bidirectional=True)"]


def _twins(expr, dtype):
    t = getattr(eval("nn." + expr, {"nn": torch.nn}), dtype)()
    m = getattr(eval("nn." + expr, {"nn": mt.nn}), dtype)()
    m.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    return t, m


def _flat_states(h):
    return list(h) if isinstance(h, tuple) else [h]


def _run_packed(lib, mod, x, lengths, sort, state):
    """pack x, run the layer (with initial states if given), unpack; everything a loss could read, and its
    gradients with respect to the input, the initial states and the parameters"""
    R = lib.nn.utils.rnn
    bf = mod.batch_first
    xin = lib.tensor(x, requires_grad=True)
    hx = None if state is None else tuple(lib.tensor(s, requires_grad=True) for s in state)
    packed = R.pack_padded_sequence(xin, lengths, batch_first=bf, enforce_sorted=sort)
    out, h = mod(packed, None if hx is None else (hx if len(hx) == 2 else hx[0]))
    assert type(out).__name__ == "PackedSequence" and out.batch_sizes is packed.batch_sizes
    padded, lens = R.pad_packed_sequence(out, batch_first=bf)
    values = [padded, out.data] + _flat_states(h)
    loss = sum((v * v).sum() for v in values) + padded.sum()
    inputs = [xin] + list(hx or ()) + list(mod.parameters())
    return values + list(lib.autograd.grad(loss, inputs)), [_names(out.data.grad_fn, 1)] + \
        [_names(s.grad_fn, 2) for s in _flat_states(h)]


@pytest.mark.parametrize("expr", LAYERS)
@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_layers_on_packed_batches_as_torch(expr, sort, with_state):
    t, m = _twins(expr, "double")
    rng = np.random.default_rng(3)
    lengths = [5, 4, 2, 2, 1] if sort else [2, 5, 1, 4, 2]
    x = rng.standard_normal((5, 5, 3))  # (T, B, H_in), or (B, T, H_in) with batch_first: both 5
    dirs = 2 if "bidirectional=True" in expr else 1
    layers = 2 if "num_layers=2" in expr else 1
    hidden = 5 if "LSTM(3, 5" in expr else 4
    state = None
    if with_state:
        state = [rng.standard_normal((layers * dirs, 5, hidden)) for _ in range(2 if "LSTM" in expr else 1)]
    theirs, their_names = _run_packed(torch, t, x, lengths, sort, state)
    ours, our_names = _run_packed(mt, m, x, lengths, sort, state)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        close(a, b, f"{expr}: value {i}", tol=1e-12)
    assert our_names == their_names


@pytest.mark.parametrize("expr", ["LSTM(3, 4, num_layers=2, bidirectional=True)", "GRU(3, 4)", "RNN(3, 4)"])
def test_float32_packed_layers_close_to_torch(expr):
    t, m = _twins(expr, "float")
    x = np.random.default_rng(4).standard_normal((6, 4, 3)).astype(np.float32)
    theirs, _ = _run_packed(torch, t, x, [3, 6, 1, 4], False, None)
    ours, _ = _run_packed(mt, m, x, [3, 6, 1, 4], False, None)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.dtype == mt.float32
        close(a, b, f"{expr}: value {i}", tol=2e-5)


def test_final_state_is_taken_at_each_length():
    """the packed layer's h_n for a sequence is the unpacked layer's output at that sequence's last step"""
    torch.manual_seed(0)
    mt.manual_seed(0)
    m = mt.nn.GRU(3, 4)
    x = mt.randn(5, 3, 3)
    lengths = [2, 5, 3]
    _, h = m(mt.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False))
    for b, n in enumerate(lengths):
        full, _ = m(x[:n, b:b + 1])
        close(h[0, b], full[n - 1, 0], f"sequence {b}", tol=1e-6)


@pytest.mark.parametrize("call", ["nn.GRU(3, 4)(R.PackedSequence(lib.ones(4, 2, 3), lib.tensor([4, 4])))",
                                  "nn.GRU(3, 4)(R.pack_sequence([lib.ones(2, 5)]))",
                                  "nn.RNN(3, 4)(R.pack_sequence([lib.ones(2, 3), lib.ones(1, 3)]), lib.zeros(1, 3, 4))",
                                  "nn.LSTM(3, 4)(lib.ones(2, 3, 3), (lib.zeros(1, 3, 4), lib.zeros(1, 2, 4)))",
                                  "nn.LSTM(3, 4)(lib.ones(2, 3, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 3, 4)))",
                                  "nn.LSTM(3, 4)(lib.ones(2, 3, 5))"])
def test_layer_errors_as_torch(call):
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            eval(call, {"nn": lib.nn, "R": lib.nn.utils.rnn, "lib": lib})
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_lstm_refuses_a_wrong_state_for_a_packed_batch():
    """torch's LSTM skips its checks for a packed batch, and its kernel fails on a wrong state; microtorch checks"""
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.nn.LSTM(3, 4)(lib.nn.utils.rnn.pack_sequence([lib.ones(2, 3), lib.ones(1, 3)]),
                              (lib.zeros(1, 3, 4), lib.zeros(1, 2, 4)))


# ---------------------------------------------------------------- the textbook: Raschka, ch. 15 (sentiment RNN)


REVIEWS = [(1, [5, 3, 8, 2, 9, 4]), (0, [7, 1]), (1, [2, 2, 6, 3]), (0, [9, 8, 7, 6, 5, 4, 3]),
           (1, [1, 4, 4]), (0, [3, 6, 9, 2, 5]), (1, [8]), (0, [4, 7, 1, 1, 2, 6])]


def _book(lib):
    nn = lib.nn

    class RNN(nn.Module):
        def __init__(self, vocab_size, embed_dim, rnn_hidden_size, fc_hidden_size):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
            self.rnn = nn.LSTM(embed_dim, rnn_hidden_size, batch_first=True)
            self.fc1 = nn.Linear(rnn_hidden_size, fc_hidden_size)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(fc_hidden_size, 1)
            self.sigmoid = nn.Sigmoid()

        def forward(self, text, lengths):
            out = self.embedding(text)
            out = nn.utils.rnn.pack_padded_sequence(out, lengths.cpu().numpy(), enforce_sorted=False,
                                                    batch_first=True)
            out, (hidden, cell) = self.rnn(out)
            out = hidden[-1, :, :]
            out = self.fc1(out)
            out = self.relu(out)
            out = self.fc2(out)
            out = self.sigmoid(out)
            return out

    def collate_batch(batch):
        label_list, text_list, lengths = [], [], []
        for _label, _text in batch:
            label_list.append(_label)
            processed_text = lib.tensor(_text, dtype=lib.int64)
            text_list.append(processed_text)
            lengths.append(processed_text.size(0))
        label_list = lib.tensor(label_list)
        lengths = lib.tensor(lengths)
        padded_text_list = nn.utils.rnn.pad_sequence(text_list, batch_first=True)
        return padded_text_list, label_list, lengths

    return RNN, collate_batch


def _train_book(lib, epochs=2):
    lib.manual_seed(1)
    RNN, collate_batch = _book(lib)
    loader = lib.utils.data.DataLoader(REVIEWS, batch_size=4, shuffle=True, collate_fn=collate_batch)
    model = RNN(10, 6, 8, 5)
    loss_fn = lib.nn.BCELoss()
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    seen = []
    for _ in range(epochs):
        for text_batch, label_batch, lengths in loader:
            optimizer.zero_grad()
            pred = model(text_batch, lengths)[:, 0]
            loss = loss_fn(pred, label_batch.float())
            loss.backward()
            seen.append((text_batch, lengths, loss.detach(), [p.grad.clone() for p in model.parameters()]))
            optimizer.step()
    return seen, model


def test_collate_fn_pads_batches_as_torch():
    _, collate_t = _book(torch)
    _, collate_m = _book(mt)
    batches = [torch.utils.data.DataLoader(REVIEWS, batch_size=3, collate_fn=collate_t),
               mt.utils.data.DataLoader(REVIEWS, batch_size=3, collate_fn=collate_m)]
    for theirs, ours in zip(*batches):
        for a, b in zip(ours, theirs):
            _same(a, b, "batch")


def test_sentiment_rnn_trains_as_torch():
    theirs, model_t = _train_book(torch)
    ours, model_m = _train_book(mt)
    assert len(ours) == len(theirs) == 4
    for step, ((xt, lt, loss_t, grads_t), (xm, lm, loss_m, grads_m)) in enumerate(zip(theirs, ours)):
        _same(xm, xt, f"step {step}: padded batch")
        _same(lm, lt, f"step {step}: lengths")
        close(loss_m, loss_t, f"step {step}: loss", tol=1e-6)
        for i, (a, b) in enumerate(zip(grads_m, grads_t)):
            close(a, b, f"step {step}: gradient {i}", tol=1e-6)
    for (name, a), (_, b) in zip(model_m.named_parameters(), model_t.named_parameters()):
        close(a, b, f"trained {name}", tol=1e-5)
