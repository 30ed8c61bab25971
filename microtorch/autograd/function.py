"""Function, its ctx, and the nodes of the backward graph.

Every differentiable op, built in or written by a student, is a `Function` with `forward`
and `backward`. Calling `MyFunc.apply(*args)` runs forward and, when grad mode is on and an
input requires grad, records a node: an instance of `MyFuncBackward`, which is also the `ctx`
that forward saw. The node's `next_functions` point at the nodes of its inputs, so the graph
is the chain of `grad_fn`s that backward walks.
"""
import itertools
import weakref

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import anomaly_mode, grad_mode, graph

_seq = itertools.count()
_ACCUMULATE_GRAD_SEQ = 2 ** 63  # AccumulateGrad runs as soon as it is ready, as in torch

# forward-mode AD and vmap install themselves here (func/ and forward_ad.py)
_apply_hooks = []


class Node:
    """A node of the backward graph: `name()`, `next_functions`, hooks, metadata."""

    _num_outputs = 1

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        if self.__dict__.get("_metadata") is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node runs; may return new grad_inputs."""
        return graph.add_hook(self._hook_dict("_post_hooks"), fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""
        return graph.add_hook(self._hook_dict("_pre_hooks"), fn)

    def _hook_dict(self, attr):
        d = self.__dict__.get(attr)
        if d is None:
            d = {}
            setattr(self, attr, d)
        return d

    def _register_tensor_hook(self, output_nr, fn):
        return graph.add_hook(self._hook_dict("_tensor_pre_hooks"), (output_nr, fn))

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads):
        return self._backward(list(grads))


# torch exposes Node in torch.autograd.graph for isinstance checks
graph.Node = Node


class FunctionCtx:
    """What forward can do with ctx: save tensors, mark outputs, read needs_input_grad."""

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

    @property
    def saved_tensors(self):
        saved = self.__dict__.get("_saved")
        if saved is None:
            if self.__dict__.get("_released"):
                raise RuntimeError(_FREED_MESSAGE)
            return ()
        return tuple([s.unpack(self) for s in saved])


_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    An output is kept as its data plus (node, output_nr) rather than the Tensor itself, so
    that output -> grad_fn -> saved output is not a reference cycle (torch does the same).
    """

    __slots__ = ("tensor", "data", "counter", "version", "output_nr", "requires_grad", "packed", "unpack_hook")

    def __init__(self, tensor, is_output):
        self.counter = tensor._version_counter
        self.version = self.counter[0]
        self.unpack_hook = None
        hooks = graph._saved_hooks.__dict__.get("stack")
        if hooks:
            pack, self.unpack_hook = hooks[-1]
            with grad_mode.no_grad():  # as in torch: the pack hook does not record a graph
                self.packed = pack(tensor)
            # what unpack needs to reattach the history (torch keeps grad_fn, not the tensor)
            self.tensor = self.data = None
            self.output_nr = tensor._output_nr if is_output else -1
            self.requires_grad = tensor._requires_grad
            if tensor._requires_grad and tensor.grad_fn is None:
                self.data = (None, 0, _accumulator(tensor))
            elif not is_output:
                self.data = (tensor.grad_fn, tensor._output_nr, None)
            else:
                self.data = (None, tensor._output_nr, None)
        elif is_output:
            self.tensor = None
            self.data = tensor._data
            self.output_nr = tensor._output_nr
            self.requires_grad = tensor._requires_grad
        else:
            self.tensor = tensor
            self.data = None
            self.output_nr = -1

    def unpack(self, node):
        if self.unpack_hook is not None:  # torch does not check versions behind saved-tensor hooks
            return self._unpack_hooked(node)
        if self.counter[0] != self.version:
            raise RuntimeError(self.version_error(node))
        if self.tensor is not None:
            return self.tensor
        t = Tensor._make(self.data)
        t._version_counter = self.counter
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
        grad_fn, output_nr, acc = self.data
        t = Tensor._make(out._data)
        t._version_counter = out._version_counter
        t._requires_grad = True
        if self.output_nr >= 0:
            t.grad_fn, t._output_nr = node, self.output_nr
        elif grad_fn is not None:
            t.grad_fn, t._output_nr = grad_fn, output_nr
        else:  # a leaf: route to its AccumulateGrad
            t._accumulator, t._keep_accumulator = weakref.ref(acc), acc
        return t

    def version_error(self, node):
        if self.data is not None and not isinstance(self.data, tuple):
            shape, type_name = self.data.shape, Tensor._make(self.data).type()
        else:
            shape, type_name = self.tensor._data.shape, self.tensor.type()
        where = ""
        if self.output_nr >= 0:
            where = f", which is output {self.output_nr} of {_short_name(node)},"
        elif self.tensor is not None and self.tensor.grad_fn is not None:
            where = f", which is output {self.tensor._output_nr} of {_short_name(self.tensor.grad_fn)},"
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


def _short_name(node):
    """'MulBackward0' -> 'Mul', as torch names nodes in the version error."""
    name = node.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 and (name[i + 8:].isdigit() or not name[i + 8:]) else name


