"""Recurrent layers (RNN, LSTM, GRU) and their cells, built from linear maps and activations, so that
backward runs through time on the ordinary ops. Parameter names, shapes, initialisation, input and
output layouts follow torch (gates in torch's order: LSTM i, f, g, o; GRU r, z, n). The layers also take a
PackedSequence (nn.utils.rnn), as torch's: each step runs on the sequences still going, so that each final state
is the one at its sequence's own length."""
import math
import warnings

from ... import _creation
from ...ops import cat, matmul, stack, unsafe_chunk
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr=None):
    """one LSTM step from the input's part of the gates, gi (torch computes it for all steps at once); with a
    projection w_hr (proj_size), h is projected down"""
    gates = F.linear(h, w_hh, b_hh) + gi
    i, f, g, o = unsafe_chunk(gates, 4, -1)  # (torch's cells split the gates so: UnsafeSplitBackward0)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else matmul(h, w_hr.t())), c


def _gru_step(gi, h, w_hh, b_hh):
    """one GRU step from the input's part gi, in torch's order of operations: (h - n) z + n"""
    xr, xz, xn = unsafe_chunk(gi, 3, -1)
    hr, hz, hn = unsafe_chunk(F.linear(h, w_hh, b_hh), 3, -1)
    r, z = (hr + xr).sigmoid(), (hz + xz).sigmoid()
    n = (xn + hn * r).tanh()
    return (h - n) * z + n


def _rnn_step(gi, h, w_hh, b_hh, relu):
    pre = F.linear(h, w_hh, b_hh) + gi
    return pre.relu() if relu else pre.tanh()


def _lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    return _lstm_step(F.linear(x, w_ih, b_ih), h, c, w_hh, b_hh)


def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    return _gru_step(F.linear(x, w_ih, b_ih), h, w_hh, b_hh)


def _rnn_cell(x, h, w_ih, w_hh, b_ih, b_hh, relu):
    return _rnn_step(F.linear(x, w_ih, b_ih), h, w_hh, b_hh, relu)


def _full_layer(step, gi, state, reverse):
    """Run step over every time step of gi (L, N, G), backwards in time when reverse; (outputs (L, N, H), state).
    A state is a tuple: (h,) or, for an LSTM, (h, c)."""
    gis = gi.unbind(0)
    outs = [None] * len(gis)
    for t in (range(len(gis) - 1, -1, -1) if reverse else range(len(gis))):
        state = step(gis[t], state)
        outs[t] = state[0]
    return stack(outs), state


def _packed_layer(step, gi, state, sizes):
    """Run step over a packed batch (gi: the steps' rows, sizes[t] at step t, longest sequences first). When
    sequences end, their rows of the state are set aside: each final state is taken at its sequence's length."""
    outs, ended, offset = [], [], 0
    for n in sizes:
        have = state[0].shape[0]
        if n < have:
            ended.append(tuple(s.narrow(0, n, have - n) for s in state))
            state = tuple(s.narrow(0, 0, n) for s in state)
        state = step(gi.narrow(0, offset, n), state)
        offset += n
        outs.append(state[0])
    ended.append(state)
    ended.reverse()  # (the longest sequences' rows first, as the batch is ordered)
    return cat(outs, 0), tuple(cat([e[k] for e in ended], 0) for k in range(len(state)))


def _packed_layer_reversed(step, gi, state, sizes):
    """The same from the last step back: only the longest sequences run at first, and each sequence joins, with
    its row of the initial state, at its own last step."""
    first, state = state, tuple(s.narrow(0, 0, sizes[-1]) for s in state)
    outs, end = [], gi.shape[0]
    for n in reversed(sizes):
        have = state[0].shape[0]
        if n > have:
            state = tuple(cat([s, s0.narrow(0, have, n - have)], 0) for s, s0 in zip(state, first))
        state = step(gi.narrow(0, end - n, n), state)
        end -= n
        outs.append(state[0])
    outs.reverse()
    return cat(outs, 0), state


