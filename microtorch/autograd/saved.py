"""SavedTensor: a tensor an op saved for backward, with the version it had when saved.

backward must see the value forward saw. Each saved tensor remembers its version counter's
value; reading it after an in-place change raises torch's error instead of computing a wrong
gradient. Pack/unpack hooks (`saved_tensors_hooks`, or `register_hooks` on one saved tensor)
may store it in another form; then unpack rebuilds it and reattaches its history.
"""
import weakref

from .._tensor import Tensor
from . import _hooks, anomaly_mode, grad_mode

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class SavedTensor:
    """One saved tensor. An output of the node is kept as its data plus its output number, not
    as the Tensor, so that output -> grad_fn -> saved output is not a reference cycle (torch
    does the same); an input is kept as the Tensor."""

    __slots__ = ("tensor", "data", "counter", "version", "output_nr", "requires_grad",
                 "packed", "unpack_hook", "history", "freed")

    def __init__(self, tensor, is_output):
        self.counter = tensor._version_counter
        self.version = self.counter[0]
        self.requires_grad = tensor._requires_grad
        self.output_nr = tensor._output_nr if is_output else -1
        self.unpack_hook = self.packed = self.history = None
        self.freed = False
        if is_output:
            self.tensor, self.data = None, tensor._data
        else:
            self.tensor, self.data = tensor, None
        if _hooks.saved_hooks_open:
            stack = _hooks._saved_hooks.__dict__.get("stack")
            if stack:
                self._pack(*stack[-1], tensor)

    # ---- hooks ------------------------------------------------------------------------------
    def register_hooks(self, pack_hook, unpack_hook):
        """torch's SavedTensor.register_hooks: pack now, unpack when backward reads it."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and unpack_hook must be "
                            f"callables, got {type(pack_hook).__name__} and {type(unpack_hook).__name__}")
        if self.freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                "you need to backward through the graph a second time or if you need to access saved variables "
                "after calling backward.")
        if self.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        self._pack(pack_hook, unpack_hook)

    def _pack(self, pack_hook, unpack_hook, tensor=None):
        if tensor is None:
            tensor = self.tensor if self.tensor is not None else self._detached()
        grad_fn = self.tensor.grad_fn if self.tensor is not None else None
        # what unpack needs to reattach the history (torch keeps grad_fn, not the tensor)
        if self.output_nr < 0 and self.requires_grad:
            if grad_fn is not None:
                self.history = (grad_fn, self.tensor._output_nr, None)
            else:
                from .node import accumulator
                self.history = (None, 0, accumulator(self.tensor))
        with grad_mode.no_grad():  # as in torch: the pack hook does not record a graph
            self.packed = pack_hook(tensor)
        self.unpack_hook = unpack_hook
        self.tensor = self.data = None

    def _detached(self):
        t = Tensor._make(self.data)
        t._version_counter = self.counter
        return t

    # ---- reading it back --------------------------------------------------------------------
    def unpack(self, node):
        """The saved tensor, as backward of `node` reads it."""
        if self.freed:
            raise RuntimeError(FREED_MESSAGE)
        if self.unpack_hook is not None:  # torch does not check versions behind saved-tensor hooks
            return self._unpack_hooked(node)
        if self.counter[0] != self.version:
            raise RuntimeError(self.version_error(node))
        if self.tensor is not None:
            return self.tensor
        t = self._detached()
        if self.requires_grad:
            t._requires_grad = True
            t.grad_fn = node
            t._output_nr = self.output_nr
        return t

    def _unpack_hooked(self, node):
        out = self.unpack_hook(self.packed)
        if not isinstance(out, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(out).__name__}")
        if not self.requires_grad or out._requires_grad:
            return out
        t = Tensor._make(out._data)
        t._version_counter = out._version_counter
        t._requires_grad = True
        if self.output_nr >= 0:
            t.grad_fn, t._output_nr = node, self.output_nr
        elif self.history[0] is not None:
            t.grad_fn, t._output_nr = self.history[0], self.history[1]
        else:  # a leaf: route to its AccumulateGrad
            acc = self.history[2]
            t._accumulator, t._keep_accumulator = weakref.ref(acc), acc
        return t

    def peek(self):
        """What viz shows: the saved value (an ndarray or what a pack hook made), without hooks."""
        if self.unpack_hook is not None:
            return self.packed
        return self.tensor._data if self.tensor is not None else self.data

    def free(self):
        self.tensor = self.data = self.packed = self.history = None
        self.freed = True

    def version_error(self, node):
        shape, type_name = self.peek().shape, self._detached().type() if self.tensor is None else self.tensor.type()
        where = ""
        if self.output_nr >= 0:
            where = f", which is output {self.output_nr} of {short_name(node)},"
        elif self.tensor is not None and self.tensor.grad_fn is not None:
            where = f", which is output {self.tensor._output_nr} of {short_name(self.tensor.grad_fn)},"
        if anomaly_mode.is_anomaly_enabled():
            hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                    "The variable in question was changed in there or anywhere later. Good luck!")
        else:
            hint = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with microtorch.autograd.set_detect_anomaly(True, check_nan=False).")
        return (
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{type_name} {list(shape)}]{where} is at version {self.counter[0]}; expected version "
            f"{self.version} instead. {hint} (It was saved for backward by {node.name()}: do the in-place "
            "operation on a clone, x = x.clone(), or use the out-of-place op.)"
        )


class NoneSaved:
    """What save_for_backward(None) keeps (and grad_fn._raw_saved_<name> of a tensor torch's node
    leaves undefined, as torch's SavedTensor holding None)."""
    __slots__ = ()
    freed = False

    def unpack(self, node):
        return None

    def register_hooks(self, pack_hook, unpack_hook):
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden (this op did not "
                           "save that tensor: nothing needed it for backward)")

    def free(self):
        pass


NONE_SAVED = NoneSaved()


def short_name(node):
    """'MulBackward0' -> 'Mul', as torch names nodes in the version error."""
    name = node.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 and (name[i + 8:].isdigit() or not name[i + 8:]) else name
