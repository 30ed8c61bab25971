"""Function and its ctx: how an op runs forward and records its node.

Every differentiable op, built in or written by a student, is a `Function` with `forward`
and `backward`. `MyFunc.apply(*args)` runs forward and, when grad mode is on and an input
requires grad, records a node: an instance of `MyFuncBackward`, which is also the `ctx` that
forward saw. The node's `next_functions` point at the nodes of its inputs, so the graph is
the chain of `grad_fn`s that backward walks.
"""
import numpy as np
from numpy import asarray, generic, ndarray  # (names of their own: numpy's module attributes are slow to read)

from .._quiet import _QUIET, _quiet_context, _quiet_local, quietly
from .._tensor import Tensor
from . import _hooks, anomaly_mode, grad_mode, views
from .node import AccumulateGrad, Node, _seq, accumulator  # noqa: F401  (AccumulateGrad: importable from here, as before)
from .saved import FREED_MESSAGE, NONE_SAVED, SavedTensor, short_name

# Transforms that run an op their own way while they are active (forward-mode AD, vmap):
# `intercept(fn)` adds one, fn(cls, args, kwargs) returns the result or NotImplemented.
_interceptors = []


def intercept(fn, first=False):
    """Register fn to see every Function.apply first (first=True: before the others)."""
    if fn not in _interceptors:
        _interceptors.insert(0 if first else len(_interceptors), fn)


def stop_intercepting(fn):
    if fn in _interceptors:
        _interceptors.remove(fn)


class FunctionCtx:
    """What forward can do with ctx: save tensors, mark outputs, read needs_input_grad."""

    _to_save = None              # ctx.save_for_backward(...), until step (e) saves them
    _dirty = None                # ctx.mark_dirty(...): inputs forward changed in place
    _dirty_tensors = ()          # ... found among the inputs
    _non_differentiable = None   # ctx.mark_non_differentiable(...)
    _to_save_forward = None      # ctx.save_for_forward(...)
    _materialize_grads = True    # None gradients become zeros before backward

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)


class BackwardFunction(FunctionCtx, Node):
    """The node recorded by `Function.apply`; it is the `ctx` forward received.

    Its fields are declared here and set by `Function.apply`'s steps; what an op keeps for its
    backward (ctx.dims = ...) goes in the instance's own dict, as do the fields FunctionCtx
    declares with a class-level default, which few nodes set (a slot costs a store on every op).
    `_saved` is () until step (e) makes it [SavedTensor], None once backward freed them.
    """

    __slots__ = ("_seq", "needs_input_grad", "next_functions", "_out_meta", "_saved")
    _forward_cls = None          # torch's name for the Function subclass (set per subclass)
    _backward_impl = None        # its backward, when it defines backward and not vjp
    _edge_args = None            # which arguments of forward its edges stand for, when not all of them
                                 # (torch gives no edge to a number, or to an index or mask tensor)
    _saved_names = ()            # torch's names of the saved tensors: grad_fn._saved_<name>

    @property
    def function_class(self):
        return self._forward_cls

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple([s.unpack(self) for s in saved])

    def saved_versions(self):
        if self._saved is None:
            return None
        return [None if s is NONE_SAVED else (s.peek(), s.version, s.counter[0]) for s in self._saved]

    def saved_names(self):
        """torch's names of the saved tensors, in the order of saved_versions ("self", "other", "result"):
        each is readable as grad_fn._saved_<name>. Empty for a custom Function (torch names none)."""
        return self._saved_names

    def _input_meta(self, i):
        """(shape, numpy dtype) of input i, which requires grad: kept, as in torch, by the node its
        gradient flows into (that node's output, or a leaf's AccumulateGrad)."""
        nxt, nr = self.next_functions[i if self._edge_args is None else self._edge_args.index(i)]
        return nxt._out_meta[nr]

    def edge_inputs(self):
        return self._edge_args if self._edge_args is not None else Node.edge_inputs(self)

    def _backward(self, grads):
        if (len(grads) != 1 or grads[0] is None) and self._materialize_grads:
            for i, g in enumerate(grads):
                if g is None and self._out_meta[i][1] is not None:  # (a non-tensor output gets None)
                    grads[i] = Tensor._make(np.zeros(*self._out_meta[i]))
        fn = self._backward_impl or _user_backward(self._forward_cls)
        out = fn(self, grads[0]) if len(grads) == 1 else fn(self, *grads)  # (a star-call costs a plain call more)
        out = out if type(out) is tuple else (out,)
        return out if self._edge_args is None else _edge_grads(self, out)

    def _release(self):
        saved = self._saved
        if saved:
            for s in saved:
                s.free()
            if NONE_SAVED in saved:  # (torch still reads a tensor it never saved as None)
                self._never_saved = [s is NONE_SAVED for s in saved]
        self._saved = None



