"""microtorch.nn.utils.rnn: batches of sequences of different lengths, padded or packed, as torch's.

A padded batch is one tensor (T, B, *) (or (B, T, *) with batch_first) whose short sequences are filled up with a
padding value. A packed batch (`PackedSequence`) keeps only the real steps, time step after time step: `data` holds
the B_0 first elements of every sequence, then the B_1 second ones, ..., and `batch_sizes` says how many each step
has (B_0 >= B_1 >= ...). The sequences are ordered longest first; `sorted_indices` says which sequence of the
caller's batch each one is, `unsorted_indices` the way back. The recurrent layers run a packed batch one step at a
time on the sequences still going, so that each final state is taken at its sequence's own length.

Everything is composed of Tensor ops, as torch composes it (so the graphs are torch's: pad_sequence's and
pad_packed_sequence's copies into a filled tensor are CopySlices nodes), except packing itself, one op with torch's
node PackPaddedSequenceBackward0.
"""
from collections.abc import Iterable
from typing import NamedTuple, Optional

import numpy as np

from ..._creation import arange, empty_like, full
from ..._dtype import float16, float32, float64, int8, int16, int32, int64, uint8
from ..._tensor import Tensor, as_tensor
from ...ops._op import Op, plain, unrecorded, zeros_for

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_NOT_SORTED = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
               "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
               "you do not need ONNX exportability.")


class PackedSequence_(NamedTuple):
    """The four fields of a PackedSequence (a named tuple, so that it unpacks as torch's does)."""
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


class PackedSequence(PackedSequence_):
    """A batch of sequences packed step by step: `data` (sum of batch_sizes, *), `batch_sizes` (an int64 CPU
    tensor, one count per time step), and the permutation from the caller's order (`sorted_indices`, None when the
    batch came sorted) and back (`unsorted_indices`). Made by pack_padded_sequence and pack_sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def to(self, *args, **kwargs):
        """self.data converted as Tensor.to converts it (the indices follow it to its device); self when nothing
        changes. batch_sizes stays as it is, on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: None if t is None else t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, device=None, non_blocking=False):
        return self.to(device="cuda" if device is None else device, non_blocking=non_blocking)

    def cpu(self):
        return self.to(device="cpu")

    def pin_memory(self):
        # (torch raises this on a machine without an accelerator; microtorch never has one)
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self):
        return False  # (microtorch's memory is numpy's, never pinned)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    def int(self):
        return self.to(dtype=int32)

    def short(self):
        return self.to(dtype=int16)

    def char(self):
        return self.to(dtype=int8)

    def byte(self):
        return self.to(dtype=uint8)


