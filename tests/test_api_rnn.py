"""RNN, LSTM, GRU and their cells against torch: with torch's weights loaded (same parameter names and
shapes), outputs, final states and gradients of every parameter agree to 1e-10 in float64."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

LAYERS = ["RNN(3, 4)", "RNN(3, 4, num_layers=2, nonlinearity='relu')", "RNN(3, 4, bias=False, batch_first=True)",
          "LSTM(3, 4)", "LSTM(3, 4, num_layers=2, bidirectional=True)", "LSTM(3, 5, batch_first=True)",
          "GRU(3, 4)", "GRU(3, 4, num_layers=2, batch_first=True, bidirectional=True)"]


def _twins(expr):
    t = eval("nn." + expr, {"nn": torch.nn}).double()
    m = eval("nn." + expr, {"nn": mt.nn}).double()
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    m.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    assert repr(m) == repr(t)
    return t, m


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


@pytest.mark.parametrize("expr", LAYERS)
@pytest.mark.parametrize("batched", [True, False])
def test_layers_as_torch(expr, batched):
    t, m = _twins(expr)
    x = np.random.default_rng(0).standard_normal((5, 2, 3) if batched else (5, 3))
    outs = []
    for lib, mod in ((torch, t), (mt, m)):
        xin = lib.tensor(x.copy(), requires_grad=True)
        out = _flat(mod(xin))
        loss = sum((o * o).sum() for o in out)
        grads = lib.autograd.grad(loss, [xin] + list(mod.parameters()))
        outs.append(out + list(grads))
    for a, b in zip(outs[1], outs[0]):
        close(a, b, expr)


def test_initial_state_as_torch():
    t, m = _twins("LSTM(3, 4, num_layers=2)")
    rng = np.random.default_rng(1)
    x, h0, c0 = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 2, 4))
    yt, (ht, ct) = t(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    ym, (hm, cm) = m(mt.tensor(x), (mt.tensor(h0), mt.tensor(c0)))
    for a, b in ((ym, yt), (hm, ht), (cm, ct)):
        close(a, b, "LSTM with (h0, c0)")


CELLS = ["RNNCell(3, 4)", "RNNCell(3, 4, nonlinearity='relu', bias=False)", "LSTMCell(3, 4)", "GRUCell(3, 4)"]


@pytest.mark.parametrize("expr", CELLS)
def test_cells_as_torch(expr):
    t, m = _twins(expr)
    rng = np.random.default_rng(2)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    state = (h, h * 0.5) if "LSTM" in expr else h
    conv = (lambda lib, s: tuple(lib.tensor(v) for v in s)) if "LSTM" in expr else (lambda lib, s: lib.tensor(s))
    outs = []
    for lib, mod in ((torch, t), (mt, m)):
        out = _flat(mod(lib.tensor(x), conv(lib, state))) + _flat(mod(lib.tensor(x[0])))
        grads = lib.autograd.grad(sum((o * o).sum() for o in out), list(mod.parameters()))
        outs.append(out + list(grads))
    for a, b in zip(outs[1], outs[0]):
        close(a, b, expr)


@pytest.mark.parametrize("call, exc", [("nn.RNN(3, 4, nonlinearity='sigmoid')", ValueError),
                                       ("nn.LSTM(3, 4, dropout=2.)", ValueError),
                                       ("nn.GRU(3, 4)(lib.ones(2, 2, 2, 2))", ValueError),
                                       ("nn.RNN(3, 4)(lib.ones(5, 2, 3), lib.ones(1, 3, 4))", RuntimeError)])
def test_errors_as_torch(call, exc):
    for lib in (torch, mt):
        with pytest.raises(exc):
            eval(call, {"nn": lib.nn, "lib": lib})