BackwardCFunction = BackwardFunction  # torch's name, for isinstance checks


def _saved_properties(names, values):
    """torch's grad_fn._saved_<name> (and _raw_saved_<name> for a saved tensor) as properties of
    the node class. (Properties rather than a __getattr__: a class with __getattr__ makes every
    attribute read of every node slower.)"""
    props = {}
    for name in (*names, *values):
        props["_saved_" + name] = property(lambda node, _name=name: _saved_attribute(node, _name, False))
        if name in names:
            props["_raw_saved_" + name] = property(lambda node, _name=name: _saved_attribute(node, _name, True))
    return props


def _saved_attribute(node, name, raw):
    """grad_fn._saved_self: the saved tensor that the op's `_saved_names` calls "self" (raises
    once freed, as torch), or a ctx value of that name (e.g. _saved_exponent). _raw_saved_self:
    the SavedTensor itself, whose register_hooks(pack, unpack) changes how it is stored."""
    names = node._saved_names
    if name in names:
        i = names.index(name)
        saved = node._saved
        if saved is None:
            never = node.__dict__.get("_never_saved", ())
            if i < len(never) and never[i]:  # (a tensor torch's node left undefined reads as None, freed or not)
                return NONE_SAVED if raw else None
            if raw:
                return _FREED_RAW
            raise RuntimeError(FREED_MESSAGE)
        if i < len(saved):
            return saved[i] if raw else saved[i].unpack(node)
        return NONE_SAVED if raw else None
    if name in node._saved_values and not raw:
        attr = node._saved_values[name]
        if attr is None:  # a tensor torch's node leaves undefined (t * 2 saves no self)
            return None
        if type(attr) is WrappedNumber:
            if node._saved is None:
                raise RuntimeError(FREED_MESSAGE)
            return Tensor._make(np.asarray(getattr(node, attr)))  # (int64, float64, complex128 or bool, as torch)
        if type(attr) is SavedList:
            return _saved_list(node, getattr(node, attr))
        return getattr(node, attr)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '_{'raw_' if raw else ''}saved_{name}'")


class WrappedNumber(str):
    """In an op's `_saved_values`: the ctx attribute holding a Python number that torch's node saves
    as a 0-d tensor, `(t * 2).grad_fn._saved_other` being tensor(2). Read as that tensor, and freed
    with the node's saved tensors."""


class SavedList(str):
    """In an op's `_saved_values`: the ctx attribute holding, for each entry of a list torch's node
    saves (IndexBackward0's `_saved_indices`), None or the position of that tensor among what the
    op passed to save_for_backward. Read as a tuple of tensors and Nones; raises once freed."""


def _saved_list(node, slots):
    if all(k is None for k in slots):
        return tuple(slots)
    if node._saved is None:
        raise RuntimeError(FREED_MESSAGE)
    return tuple(None if k is None else node._saved[k].unpack(node) for k in slots)


class _FreedSaved(SavedTensor):
    def __init__(self):
        self.freed, self.unpack_hook = True, None


_FREED_RAW = _FreedSaved()


def _pack_order(names):
    """The order in which torch's node saves (and pack hooks see) the tensors of these names: its inputs by name
    (other before self, exponent before self), then its results."""
    return tuple(sorted(range(len(names)), key=lambda i: (names[i].startswith("result"), names[i])))


def _user_backward(fc):
    """A custom Function defines backward or vjp (torch accepts either, not both)."""
    if fc.backward is not Function.backward and fc.vjp is not Function.vjp and fc.vjp is not fc.backward:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    return fc.vjp if fc.vjp is not Function.vjp else fc.backward


