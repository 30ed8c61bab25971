"""AdaptiveLogSoftmaxWithLoss: a softmax over many classes, cheap for the frequent ones (Grave et al., 2016).

The head scores the shortlist (the most frequent classes) and one entry per tail cluster; each cluster has
its own small softmax, reached through a low-rank projection.
"""
from collections import namedtuple

import numpy as np

from ..._tensor import Tensor
from ...ops.rearrange import index_add
from ...ops.shape import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs, n_classes):
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or \
            len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                         "where each value is between 1 and n_classes-1")


def _check_batch(input_, target_):
    if target_.ndim == 1:
        if input_.shape[0] != target_.shape[0]:
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        if input_.ndim != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                               f"{input_.shape}")
    elif target_.ndim == 0:
        if input_.ndim != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                               f"{input_.shape}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


class AdaptiveLogSoftmaxWithLoss(Module):
    """log-probabilities of the targets (and their mean negative as the loss) under an adaptive softmax"""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs, self.div_value, self.head_bias = cutoffs + [n_classes], div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        _check_batch(input_, target_)
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        t = (target_._data if batched else target_._data.reshape(1)).astype(np.int64)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{t.min()}, {t.max()}] were found. ")
        head_column = np.where(t < self.shortlist_size, t, 0)
        output = Tensor._make(np.zeros(len(t), input.dtype.np))
        for i in range(self.n_clusters):  # the log-probability within the target's cluster
            rows = np.nonzero((t >= self.cutoffs[i]) & (t < self.cutoffs[i + 1]))[0]
            if not len(rows):
                continue
            head_column[rows] = self.shortlist_size + i
            logp = F.log_softmax(self.tail[i](input.index_select(0, Tensor._make(rows))), dim=1)
            local = logp.gather(1, Tensor._make((t[rows] - self.cutoffs[i])[:, None]))
            output = index_add(output, 0, Tensor._make(rows), local.squeeze(1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, Tensor._make(head_column[:, None])).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """log-probabilities of every class, (N, n_classes)"""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """the most likely class of each row (the full softmax is computed only where the head is unsure)"""
        head_output = self.head(input)
        out = head_output._data.argmax(1)
        outside = out >= self.shortlist_size
        if outside.any():
            rows = Tensor._make(np.nonzero(outside)[0])
            full = self._get_full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows))
            out[outside] = full._data.argmax(1)
        return Tensor._make(out.astype(np.int64))
