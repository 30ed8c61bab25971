"""Optimizer: the base class that holds parameter groups and per-parameter state.

A subclass implements `step()`: for each parameter with a gradient, update the parameter in
place from its `.grad` and its `state` (momentum buffers, moving averages). The updates are
written in numpy on the tensors' data, outside autograd (torch runs them under no_grad), and
they bump each parameter's version counter as torch's in-place updates do.
"""
import copy
import functools
from collections import defaultdict


from .._tensor import Tensor
from ..autograd import _hooks, graph
from .._creation import zeros_like
from .._dtype import float32
from .._tensor import tensor
from ..autograd.grad_mode import enable_grad, no_grad


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: `Optimizer(params, defaults)`; params is an iterable of tensors or of dicts
    (parameter groups, each with its own options, e.g. [{'params': ..., 'lr': 0.1}, ...])."""
    _state_like_params = True   # per-parameter state tensors have the parameter's shape (not LBFGS's flat ones)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._step_count = 0
        self._step_pre_hooks = {}
        self._step_post_hooks = {}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            f"got {params.type()}; pass model.parameters() or [tensor]")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group of parameters with its own options (the others come from defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        params = list(params)
        if params and isinstance(params[0], tuple):  # named parameters, as torch >= 2.6 accepts
            param_group["param_names"] = [n for n, _ in params]
            params = [p for _, p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor: optimize the leaf it was computed from (or "
                                 "t.detach().requires_grad_())")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", UserWarning, stacklevel=3)
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized parameters (to None by default, as torch does)."""
        close = _open_range(self, "zero_grad")
        try:
            self._zero_grad(set_to_none)
        finally:
            if close is not None:
                close()

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    with no_grad():
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before each step."""
        return graph.add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after each step."""
        return graph.add_hook(self._step_post_hooks, hook)

    # ---- state dict -----------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}: parameters are
        referred to by their position across the groups, so the dict holds no model tensors."""
        index, groups, start = {}, [], 0
        for group in self.param_groups:
            ids = list(range(start, start + len(group["params"])))
            index.update({id(p): i for p, i in zip(group["params"], ids)})
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
            start += len(ids)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load what state_dict() returned (from an optimizer over parameters of the same shapes).
        Everything is checked first: on an error nothing is loaded."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("loaded state dict must be a dict with keys 'state' and 'param_groups' (what "
                             "optimizer.state_dict() returns)")
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved):
            id_map.update(zip(s["params"], g["params"]))
        new_state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key not in id_map:
                raise ValueError(f"loaded state dict has state for parameter {key}, which is not in any of its "
                                 "parameter groups")
            p = id_map[key]
            entry = {}
            for name, v in value.items():
                if isinstance(v, Tensor):
                    if name != "step" and v.ndim and self._state_like_params and _not_shaped_like(v.shape, p.shape):
                        raise ValueError(f"loaded state dict: state {name!r} of parameter {key} has shape "
                                         f"{list(v.shape)}, but the parameter has shape {list(p.shape)}")
                    # a copy, cast to the parameter's dtype (the step counter keeps its own)
                    data = v._data.astype(p._data.dtype if name != "step" and v.dtype.is_floating_point
                                          else v._data.dtype, copy=True)
                    entry[name] = Tensor._make(data)
                else:
                    entry[name] = copy.deepcopy(v)
            new_state[p] = entry
        self.state = new_state
        self.param_groups = [{**copy.deepcopy({k: v for k, v in s.items() if k != "params"}), "params": g["params"]}
                             for g, s in zip(groups, saved)]

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_count", 0)
        self.__dict__.setdefault("_step_pre_hooks", {})
        self.__dict__.setdefault("_step_post_hooks", {})

    def __repr__(self):
        groups = []  # (torch's layout: a blank line between groups, none when there is no group)
        for i, group in enumerate(self.param_groups):
            groups.append(f"\nParameter Group {i}\n" + "".join(f"    {key}: {group[key]}\n" for key in sorted(group)
                                                              if key != "params"))
        return type(self).__name__ + " (" + "".join(groups) + ")"


def _not_shaped_like(state_shape, shape):
    """A state tensor has the parameter's shape, or size 1 along some of its dims (Adafactor's factors)."""
    return len(state_shape) != len(shape) or any(a != b and a != 1 for a, b in zip(state_shape, shape))


def _with_step_hooks(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        close = _open_range(self, "step")
        try:
            for hook in list(self._step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            out = step(self, *args, **kwargs)
            self._step_count += 1
            for hook in list(self._step_post_hooks.values()):
                hook(self, args, kwargs)
            return out
        finally:
            if close is not None:
                close()
    return wrapper


def _open_range(optimizer, method):
    """While a profile records, open torch's range around an optimizer's step or zero_grad (Optimizer.step#SGD.step)
    and return what closes it; else None"""
    opener = _hooks.range_opener
    return opener(f"Optimizer.{method}#{type(optimizer).__name__}.{method}", ()) if opener is not None else None


# ---- helpers for the update rules ------------------------------------------------------------
def _grad(p, maximize):
    return -p.grad if maximize else p.grad


def _buffer(like):
    """A zero state tensor shaped like a parameter."""
    return zeros_like(like.detach())


def _zero_step():
    """torch keeps the step count as a float32 scalar tensor in the state."""
    return tensor(0.0, dtype=float32)


def _step_tensor(state):
    """Count one more step; returns the new count as a float."""
    step = state.get("step")
    if not isinstance(step, Tensor):  # absent, or a plain number from an older state dict
        state["step"] = step = tensor(0.0 if step is None else float(step), dtype=float32)
    step.add_(1)
    return step.item()


def _check_common(lr, weight_decay, differentiable, fused):
    if not isinstance(lr, (int, float)):   # torch fails comparing it with 0.0: a TypeError
        raise TypeError(f"Invalid learning rate: {lr!r}; the learning rate is a number, e.g. lr=0.01 (a Tensor "
                        "lr is not supported: pass lr=float(lr))")
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if differentiable:
        raise RuntimeError("differentiable=True is not supported: microtorch's optimizers update parameters in "
                           "place outside autograd")
    if fused:
        raise RuntimeError("fused=True is not supported: microtorch runs on numpy, there is no fused kernel")