class Function:
    """Base class of every differentiable op.

    Subclasses define static `forward(ctx, *args)` and `backward(ctx, *grads)` (and
    optionally `setup_context(ctx, inputs, output)` and `jvp(ctx, *tangents)`), then call
    `apply`. backward returns one gradient (or None) per positional input of forward.
    Built-in ops set `_numpy_forward`: their forward receives numpy arrays, not Tensors.
    `_saved_names` (torch's names of the tensors saved for backward, in order) and
    `_saved_values` (names of ctx attributes; None for a tensor torch leaves undefined, a
    WrappedNumber for a number torch saves as a tensor, a SavedList for a list of saved tensors)
    give `grad_fn._saved_<name>`.
    """

    _numpy_forward = False
    _grad_fn_name = None
    _edges = None                # the arguments with an edge, where torch's op differs from "the tensors": the
                                 # number of x * 2 has one, the condition of where(c, x, y) none
    _saved_names = ()
    _saved_values = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_grad_fn_name") or cls.__name__ + "Backward"
        cls._has_setup_context = cls.setup_context is not Function.setup_context
        cls._pack_order = _pack_order(cls._saved_names)
        attrs = {"_forward_cls": cls, "__module__": "builtins", "__slots__": (),  # (type(node): <class 'SumBackward0'>)
                 "_saved_names": cls._saved_names, "_saved_values": cls._saved_values,
                 **_saved_properties(cls._saved_names, cls._saved_values)}
        if cls.backward is not Function.backward and cls.vjp is Function.vjp:  # (else: resolved when it runs)
            attrs["_backward_impl"] = staticmethod(cls.backward)
        if "::" in name:  # torch's C++ nodes: name() "torch::autograd::CopySlices", class CopySlices
            attrs["name"] = lambda self, _name=name: _name
            name = name.rsplit("::", 1)[1]
        if not cls.__module__.startswith("microtorch."):  # a user's Function: its node is a Python class of torch's
            attrs.update(__module__=__name__, __repr__=object.__repr__)  # module (<...function.XBackward object>)
        cls._backward_cls = type(name, (BackwardFunction,), attrs)

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      f"error in a future version of PyTorch. ({type(self).__name__}.apply(...))", DeprecationWarning,
                      stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch."
            f"autograd.Function) (call {type(self).__name__}.apply(...), not {type(self).__name__}()(...))")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                  "to use it with forward mode AD.")

    # torch.func's requirements of a Function written in Python (microtorch.func checks them): a setup_context
    # under any transform; under vmap, a vmap staticmethod or generate_vmap_rule = True
    generate_vmap_rule = False
    _transform_checked = True  # (False: microtorch's stand-in for one of torch's C++ nodes, which torch.func runs)

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap staticmethod "
                                  "or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if _interceptors:  # forward-mode AD or vmap is active
            for fn in _interceptors:
                result = fn(cls, args, kwargs)
                if result is not NotImplemented:
                    return result
        return run(cls, args, kwargs)

    vjp = backward


def run(cls, args, kwargs, ctx=None):
    """Function.apply, in five steps (forward-mode AD passes its own ctx):

    (a) make the context: the node-to-be, told which inputs need a gradient;
    (b) run forward and wrap its results as Tensors;
    and only if a node is recorded (grad mode on, an input requires grad):
    (c) link the edges: the node points at the nodes of its inputs;
    (d) mark the outputs: they require grad and have the node as grad_fn;
    (e) save what forward handed to save_for_backward, with its version.
    """
    if cls._has_setup_context and not cls._numpy_forward:
        # as torch: forward's keyword and default arguments become positional inputs
        args, kwargs = _bind_args(cls, args, kwargs), {}
    ctx, record, arrays = _make_ctx(cls, args, ctx)           # (a)
    out = _run_forward(cls, ctx, args, arrays, kwargs)        # (b)
    if record:
        outs = out if type(out) is tuple else (out,)
        _link_edges(cls, ctx, args)                           # (c)
        _mark_outputs(cls, ctx, args, outs)                   # (d)
        if ctx._to_save:
            _save(cls, ctx, args, outs)                       # (e)
        if anomaly_mode.enabled:
            anomaly_mode.note_creation(ctx)
        if _hooks._listeners:
            _hooks.emit(_hooks.NodeCreated(ctx, tuple(args), tuple(o for o in outs if isinstance(o, Tensor)),
                                           _peek_saved(ctx), dict(kwargs)))
    return out


