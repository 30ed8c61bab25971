"""The part of DistributedDataParallel's reducer that one process can see: which parameters' gradients have
arrived in the current backward pass.

torch's reducer averages each gradient over the processes as soon as it arrives (in buckets) and finishes the
iteration when all have. With one process the average of a gradient is the gradient, so nothing is changed,
but the accounting stays, because it is what makes DDP's best-known errors: a parameter that got no gradient
leaves the iteration unfinished, and the next forward pass refuses to start ("Expected to have finished
reduction in the prior iteration..."); a parameter whose gradient arrives twice in one iteration is refused too.
"""
import weakref

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs participate "
    "in calculating loss.\nParameter indices which did not receive grad for rank 0: {indices}\n(these are "
    "{names}: use them in the loss, freeze them with requires_grad_(False) before wrapping the model, or pass "
    "find_unused_parameters=True)")

_TWICE = (
    "Expected to mark a variable ready only once. DDP took this parameter's gradient in this iteration already: "
    "the parameter was used in a second forward-backward pass before the first one finished (a parameter shared "
    "outside `forward`, or the same part of the model run by several reentrant checkpoints, or a second "
    "backward through the same graph).\nParameter at index {index} with name {name} has been marked as ready "
    "twice. (Run one backward per forward, or call _set_static_graph() if the graph is the same every iteration.)")


def _ready_hook(reducer_ref, index):
    def ddp_grad_ready(param):  # (a weak reference: a discarded DDP's hooks do nothing)
        reducer = reducer_ref()
        if reducer is None or reducer.params[index] is not param:  # (a deep copy of the parameter kept the hook)
            return
        if reducer.mark_ready(index) and param.grad is not None:
            # torch copies the averaged gradient back into .grad (copy_): one version more per synced pass
            param.grad._version_counter[0] += 1
    return ddp_grad_ready


class Reducer:
    """Counts the gradients of `named_params` ([(name, parameter)]) arriving in each backward pass."""

    def __init__(self, named_params, find_unused_parameters):
        self.names, self.params = [name for name, _ in named_params], [p for _, p in named_params]
        self.find_unused_parameters = find_unused_parameters
        self.expect_hooks = False  # between a forward that will sync and the end of its backward
        self.require_finalize = False  # a gradient arrived, not yet all of them
        self.ready = set()
        ref = weakref.ref(self)
        handles = [p.register_post_accumulate_grad_hook(_ready_hook(ref, i)) for i, p in enumerate(self.params)]
        weakref.finalize(self, _remove, handles)

    def __reduce__(self):  # a copy (deepcopy, pickle) starts afresh, with hooks on the copy's parameters
        return Reducer, (list(zip(self.names, self.params)), self.find_unused_parameters)

    def prepare_for_backward(self):
        self.expect_hooks, self.ready = True, set()

    def ensure_prior_reduction_finished(self):
        if not self.require_finalize:
            return
        missing = [i for i in range(len(self.names)) if i not in self.ready]
        raise RuntimeError(_UNFINISHED.format(indices=" ".join(map(str, missing)),
                                              names=", ".join(self.names[i] for i in missing)))

    def mark_ready(self, index):
        """Count parameter `index`'s gradient in; False when no iteration is open (under no_sync)."""
        if not self.expect_hooks:
            return False
        if index in self.ready and self.find_unused_parameters:
            return False  # (torch finished that iteration when its backward ended: a later pass is not counted)
        if index in self.ready:
            raise RuntimeError(_TWICE.format(index=index, name=self.names[index]))
        self.ready.add(index)
        self.require_finalize = True
        if not self.find_unused_parameters and len(self.ready) == len(self.names):
            self.expect_hooks, self.require_finalize, self.ready = False, False, set()
        elif self.find_unused_parameters:  # (torch marks the parameters that got no gradient ready itself)
            self.require_finalize = False
        return True


def _remove(handles):
    for h in handles:
        h.remove()
