"""swap_in_optimizer_params_and_state: run an optimizer for a while on other parameters and another
state (e.g. a copy, to try a step without touching the model), then get the live ones back."""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

_WHO = "swap_in_optimizer_params_and_state requires "


def _check_state(state):
    """'state' maps packed parameter ids (ints) to per-parameter dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(_WHO + "swapin_optim_state['state'] to be a dict mapping packed parameter ids to "
                           f"per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(_WHO + "optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(_WHO + "per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_group(idx, group, swapin_group):
    """A swap-in group: a dict with the live group's keys and as many packed ids as it has parameters."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(_WHO + "each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(_WHO + "optimizer.state_dict()-style param_groups[*]['params'] entries keyed by packed "
                           "parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(_WHO + "optimizer.state_dict()-style param group keys to exactly match the live optimizer "
                           f"group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


def _prepare(optimizer, swapin_parameters, swapin_optim_state):
    """Check everything first; returns the swap-in state and (live group, swap-in group, tensors) triples."""
    if not optimizer.state:
        raise RuntimeError(_WHO + "initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(_WHO + "a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(_WHO + "swapin_optim_state['param_groups'] to be a list of param-group dicts, got "
                           f"{type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    flat, offset, seen, infos = list(swapin_parameters.values()), 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(_WHO + "the explicit parameter state to match optimizer.param_groups ordering.")
        infos.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(_WHO + "swapin_optim_state['state'] to be keyed only by packed parameter ids from "
                           f"param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the `with` block, optimizer.step() updates the tensors of swapin_parameters (a dict, in the
    order of the optimizer's parameters) from the state in swapin_optim_state (shaped like
    optimizer.state_dict()); on exit the live parameters, hyperparameters and state come back. In-place
    updates of the swap-in state tensors stay visible in swapin_optim_state."""
    state, infos = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]   # shallow: the params list keeps its identity
    try:
        swapped = defaultdict(dict)
        for live, swapin_group, tensors in infos:
            live["params"] = tensors
            live.update({k: v for k, v in swapin_group.items() if k != "params"})
            for p, pid in zip(tensors, swapin_group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