# Tuples that many nodes hold equal, one object for all: needs_input_grad, e.g. (True, False), and
# the shape and dtype of an output (under the key (shape, dtype)). Python's garbage collector visits
# every container a node keeps, and runs more often the more of them are made: on a 20,000-op chain
# its collections were a fifth of the forward pass; sharing these halves them (and spares that chain
# a full collection of the heap).
_shared = {}


def _share(key, value):
    """Remember value under key for the next nodes (the table is emptied when it grows large)."""
    if len(_shared) > 4096:
        _shared.clear()
    _shared[key] = value
    return value


def _make_ctx(cls, args, ctx):
    """(a) The ctx, with needs_input_grad (forward sees it under no_grad too, as in torch);
    whether to record a node; and the arguments with tensors replaced by their arrays, which
    built-in ops compute on."""
    needs, arrays = [], []
    for a in args:
        if isinstance(a, Tensor):
            needs.append(a._requires_grad)
            arrays.append(a._data)
        else:
            needs.append(False)
            arrays.append(a)
    needs = tuple(needs)
    if ctx is None:
        ctx = cls._backward_cls()
    ctx._seq, ctx._saved = next(_seq), ()
    ctx.needs_input_grad = _shared.get(needs) or _share(needs, needs)
    return ctx, True in needs and (grad_mode.threads_off == 0 or grad_mode._state.__dict__.get("enabled", True)), arrays


_make_tensor = Tensor._make  # (a classmethod looked up once, not on every op)


def _run_forward(cls, ctx, args, arrays, kwargs):
    """(b) forward, on the arrays for built-in ops (numpy kept quiet, see quietly), without grad
    for custom ones. Returns the output as a Tensor, or a tuple if forward returned one."""
    if cls._numpy_forward:  # (the calls without keywords spell out quietly: no empty **kwargs to forward)
        if kwargs:
            out = quietly(cls.forward, ctx, *arrays, **kwargs)
        elif _QUIET.get():  # inside another op or the engine: numpy is already quiet
            out = cls.forward(ctx, *arrays)
        else:
            out = (_quiet_local.__dict__.get("context") or _quiet_context()).run(cls.forward, ctx, *arrays)
    else:
        with grad_mode.no_grad():
            if cls._has_setup_context:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
    if ctx._dirty is None:  # the common case: one fresh array (numpy gives 0-d results as scalars)
        if type(out) is ndarray:
            return _make_tensor(out)
        if isinstance(out, generic):
            return _make_tensor(asarray(out))
    if isinstance(out, tuple):
        return _wrap_outputs(cls, ctx, args, out)
    return _wrap_outputs(cls, ctx, args, (out,))[0]


def _link_edges(cls, ctx, args):
    """(c) next_functions: one (node, output_nr) edge per input, (None, 0) where no gradient
    flows. The shape and dtype a gradient must have are read, as in torch, from the node it
    flows into (engine_checks.validate_outputs). As in torch, an argument that is not a tensor
    gets no edge, unless the op's `_edges` says otherwise (torch's op takes a tensor there: the
    number of `x * 2`), and a tensor the op does not differentiate (a condition, a mask) none."""
    edges, others = [], False
    for a in args:
        if not isinstance(a, Tensor):
            edges.append(NOT_A_TENSOR)
            others = True
        elif not a._requires_grad:
            edges.append(_NO_EDGE)
        elif a.grad_fn is not None:
            edges.append((a.grad_fn, a._output_nr))
        else:
            edges.append((accumulator(a), 0))
    rule = cls._edges
    if rule is None and others or rule is not None and len(rule) != len(edges):
        edges = _keep_edges(rule, ctx, edges)
    ctx.next_functions = tuple(edges)