class RNNBase(Module):
    """The layers' common part: parameters per layer and direction, the loop over time and layers."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not (isinstance(dropout, (int, float)) and 0 <= dropout <= 1) or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        _check_proj_size(mode, proj_size, hidden_size)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                          f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate, real = _GATES[mode] * hidden_size, proj_size or hidden_size  # (real: h's size, projected or not)
        dirs = 2 if bidirectional else 1
        self._all_weights = []  # (torch's names per layer and direction, which course code walks to initialize)
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else real * dirs
                shapes = {"weight_ih": (gate, in_size), "weight_hh": (gate, real)}
                if bias:
                    shapes.update(bias_ih=(gate,), bias_hh=(gate,))
                if proj_size:
                    shapes.update(weight_hr=(proj_size, hidden_size))
                for name, shape in shapes.items():
                    self.register_parameter(name + suffix, Parameter(_creation.empty(*shape, dtype=dtype)))
                self._all_weights.append([name + suffix for name in shapes])
        self._flat_weights_names = [name for names in self._all_weights for name in names]
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each layer and direction, in torch's order"""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + suffix) if self.bias or n.startswith("weight") else None  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _projection(self, layer, d):
        """an LSTM's weight_hr of this layer and direction (None without proj_size)"""
        return getattr(self, f"weight_hr_l{layer}" + ("_reverse" if d else "")) if self.proj_size else None

    def _run(self, input, hx, sizes=None):
        """(output, h_n, c_n or None) for input (L, N, H_in), or a packed batch's data with its batch sizes `sizes`,
        and initial states (layers * dirs, N, H): h_0, or (h_0, c_0) for an LSTM. (torch.lstm, torch.gru, ... call
        this too, on their flat parameter lists.)"""
        dirs = 2 if self.bidirectional else 1
        hx = tuple(hx) if self.mode == "LSTM" else (hx,)
        x, finals = input, []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                seq, state = self._direction(x, tuple(h[k] for h in hx), self._weights(layer, d), bool(d), sizes,
                                             self._projection(layer, d))
                outs.append(seq)
                finals.append(state)
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        h_n = stack([f[0] for f in finals])
        return x, h_n, (stack([f[1] for f in finals]) if self.mode == "LSTM" else None)

    def _direction(self, x, state, weights, reverse, sizes, w_hr=None):
        w_ih, w_hh, b_ih, b_hh = weights
        gi = F.linear(x, w_ih, b_ih)  # (the input's part of every step in one product, as torch does on the CPU)
        if self.mode == "LSTM":
            step = lambda g, s: _lstm_step(g, s[0], s[1], w_hh, b_hh, w_hr)  # noqa: E731
        elif self.mode == "GRU":
            step = lambda g, s: (_gru_step(g, s[0], w_hh, b_hh),)  # noqa: E731
        else:
            step = lambda g, s: (_rnn_step(g, s[0], w_hh, b_hh, self.mode == "RNN_RELU"),)  # noqa: E731
        if sizes is None:
            return _full_layer(step, gi, state, reverse)
        return (_packed_layer_reversed if reverse else _packed_layer)(step, gi, state, sizes)

    def flatten_parameters(self):
        """Nothing to do on the CPU (torch's packs the weights into one buffer for cuDNN)."""

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead")
        weight = self._flat_weights[0] if self._flat_weights else None
        if weight is not None and input.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        self._check_input_size(input)
        x = input if batched else input.unsqueeze(1)
        if self.batch_first and batched:
            x = x.transpose(0, 1)
        shape = self._state_shape(x.shape[1])
        if hx is None:
            hx = self._zero_state(shape, x.dtype)
        else:
            self._check_state_dims(hx, 3 if batched else 2)
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx) if self.mode == "LSTM" else hx.unsqueeze(1)
        self._check_state(hx, shape)
        out, h_n, c_n = self._run(x, hx)
        if self.batch_first and batched:  # (torch's RNN and GRU turn their output in place: TransposeBackward1)
            out = out.transpose(0, 1) if self.mode == "LSTM" else out.transpose_(0, 1)
        if not batched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return (out, (h_n, c_n)) if self.mode == "LSTM" else (out, h_n)

    def _forward_packed(self, packed, hx):
        """A PackedSequence in, a PackedSequence out (same batch sizes and order); the final states at each
        sequence's own length, in the caller's order of the batch (as the initial states hx are given)."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if data.ndim != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.ndim}")
        self._check_input_size(data)
        sizes = [int(n) for n in batch_sizes.tolist()]
        shape = self._state_shape(sizes[0])
        hx = self._zero_state(shape, data.dtype) if hx is None else self._permuted(hx, sorted_indices)
        self._check_state(hx, shape)
        out, h_n, c_n = self._run(data, hx, sizes)
        state = self._permuted((h_n, c_n) if self.mode == "LSTM" else h_n, unsorted_indices)
        return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), state

    def _permuted(self, hx, order):
        """the states' batch dim (dim 1) put in `order` (unchanged for None)"""
        if order is None:
            return hx
        if self.mode == "LSTM":
            return hx[0].index_select(1, order), hx[1].index_select(1, order)
        return hx.index_select(1, order)

    def _state_shape(self, batch):
        """h's shape, and for an LSTM c's too (they differ with proj_size)"""
        h = (self.num_layers * (2 if self.bidirectional else 1), batch, self.proj_size or self.hidden_size)
        return (h, h[:2] + (self.hidden_size,)) if self.mode == "LSTM" else h

    def _zero_state(self, shape, dtype):
        if self.mode == "LSTM":
            return tuple(_creation.zeros(*s, dtype=dtype) for s in shape)
        return _creation.zeros(*shape, dtype=dtype)

    def _check_input_size(self, input):
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _check_state_dims(self, hx, ndim):
        """hx (h and c for an LSTM, read as hx[0] and hx[1] as torch reads them) with as many dims as the input"""
        kind = "batched 3-D" if ndim == 3 else "unbatched 2-D"
        if self.mode != "LSTM":
            if hx.dim() != ndim:
                raise RuntimeError(f"For {kind} input, hx should also be {ndim}-D but got {hx.dim()}-D tensor")
        elif hx[0].dim() != ndim or hx[1].dim() != ndim:
            raise RuntimeError(f"For {kind} input, hx and cx should also be {ndim}-D but got ({hx[0].dim()}-D, "
                               f"{hx[1].dim()}-D) tensors")

    def _check_state(self, hx, shape):
        names = ("hidden[0]", "hidden[1]") if self.mode == "LSTM" else ("hidden",)
        shapes = shape if self.mode == "LSTM" else (shape,)
        for name, h, shape in zip(names, hx if self.mode == "LSTM" else (hx,), shapes):
            if tuple(h.shape) != shape:
                raise RuntimeError(f"Expected {name} size {shape}, got {list(h.shape)}")