class BackwardFunction(FunctionCtx, Node):
    """The node recorded by `Function.apply`; it is the `ctx` forward received."""

    _forward_cls = None
    _materialize_grads = True

    def __init__(self):
        self._seq = next(_seq)

    def _backward(self, grads):
        if self._materialize_grads:
            for i, g in enumerate(grads):
                if g is None:
                    shape, dtype = self._out_meta[i]
                    if dtype is not None:  # a non-tensor output gets None
                        grads[i] = Tensor._make(np.zeros(shape, dtype.np))
        fc = self._forward_cls
        fn = fc.backward
        if fn is Function.backward or fc.vjp is not Function.vjp:
            fn = _user_backward(fc)
        out = fn(self, *grads)
        return out if type(out) is tuple else (out,)

    def _release(self):
        d = self.__dict__
        d["_saved"] = None
        d["_released"] = True


BackwardCFunction = BackwardFunction  # torch's name, for isinstance checks


def _user_backward(fc):
    """A custom Function defines backward or vjp (torch accepts either, not both)."""
    if fc.backward is not Function.backward and fc.vjp is not Function.vjp and fc.vjp is not fc.backward:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    return fc.vjp if fc.vjp is not Function.vjp else fc.backward


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient into `variable.grad`."""

    _seq = _ACCUMULATE_GRAD_SEQ
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def _release(self):
        pass


def _accumulator(t):
    """The (cached) AccumulateGrad node of a leaf that requires grad."""
    ref = t._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._accumulator = weakref.ref(node)
    return node


def _edge(a):
    if isinstance(a, Tensor) and a._requires_grad:
        if a.grad_fn is not None:
            return (a.grad_fn, a._output_nr)
        return (_accumulator(a), 0)
    return (None, 0)


class Function:
    """Base class of every differentiable op.

    Subclasses define static `forward(ctx, *args)` and `backward(ctx, *grads)` (and
    optionally `setup_context(ctx, inputs, output)` and `jvp(ctx, *tangents)`), then call
    `apply`. backward returns one gradient (or None) per positional input of forward.
    """

    # Built-in ops set this: their forward receives numpy arrays instead of Tensors.
    _numpy_forward = False
    _grad_fn_name = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_grad_fn_name") or cls.__name__ + "Backward"
        cls._has_setup_context = cls.setup_context is not Function.setup_context
        attrs = {"_forward_cls": cls, "__module__": cls.__module__}
        if "::" in name:  # torch's C++ nodes: name() "torch::autograd::CopySlices", class CopySlices
            attrs["name"] = lambda self, _name=name: _name
            name = name.rsplit("::", 1)[1]
        cls._backward_cls = type(name, (BackwardFunction,), attrs)

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself: "
                      f"{type(self).__name__}.apply(...).", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            f"function with static forward method: {type(self).__name__}.apply(...), not "
            f"{type(self).__name__}()(...).")

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

    @classmethod
    def apply(cls, *args, **kwargs):
        if _apply_hooks:
            for hook in _apply_hooks:
                result = hook(cls, args, kwargs)
                if result is not NotImplemented:
                    return result
        return _apply(cls, args, kwargs)

    vjp = backward


def _apply(cls, args, kwargs, ctx=None):
    if cls._has_setup_context and not cls._numpy_forward:
        # as torch: forward's keyword and default arguments become positional inputs
        args, kwargs = _bind_args(cls, args, kwargs), {}
    # which inputs require grad (forward sees it under no_grad too, as in torch); a node is
    # recorded only if grad mode is on and one of them does
    needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
    needs_grad = True in needs and grad_mode.is_grad_enabled()
    if ctx is None:  # forward-mode AD passes its own, to run the op's jvp with it
        ctx = cls._backward_cls()
    ctx.needs_input_grad = needs

    if cls._numpy_forward:
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        out = cls.forward(ctx, *raw, **kwargs)
    else:
        with grad_mode.no_grad():
            if cls._has_setup_context:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)

    single = not isinstance(out, tuple)
    d = ctx.__dict__
    if single and "_dirty" not in d and (type(out) is np.ndarray or isinstance(out, np.generic)):
        # the common case: one fresh array (numpy returns 0-d results as scalars)
        outs = (Tensor._make(out if type(out) is np.ndarray else np.asarray(out)),)
        d["_dirty_tensors"] = ()
    else:
        outs = _wrap_outputs(cls, ctx, args, (out,) if single else out)
    if needs_grad:
        _record(cls, ctx, args, outs)
        if graph._listeners:
            graph.emit(graph.NodeCreated(ctx, tuple(args), tuple(o for o in outs if isinstance(o, Tensor)),
                                         _peek_saved(ctx), dict(kwargs)))
    else:
        d.pop("_to_save", None)
    return outs[0] if single else outs


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
    saved = ctx.__dict__.get("_saved") or ()
    return tuple(s.packed if getattr(s, "unpack_hook", None) is not None else s.unpack(ctx) for s in saved)


def _find_input(args, obj):
    for a in args:
        if isinstance(a, Tensor) and (a is obj or a._data is obj):
            return a
    return None


def _wrap_outputs(cls, ctx, args, outs):
    """Turn forward's results into Tensors; dirty (in-place) inputs are returned as themselves."""
    dirty = ctx.__dict__.get("_dirty") or ()
    dirty_tensors = []
    for d in dirty:
        t = _find_input(args, d)
        if t is None:
            import warnings
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
                          f"been mutated should be passed to ctx.mark_dirty() ({cls.__name__}).", UserWarning,
                          stacklevel=4)
            continue
        dirty_tensors.append(t)
        t._version_counter[0] += 1
    ctx._dirty_tensors = dirty_tensors
    wrapped = []
    for o in outs:
        if isinstance(o, np.ndarray) or cls._numpy_forward and isinstance(o, (np.generic, int, float, complex)):
            t = None
            if dirty_tensors:
                t = next((d for d in dirty_tensors if d._data is o), None)
            wrapped.append(t if t is not None else Tensor._make(np.asarray(o)))
        elif isinstance(o, Tensor):
            if any(o is d for d in dirty_tensors):
                wrapped.append(o)
            elif any(o is a for a in args):
                # returning an input unchanged: the output is a new tensor on the same data, a view
                from ..ops.inplace import mark_view
                wrapped.append(mark_view(Tensor._make(o._data), o))
            else:
                wrapped.append(o)
        else:
            wrapped.append(o)
    return tuple(wrapped)