def _keep_edges(rule, ctx, edges):
    """The edges torch's node has, and the positions of their arguments (ctx._edge_args)."""
    if rule is None:
        keep = tuple(i for i, e in enumerate(edges) if e is not NOT_A_TENSOR)
    else:
        keep = tuple(i for i in rule if i < len(edges))
    ctx._edge_args = keep
    return [edges[i] for i in keep]


def _edge_grads(node, out):
    """backward returns one gradient per argument of forward; the node's edges take those of
    their arguments. A custom Function's other results must be None (torch's errors)."""
    n = len(node.needs_input_grad)
    if len(out) != n and not (len(out) > n and all(g is None for g in out[n:])):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {n}, got "
                           f"{len(out)}): return one gradient (or None) per input of forward")
    keep = node._edge_args
    if not node._forward_cls._numpy_forward:
        for i, g in enumerate(out[:n]):
            if g is not None and i not in keep:
                raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
    return tuple(out[i] for i in keep)


_NO_EDGE = (None, 0)
# The same edge for an argument that is not a tensor, told apart by identity (built at run time: equal
# constant tuples are one object): a custom backward may not return a gradient for it.
NOT_A_TENSOR = tuple([None, 0])


def _mark_outputs(cls, ctx, args, outs):
    """(d) Floating outputs (but not those marked non-differentiable) require grad and get the
    node as grad_fn; the shape and numpy dtype of every output is kept to materialize None grads."""
    nondiff = ctx._non_differentiable
    if len(outs) == 1 and cls._numpy_forward and nondiff is None and ctx._dirty is None and type(outs[0]) is Tensor:
        out = outs[0]  # the common case: one fresh result of a built-in op
        data = out._data
        key = (data.shape, data.dtype)
        ctx._out_meta = _shared.get(key) or _share(key, (key,))
        if key[1].kind in "fc":
            out._requires_grad, out.grad_fn = True, ctx  # (its _output_nr is 0 already)
        else:
            out._requires_grad = False
        return
    meta, dirty = [], ctx._dirty_tensors
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(_NOT_A_TENSOR)
            continue
        meta.append((o._data.shape, o._data.dtype))
        if o._data.dtype.kind not in "fc" or (nondiff and any(o is n or o._data is n for n in nondiff)):
            o._requires_grad = False
            continue
        if dirty and o.grad_fn is None and o._requires_grad and any(o is t for t in dirty):
            raise RuntimeError(
                f"a leaf Variable that requires grad has been used in an in-place operation. ({cls.__name__} "
                "marked it dirty: do it under `with microtorch.no_grad():` as optimizers do, or on a clone.)")
        o._requires_grad = True
        o.grad_fn = ctx
        o._output_nr = i
    ctx._out_meta = tuple(meta)
    if len(outs) != 1:
        ctx._num_outputs = len(outs)
    if dirty or not cls._numpy_forward:
        views.outputs_recorded(ctx, outs, dirty, cls.__name__, not cls._numpy_forward)


_NOT_A_TENSOR = ((), None)
INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                   "in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                   "tensor and use it in autograd, or use `microtorch.no_grad()` instead of `microtorch.inference_mode()`.")


def _save(cls, ctx, args, outs):
    """(e) SavedTensors for what forward passed to save_for_backward: an output of this node,
    an input, or a constant the op made itself (a mask, a scalar). Pack hooks see them in
    torch's order (_pack_order); they keep their places."""
    order = cls._pack_order if _hooks.saved_hooks_open and len(cls._pack_order) == len(ctx._to_save) else None
    saved, taken = [], []
    for k, s in enumerate(ctx._to_save if order is None else [ctx._to_save[i] for i in order]):
        if s is None:
            saved.append(NONE_SAVED)
            continue
        if not cls._numpy_forward and not isinstance(s, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument "
                            f"{k if order is None else order[k]} is of type {type(s).__name__} ({cls.__name__}: keep "
                            "other values as ctx attributes)")
        out = _find(outs, s)
        if out is not None and (out.grad_fn is ctx or not out._requires_grad):  # (an output: one of indices too,
            saved.append(SavedTensor(out, out.grad_fn is ctx))                 # whose in-place change then shows)
            continue
        t = _find(args, s, taken, k if order is None else order[k])
        if t is None:
            t = s if isinstance(s, Tensor) else Tensor._make(np.asarray(s))
        if t._inference:
            raise RuntimeError(INFERENCE_SAVED)
        taken.append(t)
        saved.append(SavedTensor(t, False))
    ctx._saved = saved if order is None else [saved[order.index(i)] for i in range(len(order))]
    del ctx._to_save  # (back to the class-level None: nothing of forward's stays in the node's dict)


