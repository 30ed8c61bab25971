"""Weight averaging: stochastic weight averaging (SWA, Izmailov et al., 2018) and exponential moving averages (EMA).

AveragedModel holds a copy of a model and, each time update_parameters(model) is called, folds the model's
current weights into its own: an equal-weight running mean by default, or any rule given as `avg_fn` (one
tensor at a time, returns the new value) or `multi_avg_fn` (lists of tensors, updated in place). The first
call just copies the weights. SWALR anneals every group's learning rate to a constant `swa_lr`, the schedule
SWA trains with, and update_bn recomputes BatchNorm statistics for averaged weights with one pass over data.

    swa_model, swa_scheduler = AveragedModel(model), SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    update_bn(loader, swa_model)
"""
import itertools
import math
from copy import deepcopy

from .._dtype import int64
from .._tensor import Tensor, tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..nn.modules.normalization_more import _InstanceNorm
from ._cyclic import _format_param
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_each_(averaged, current, weight):
    """torch._foreach_lerp_ as torch runs it on the CPU: one lerp_ per tensor (microtorch has no fused kernels)."""
    if isinstance(weight, Tensor):  # a 0-dim tensor binds to the foreach kernel's Scalar weight
        weight = weight.item()
    for avg, cur in zip(averaged, current):
        avg.lerp_(cur, weight)


def _lerp_is_defined_for(tensor_):
    return tensor_.is_floating_point() or tensor_.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors, for AveragedModel(multi_avg_fn=...):
    ema <- decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _lerp_is_defined_for(ema_param_list[0]):
            _lerp_each_(ema_param_list, current_param_list, 1 - decay)
        else:  # integer buffers (num_batches_tracked): the float result is truncated on the way back
            for ema, current in zip(ema_param_list, current_param_list, strict=True):
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place equal-weight running mean over lists of tensors, for AveragedModel(multi_avg_fn=...):
    avg <- avg + (current - avg) / (num_averaged + 1)."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _lerp_is_defined_for(averaged_param_list[0]):
            _lerp_each_(averaged_param_list, current_param_list, 1 / (num_averaged + 1))
            return
        diffs = [current - avg for avg, current in zip(averaged_param_list, current_param_list)]
        if isinstance(num_averaged, Tensor):  # (integer tensors: addcdiv_ refuses, as torch's does)
            for avg, diff in zip(averaged_param_list, diffs):
                avg.addcdiv_(diff, num_averaged + 1)
        else:
            for avg, diff in zip(averaged_param_list, diffs):
                avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA of one tensor, for AveragedModel(avg_fn=...): returns decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """An equal-weight running mean of one tensor, for AveragedModel(avg_fn=...): returns the new average."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged, current):
    """Pairs grouped as torch groups them for its foreach kernels: by the averaged tensor's device and dtype."""
    groups = {}
    for avg, cur in zip(averaged, current):
        avg_group, cur_group = groups.setdefault((avg.device, avg.dtype), ([], []))
        avg_group.append(avg)
        cur_group.append(cur)
    return groups


class AveragedModel(Module):
    """A running average of a model's weights (SWA by default, EMA with get_ema_multi_avg_fn or get_ema_avg_fn).

    `module` is a deep copy of `model` (moved to `device` if given); `n_averaged` (an int64 buffer, saved in the
    state dict) counts the updates so far. `avg_fn(avg, current, n_averaged)` returns one tensor's new average;
    `multi_avg_fn(avg_list, current_list, n_averaged)` updates lists in place; give at most one of them. With
    `use_buffers=True` the buffers (e.g. BatchNorm's running statistics) are averaged too; otherwise they are
    copied from the model at every update. Calling it runs the averaged copy.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold `model`'s current weights into the average (the first call copies them)."""
        averaged, current = self._detached_pairs(model)
        if self.n_averaged == 0:
            for avg, cur in zip(averaged, current):
                avg.copy_(cur)
        if self.n_averaged > 0:
            self._average_into(averaged, current)
        if not self.use_buffers:
            # buffers that are not averaged follow the model, so the copy normalises as the model does
            for mine, theirs in zip(self.module.buffers(), model.buffers(), strict=True):
                mine.detach().copy_(theirs.detach().to(mine.device))
        self.n_averaged += 1

    def _detached_pairs(self, model):
        """(averaged tensors, model tensors on their devices), detached so the in-place updates are not recorded."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        pairs = [(avg.detach(), cur.detach().to(avg.device)) for avg, cur in zip(mine, theirs)]
        return [avg for avg, _ in pairs], [cur for _, cur in pairs]

    def _average_into(self, averaged, current):
        if self.multi_avg_fn is None and self.avg_fn is not None:
            for avg, cur in zip(averaged, current, strict=True):
                avg.copy_(self.avg_fn(avg, cur, self.n_averaged.to(avg.device)))
            return
        for (device, _), (avg_group, cur_group) in _group_by_device_and_dtype(averaged, current).items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(avg_group, cur_group, n_averaged)
                continue
            # the default: torch's fused foreach kernels exist only off the CPU, here it is one tensor at a time
            swa_update = get_swa_avg_fn()
            for avg, cur in zip(avg_group, cur_group, strict=True):
                avg.copy_(swa_update(avg, cur, n_averaged))


def _is_batch_norm(module):
    # microtorch's InstanceNorm reuses _BatchNorm's code; torch's is not a _BatchNorm and update_bn leaves it alone
    return isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm)


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running mean and variance of every BatchNorm in `model` with one pass over `loader`.

    Each batch is a tensor, or a list or tuple whose first item is the input (e.g. (input, label)); it is moved
    to `device` if given. The statistics restart from zero and average all batches equally (momentum None);
    afterwards each BatchNorm gets its momentum back and the model its training mode.
    """
    momenta = {}
    for module in model.modules():
        if _is_batch_norm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average: every batch counts the same
    for batch in loader:
        inputs = batch[0] if isinstance(batch, (list, tuple)) else batch
        if device is not None:
            inputs = inputs.to(device)
        model(inputs)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its `swa_lr` (one value, or a list with one per group) over `anneal_epochs`
    steps, along half a cosine ("cos") or a straight line ("linear"), then holds it there.

    Recursive, like torch's: each step recovers the lr the annealing started from out of the current one, so
    it takes over from whatever schedule ran before it.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for group, value in zip(optimizer.param_groups, _format_param("swa_lr", optimizer, swa_lr)):
            group["swa_lr"] = value.clone() if isinstance(value, Tensor) else value  # never the caller's tensor
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """Invert one annealing step: the lr that, a fraction `alpha` of the way to swa_lr, is `lr` now."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def _progress(self, step):
        """The annealing function at `step`, the fraction of the way from the start lr to swa_lr."""
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:  # no annealing: the first step already lands on swa_lr
            step = max(1, step)
        prev_alpha, alpha = self._progress(step - 1), self._progress(step)
        groups = self.optimizer.param_groups
        start_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha) for group in groups]
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(groups, start_lrs, strict=True)]

    def state_dict(self):
        """Everything but the optimizer and the annealing function (rebuilt from its name on loading)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