def _record(cls, ctx, args, outs):
    from_np = _dtype._FROM_NP
    edges = []
    in_meta = []
    for a in args:
        if isinstance(a, Tensor):
            in_meta.append((a._data.shape, from_np[a._data.dtype]))
            if a._requires_grad:
                edges.append((a.grad_fn, a._output_nr) if a.grad_fn is not None else (_accumulator(a), 0))
                continue
        else:
            in_meta.append(None)
        edges.append((None, 0))
    d = ctx.__dict__
    d["next_functions"] = tuple(edges)
    d["_in_meta"] = in_meta
    nondiff = d.get("_non_differentiable") or ()
    dirty = d["_dirty_tensors"]
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(((), None))
            continue
        dt = from_np[o._data.dtype]
        meta.append((o._data.shape, dt))
        if (nondiff and any(o is n or o._data is n for n in nondiff)) or not (dt.is_floating_point or dt.is_complex):
            o._requires_grad = False
            continue
        if dirty and o.grad_fn is None and o._requires_grad and any(o is t for t in dirty) \
                and grad_mode.is_grad_enabled():
            raise RuntimeError(
                f"a leaf Variable that requires grad has been used in an in-place operation. ({cls.__name__} "
                "marked it dirty: do it under `with microtorch.no_grad():` as optimizers do, or on a clone.)")
        o._requires_grad = True
        o.grad_fn = ctx
        o._output_nr = i
    if not cls._numpy_forward:  # outputs that are views of inputs: torch forbids in-place on them
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.grad_fn is ctx and o._base is not None and not any(o is t for t in dirty):
                od = o.__dict__
                od["_view_custom"] = f"Output {i} of {_short_name(ctx)}"
                od.pop("_view_nograd", None)
    if dirty:
        for t in dirty:  # a dirty view (or a base with views): rewrite the history around it
            if t.grad_fn is ctx and (t._base is not None or t.__dict__.get("_views")):
                from ..ops.inplace import rebase_dirty
                rebase_dirty(t, cls.__name__)
    d["_out_meta"] = meta
    d["_num_outputs"] = len(outs)
    to_save = d.get("_to_save")
    if to_save:
        saved = []
        for k, s in enumerate(to_save):
            if s is None:
                saved.append(_NONE_SAVED)
                continue
            if not cls._numpy_forward and not isinstance(s, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} is of type "
                                f"{type(s).__name__} ({cls.__name__}: keep other values as ctx attributes)")
            out = None
            for o in outs:
                if isinstance(o, Tensor) and (o is s or o._data is s):
                    out = o
                    break
            if out is not None and out.grad_fn is ctx:
                saved.append(SavedTensor(out, True))
                continue
            t = _find_input(args, s)
            if t is None:  # a constant the op made itself (e.g. a mask or a scalar)
                t = s if isinstance(s, Tensor) else Tensor._make(np.asarray(s))
            saved.append(SavedTensor(t, False))
        d["_saved"] = saved
        d["_to_save"] = None
    if anomaly_mode._state.__dict__.get("enabled"):
        ctx._anomaly_trace = anomaly_mode.user_stack()
        parent = anomaly_mode._state.__dict__.get("current_node")
        if parent is not None:  # created by the backward of `parent` (create_graph=True)
            ctx._anomaly_parent = parent


class _NoneSaved:
    def unpack(self, node):
        return None


_NONE_SAVED = _NoneSaved()


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
        wrapped = tuple(_DelayedError.apply(o, *grads) if isinstance(o, Tensor) else o for o in outs)
        return wrapped if isinstance(out, tuple) else wrapped[0]
    return wrapper


class _DelayedError(Function):
    _grad_fn_name = "torch::autograd::Error"

    @staticmethod
    def forward(ctx, x, *grads):
        return x.clone()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")
