"""Node: a vertex of the backward graph, and AccumulateGrad, the node of a leaf.

A node knows where its gradients go next (`next_functions`: one `(node, output_nr)` edge per
input of the op) and carries the hooks registered on it. Fields that most nodes never set
(hooks, metadata) are declared here with a class-level default, so they cost nothing until used.
"""
import itertools
import weakref

from . import _hooks

_seq = itertools.count()       # creation order: backward runs the newest ready node first
ACCUMULATE_GRAD_SEQ = 2 ** 63  # AccumulateGrad runs as soon as it is ready, as in torch


class Node:
    """A node of the backward graph: `name()`, `next_functions`, hooks, metadata."""

    next_functions = ()
    _num_outputs = 1             # gradients it receives (one per output of its op)
    _out_meta = None             # ((shape, numpy dtype) of each gradient it receives), to check them
    _pre_hooks = None            # {handle id: fn(grad_outputs)}
    _post_hooks = None           # {handle id: fn(grad_inputs, grad_outputs)}
    _tensor_pre_hooks = None     # {handle id: (output_nr, fn(grad))}: hooks of the op's outputs
    _retains_grad = None         # {output_nr: weakref to the output that called retain_grad()}
    _hooked = False              # any of the four above was ever set (the engine looks closer only then)
    _metadata = None
    _saved = ()                  # what backward needs and frees after (an op's SavedTensors)
    _anomaly_trace = None        # anomaly mode: the forward stack that created the node
    _anomaly_parent = None       # ... and the node whose backward created it

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node runs; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        return _hooks.add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        return _hooks.add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
            self._hooked = True
        return _hooks.add_hook(self._tensor_pre_hooks, (output_nr, fn))

    def _retain_grad(self, tensor):
        if self._retains_grad is None:
            self._retains_grad = {}
            self._hooked = True
        self._retains_grad[tensor._output_nr] = weakref.ref(tensor)

    # ---- the public view of a node, for tools that draw it (viz) ------------------------------
    def hooks(self):
        """[(kind, fn)] registered on this node: 'tensor' (on one of its outputs), 'retain_grad'
        (fn None), 'node_pre', 'node_post', in the order the engine runs them."""
        out = [("tensor", fn) for _, fn in (self._tensor_pre_hooks or {}).values()]
        out += [("retain_grad", None) for _ in (self._retains_grad or {})]
        out += [("node_pre", fn) for fn in (self._pre_hooks or {}).values()]
        out += [("node_post", fn) for fn in (self._post_hooks or {}).values()]
        return out

    def saved_versions(self):
        """[(value, version when saved, version now)] per saved tensor (None for a saved None);
        None once backward has freed them. value is an ndarray or what a pack hook returned."""
        return []

    def saved_names(self):
        """torch's names of the saved tensors (grad_fn._saved_<name>), in the order of saved_versions."""
        return ()

    function_class = None        # the Function subclass whose backward this node runs

    def edge_inputs(self):
        """For each edge of next_functions, the position of the forward argument it stands for."""
        return tuple(range(len(self.next_functions)))

    def _release(self):
        """Free what backward needed (saved tensors), after it ran without retain_graph."""

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads):
        return self._backward(list(grads))


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient into `variable.grad`."""

    _seq = ACCUMULATE_GRAD_SEQ

    def __init__(self, variable):
        self.variable = variable
        self._out_meta = (leaf_meta(variable),)

    def name(self):
        return "torch::autograd::AccumulateGrad"


def leaf_meta(t):
    """(shape, numpy dtype) a leaf's gradient is checked against: the leaf's own dtype, or the
    `grad_dtype` set on it (None: any dtype, no cast)."""
    grad_dtype = t.__dict__.get("_grad_dtype", t.dtype)
    return (t._data.shape, None if grad_dtype is None else grad_dtype.np)


def accumulator(t):
    """The AccumulateGrad node of a leaf that requires grad, cached weakly on the leaf (the
    graph holds it; a new one is made once no graph does); None for a view that requires grad
    only through its base."""
    ref = t._accumulator
    node = ref() if ref is not None else None
    if node is None:
        if t._grad_from_base:  # a view made under no_grad of a base that requires grad: torch gives it no node
            return None
        node = AccumulateGrad(t)
        t._accumulator = weakref.ref(node)
    return node


def edge(t):
    """The (node, output_nr) a gradient for tensor t flows into."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (accumulator(t), 0)