def _find(tensors, obj, taken=(), place=-1):
    """The tensor among `tensors` that is obj or holds the array obj. Where several hold it (x and x.detach()), the
    one at `place` (the saved slot's: built-in ops save their arguments' arrays in the arguments' places), else the
    first not yet `taken`."""
    if 0 <= place < len(tensors) and isinstance(tensors[place], Tensor) and tensors[place]._data is obj:
        return tensors[place]
    found = None
    for a in tensors:
        if isinstance(a, Tensor) and (a is obj or a._data is obj):
            if a is obj or not _taken(a, taken):
                return a
            found = found or a
    return found


def _taken(a, taken):
    for t in taken:
        if t is a:
            return True
    return False


def _bind_args(cls, args, kwargs):
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        import inspect
        sig = cls._forward_signature = inspect.signature(cls.forward)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def _peek_saved(ctx):
    """The saved tensors for the NodeCreated event, without running unpack hooks."""
    return tuple(s.packed if getattr(s, "unpack_hook", None) is not None else s.unpack(ctx) for s in ctx._saved)


def _wrap_outputs(cls, ctx, args, outs):
    """Turn forward's results into Tensors; dirty (in-place) inputs are returned as themselves."""
    dirty_tensors = []
    for d in ctx._dirty or ():
        t = _find(args, d)
        if t is None:
            import warnings
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
                          f"been mutated should be passed to ctx.mark_dirty() ({cls.__name__}).", UserWarning,
                          stacklevel=5)
            continue
        dirty_tensors.append(t)
        t._version_counter[0] += 1
    ctx._dirty_tensors = dirty_tensors
    return tuple([_wrap(cls, o, args, dirty_tensors) for o in outs])


def _wrap(cls, o, args, dirty_tensors):
    if isinstance(o, np.ndarray) or cls._numpy_forward and isinstance(o, (np.generic, int, float, complex)):
        t = next((d for d in dirty_tensors if d._data is o), None)
        if t is not None:
            return t
        return Tensor._make(o if isinstance(o, np.ndarray) else np.asarray(o))  # (a meta array stays one)
    if isinstance(o, Tensor) and not any(o is d for d in dirty_tensors) and any(o is a for a in args):
        # returning an input unchanged: the output is a new tensor on the same data, a view
        return views.mark_view(Tensor._make(o._data), o)
    return o


def once_differentiable(fn):
    """Decorator for a backward that cannot itself be differentiated: under create_graph its
    results require grad only through a node that raises if backward reaches it."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            out = fn(ctx, *grads)
        if not grad_mode.is_grad_enabled():
            return out
        if not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        wrapped = _DelayedError.apply(*[_fake_leaf(o) for o in outs])  # (as torch: one node, one edge per output)
        return (wrapped if len(outs) > 1 else (wrapped,)) if isinstance(out, tuple) else wrapped
    return wrapper


def _fake_leaf(t):
    """t detached as a leaf that requires grad: the Error node's edges lead to such leaves, and end there."""
    if not isinstance(t, Tensor):
        return t
    leaf = t.detach()
    leaf.requires_grad_(True)
    return leaf


class _DelayedError(Function):
    _grad_fn_name = "torch::autograd::Error"
    _transform_checked = False
    _edges = tuple(range(256))  # an edge per output it stands for, a None one too (torch's node has one each)

    @staticmethod
    def forward(ctx, *outputs):
        clones = tuple(o.clone() if isinstance(o, Tensor) else o for o in outputs)
        return clones if len(clones) > 1 else clones[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


__all__ = ["Function", "FunctionCtx", "BackwardFunction", "BackwardCFunction", "once_differentiable", "Node",
           "SavedTensor", "short_name"]
