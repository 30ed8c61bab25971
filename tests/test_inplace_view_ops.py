"""t_, transpose_, squeeze_, unsqueeze_ as torch: a new version (a graph that saved the tensor refuses it) and
torch's refusal on a view of a leaf that requires grad (fuzz seed 503380 leaked numpy's ValueError here)."""
import pytest
import torch

import microtorch as mt


def versions(T):
    a = T.ones(2, 3)
    seen = [a._version]
    for call in (lambda: a.t_(), lambda: a.transpose_(0, 1), lambda: a.unsqueeze_(0), lambda: a.squeeze_(0),
                 lambda: a.swapdims_(0, 1)):
        call()
        seen.append((a._version, tuple(a.shape)))
    return seen


def test_each_one_counts_a_version():
    assert versions(mt) == versions(torch)


@pytest.mark.parametrize("op", ["t_", "squeeze_", "unsqueeze_"])
def test_refused_on_a_view_of_a_leaf(op):
    for T in (torch, mt):
        leaf = T.ones(1, 3, requires_grad=True)
        view = leaf[:]
        call = (lambda: view.unsqueeze_(0)) if op == "unsqueeze_" else (lambda: getattr(view, op)())
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            call()
        with T.no_grad():
            call() if op != "unsqueeze_" else view.unsqueeze_(0)  # (allowed without grad mode)


def test_a_saved_tensor_changed_by_t_is_refused_at_backward():
    for T in (torch, mt):
        a0 = T.zeros(1, 2, dtype=T.float64)
        a6 = T.ones(2, 1, dtype=T.float64, requires_grad=True)
        out = a6 @ a0  # (mm saves a0 for a6's gradient)
        a0.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_a_non_leaf_and_its_view_still_take_them():
    for T in (torch, mt):
        x = T.ones(2, 3, requires_grad=True) * 2
        x.t_()
        v = (x * 1).view(3, 2)
        v.t_()
        assert v.grad_fn.name() == "TBackward1" and tuple(v.shape) == (2, 3)
        v.sum().backward()