def _check_proj_size(mode, proj_size, hidden_size):
    if not isinstance(proj_size, int) or proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size and proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if proj_size and mode != "LSTM":
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


def _no_projection(kwargs):
    """torch's RNN and GRU refuse proj_size, even 0; any other unknown keyword is Python's TypeError"""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu), layer after layer"""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_projection(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """gates i, f, g, o from x_t and h_(t-1); c_t = f c_(t-1) + i g; h_t = o tanh(c_t)"""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """r, z gates and candidate n = tanh(W_in x + r (W_hn h)); h_t = (1 - z) n + z h_(t-1)"""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_projection(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh (and biases) as in torch."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        zeros = _creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        return x, batched, zeros

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def _check_sizes(self, x, *states):
        """torch's checks of a cell's batched input and states (h, or h and c: hidden0, hidden1)"""
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected {self.input_size}")
        for label, h in enumerate(states):
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{label} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)"""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, batched, zeros = self._prepare(input, hx)
        h = zeros if hx is None else (hx if batched else hx.unsqueeze(0))
        self._check_sizes(x, h)
        out = _rnn_cell(x, h, *self._weights(), relu=self.nonlinearity == "relu")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """(h', c') from gates i, f, g, o: c' = f c + i g, h' = o tanh(c')"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, batched, zeros = self._prepare(input, hx)
        h, c = (zeros, zeros) if hx is None else (hx if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0)))
        self._check_sizes(x, h, c)
        h, c = _lstm_cell(x, h, c, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """h' = (1 - z) n + z h, with reset r, update z and candidate n"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, batched, zeros = self._prepare(input, hx)
        h = zeros if hx is None else (hx if batched else hx.unsqueeze(0))
        self._check_sizes(x, h)
        out = _gru_cell(x, h, *self._weights())
        return out if batched else out.squeeze(0)
