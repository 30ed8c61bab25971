"""f-strings and format() of tensors, beside torch.

Training loops print `f"Epoch {epoch} | Loss: {loss}"`; torch formats a 0-d tensor as its number (`Loss: 0.25`, not
`Loss: tensor(0.2500, grad_fn=<MseLossBackward0>)`), with any format spec a number takes. Other tensors format as
object does: their str, and a TypeError for a spec. Zero to Mastery's first notebook prints `Minimum: {x.min()}`.
"""
import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")

CASES = {
    "a float": lambda L: L.tensor(0.25),
    "a loss with history": lambda L: ((L.tensor([1.0, 2.0], requires_grad=True) - 3) ** 2).mean(),
    "an int": lambda L: L.tensor(7),
    "a bool": lambda L: L.tensor(True),
    "a float64": lambda L: L.tensor(1 / 3, dtype=L.float64),
    "a float32 that is not a double": lambda L: L.tensor(1e-8),
    "a half": lambda L: L.tensor(2.5, dtype=L.float16),
    "a complex": lambda L: L.tensor(1 + 2j),
    "an element": lambda L: L.arange(9).reshape(3, 3)[1][2],
    "a reduction": lambda L: L.arange(10, 100, 10).max(),
    "a vector": lambda L: L.tensor([1.0, 2.0]),
    "a 1-element vector": lambda L: L.tensor([1.5]),
    "a Parameter": lambda L: L.nn.Parameter(L.tensor(2.0)),
    "a meta tensor": lambda L: L.tensor(2.0, device="meta"),
}
SPECS = ["", ".3f", ">8", "e", "d", "%"]


def _formatted(L, case, spec):
    try:
        return "ok", format(CASES[case](L), spec).replace("microtorch", "torch")
    except Exception as e:
        return "raised", type(e).__name__, str(e)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("case", CASES)
def test_format_as_torch(case, spec):
    assert _formatted(microtorch, case, spec) == _formatted(torch, case, spec)


def test_an_f_string_of_a_training_loss():
    def line(L):
        L.manual_seed(0)
        model = L.nn.Linear(3, 1)
        x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        loss = L.nn.functional.mse_loss(model(x), L.zeros(4, 1))
        return f"Epoch: 0 | Loss: {loss:.5f} | Raw: {loss}"
    assert line(microtorch) == line(torch)