def _init_args(data, batch_sizes, sorted_indices, unsorted_indices):
    """The four fields, from PackedSequence(data, batch_sizes, sorted_indices[, unsorted_indices]) or
    PackedSequence((data, batch_sizes), sorted_indices=...); unsorted_indices defaults to the inverse permutation."""
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is None:
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return data[0], data[1], sorted_indices, unsorted_indices
    if batch_sizes.device.type != "cpu":
        raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                         "manually. They should be instantiated by functions like pack_sequence and "
                         "pack_padded_sequences in nn.utils.rnn. "
                         "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
    return data, batch_sizes, sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (a 1-d index tensor); None for None."""
    if permutation is None:
        return None
    out = empty_like(permutation)
    out.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return out


class PackPaddedSequence(Op):
    """(T, B, *) padded steps (or (B, T, *) with batch_first), their B lengths sorted longest first -> the packed
    data (each step's first batch_sizes[t] rows, step after step) and batch_sizes. The gradient puts each step's
    rows back in place, zeros on the padding. `lengths` is a numpy int64 array (no edge, as torch's node)."""
    _grad_fn_name = "PackPaddedSequenceBackward0"
    _saved_names = ("result1",)
    _saved_values = {"batch_first": "batch_first", "input_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, lengths, batch_first):
        ctx.in_shape, ctx.batch_first = tuple(x.shape), batch_first
        steps = x.swapaxes(0, 1) if batch_first else x
        sizes = (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(1).astype(np.int64)
        # (a length past the input's end counts in batch_sizes but finds no rows, as in torch)
        data = np.concatenate([steps[t, :n] for t, n in enumerate(sizes[:steps.shape[0]])])
        ctx.mark_non_differentiable(sizes)
        ctx.save_for_backward(sizes)
        return data, sizes

    @staticmethod
    def backward(ctx, grad, _):
        (sizes,) = ctx.saved_tensors
        return _unpack_grad(grad, sizes.tolist(), ctx.in_shape, ctx.batch_first), None, None

    @staticmethod
    def jvp(ctx, t, *_):  # (torch has no forward-mode formula for packing: refused as there)
        raise NotImplementedError("Trying to use forward AD with _pack_padded_sequence that does not support it "
                                  "because it has not been implemented yet.")


def _unpack_grad(grad, sizes, in_shape, batch_first):
    """Each step's rows of the packed gradient written back into zeros of the padded input's shape (torch's
    _pack_padded_sequence_backward: a copy per step, in Tensor ops when the gradient's graph is recorded)."""
    shape = (in_shape[1], in_shape[0]) + in_shape[2:] if batch_first else in_shape
    out = zeros_for(shape, grad)
    fast = unrecorded(grad)
    offset = 0
    for t, n in enumerate(sizes[:shape[0]]):
        if fast:
            out._data[t, :n] = grad._data[offset:offset + n]
        else:
            out[t].narrow(0, 0, n).copy_(grad.narrow(0, offset, n))
        offset += n
    if not batch_first:
        return out
    return plain(out._data.swapaxes(0, 1)) if fast else out.transpose(0, 1)


def _lengths_tensor(lengths):
    """lengths (a list, a numpy array or a tensor) as the int64 CPU tensor torch's packing takes."""
    if not isinstance(lengths, Tensor):
        return as_tensor(lengths, dtype=int64, device="cpu")
    return lengths.to(dtype=int64)


def _check_packable(input, lengths, batch_first):
    """torch's checks of _pack_padded_sequence, in its order, with its messages."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if input.ndim < 2:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions" if input.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D "
                           f"{lengths.device.type} Long tensor")
    batch = input.shape[0 if batch_first else 1]
    lens = lengths.numpy().copy()
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if (lens[1:] > lens[:-1]).any():
        raise RuntimeError(_NOT_SORTED)
    return lens


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) whose sequence b has lengths[b] steps.
    enforce_sorted: the lengths must already be in decreasing order; else the batch is sorted first (and
    the PackedSequence remembers the permutation)."""
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    lens = _check_packable(input, lengths, batch_first)
    data, batch_sizes = PackPaddedSequence.apply(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _padded_from_packed(data, batch_sizes, batch_first, padding_value, total):
    """torch's _pad_packed_sequence: a (total, B, *) tensor full of padding_value, each run of steps with the same
    batch size copied in from the packed data in one piece; and each sequence's length."""
    sizes = batch_sizes.tolist()
    out = full((total, sizes[0]) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    start, offset = 0, 0
    for t in range(1, len(sizes) + 1):
        if t < len(sizes) and sizes[t] == sizes[start]:
            continue
        steps, n = t - start, sizes[start]
        block = data.narrow(0, offset, steps * n).view((steps, n) + tuple(data.shape[1:]))
        out.narrow(0, start, steps).narrow(1, 0, n).copy_(block)
        start, offset = t, offset + steps * n
    lengths = (np.asarray(sizes)[None, :] > np.arange(sizes[0])[:, None]).sum(1)
    return (out.transpose(0, 1) if batch_first else out), as_tensor(lengths, dtype=int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded batch, lengths), in the caller's original order. total_length
    pads to that many steps (at least the longest sequence's)."""
    max_len = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    padded, lengths = _padded_from_packed(sequence.data, sequence.batch_sizes, batch_first, padding_value, max_len)
    unsorted = sequence.unsorted_indices
    if unsorted is None:
        return padded, lengths
    return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]


def _check_sequences(sequences):
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(s).__name__}")
    if sequences[0].ndim == 0:  # (torch's message: it slices the first sequence's shape after dim 0)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    for s in sequences:
        if s.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return sequences


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes (L_i, *) into one (T, B, *) tensor (B, T, * with batch_first), T the longest L_i,
    filling the rest with padding_value on the right (or on the left, padding_side='left'). The result has the first
    sequence's dtype."""
    sequences = _check_sequences(sequences)
    max_len = max(s.shape[0] for s in sequences)
    dims = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    first = sequences[0]
    out = full(dims + tuple(first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for i, seq in enumerate(sequences):
        n = seq.shape[0]
        start = max_len - n if padding_side == "left" else 0
        slot = out.select(0, i).narrow(0, start, n) if batch_first else out.narrow(0, start, n).select(1, i)
        slot.copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length. As torch's, without batch_first this
    transposes padded_sequences itself, in place (transpose_), to read it batch first."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    steps = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[steps < n] for seq, n in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i, *): pad_sequence, then pack_padded_sequence with their lengths."""
    lengths = as_tensor([s.size(0) for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences packed in a PackedSequence, in the caller's original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
