"""Recurrent layers (RNN, LSTM, GRU) and their cells, built from linear maps and activations, so that
backward runs through time on the ordinary ops. Parameter names, shapes, initialisation, input and
output layouts follow torch (gates in torch's order: LSTM i, f, g, o; GRU r, z, n)."""
import math

from ... import _creation
from ...ops import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    xr, xz, xn = F.linear(x, w_ih, b_ih).chunk(3, -1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (1 - z) * n + z * h


def _rnn_cell(x, h, w_ih, w_hh, b_ih, b_hh, relu):
    pre = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


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
        if proj_size != 0:
            raise NotImplementedError("LSTM(proj_size=...) is not implemented in microtorch; use proj_size=0 and "
                                      "a Linear layer on the output")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else hidden_size * dirs
                self.register_parameter("weight_ih" + suffix, Parameter(_creation.empty(gate, in_size, dtype=dtype)))
                self.register_parameter("weight_hh" + suffix, Parameter(_creation.empty(gate, hidden_size,
                                                                                        dtype=dtype)))
                if bias:
                    self.register_parameter("bias_ih" + suffix, Parameter(_creation.empty(gate, dtype=dtype)))
                    self.register_parameter("bias_hh" + suffix, Parameter(_creation.empty(gate, dtype=dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + suffix) if self.bias or n.startswith("weight") else None  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _run(self, input, hx):
        """(output, h_n[, c_n]) for input (L, N, H_in) and states (layers * dirs, N, H)."""
        dirs = 2 if self.bidirectional else 1
        x, h_out, c_out = input, [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                state = (hx[0][k], hx[1][k]) if self.mode == "LSTM" else hx[k]
                seq, state = self._direction(x, state, self._weights(layer, d), reverse=bool(d))
                outs.append(seq)
                h_out.append(state[0] if self.mode == "LSTM" else state)
                if self.mode == "LSTM":
                    c_out.append(state[1])
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, stack(h_out), (stack(c_out) if c_out else None)

    def _direction(self, x, state, weights, reverse):
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            if self.mode == "LSTM":
                state = _lstm_cell(x[t], state[0], state[1], *weights)
                outs[t] = state[0]
            elif self.mode == "GRU":
                state = _gru_cell(x[t], state, *weights)
                outs[t] = state
            else:
                state = _rnn_cell(x[t], state, *weights, relu=self.mode == "RNN_RELU")
                outs[t] = state
        return stack(outs), state

    def forward(self, input, hx=None):
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        x = input if batched else input.unsqueeze(1)
        if self.batch_first and batched:
            x = x.transpose(0, 1)
        dirs = 2 if self.bidirectional else 1
        shape = (self.num_layers * dirs, x.shape[1], self.hidden_size)
        if hx is None:
            zeros = _creation.zeros(*shape, dtype=x.dtype)
            hx = (zeros, zeros) if self.mode == "LSTM" else zeros
        elif not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if self.mode == "LSTM" else hx.unsqueeze(1)
        self._check_state(hx, shape)
        out, h_n, c_n = self._run(x, hx)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return (out, (h_n, c_n)) if self.mode == "LSTM" else (out, h_n)

    def _check_state(self, hx, shape):
        for h in (hx if self.mode == "LSTM" else (hx,)):
            if tuple(h.shape) != shape:
                raise RuntimeError(f"Expected hidden size {shape}, got {list(h.shape)}")


class RNN(RNNBase):
    """h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu), layer after layer"""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
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
                 bidirectional=False, device=None, dtype=None):
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
        out = _rnn_cell(x, h, *self._weights(), relu=self.nonlinearity == "relu")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """(h', c') from gates i, f, g, o: c' = f c + i g, h' = o tanh(c')"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, batched, zeros = self._prepare(input, hx)
        h, c = (zeros, zeros) if hx is None else (hx if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0)))
        h, c = _lstm_cell(x, h, c, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """h' = (1 - z) n + z h, with reset r, update z and candidate n"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, batched, zeros = self._prepare(input, hx)
        h = zeros if hx is None else (hx if batched else hx.unsqueeze(0))
        out = _gru_cell(x, h, *self._weights())
        return out if batched else out.squeeze(0)
