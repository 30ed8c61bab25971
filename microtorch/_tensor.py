"""Tensor: a numpy array plus the autograd metadata torch keeps beside it.

Tensor is the bottom of microtorch: this file imports no other layer. The layers above add
their methods when they load: ops/ the operators and op methods (`+`, `sum`, `clone`, `add_`,
each a one-line call into a differentiable `Function`), the engine `backward`. `_version_counter` is a one-element list shared by a tensor and its views,
bumped by every in-place op, so that backward can tell a saved tensor was modified.
"""
import copy
import itertools
import warnings
import weakref

import numpy as np

from . import _dtype, _inference, _meta
from ._quiet import quietly
from ._user_line import warn_at_user_line, warn_once
from ._dtype import get_default_dtype, result_type

_NUMERIC_TYPES = (int, float, complex, bool, np.number, np.bool_)
_new = object.__new__


def _grad_mode():
    """autograd's grad_mode module (above the core, loaded by the time a tensor asks: a lookup)."""
    from .autograd import grad_mode
    return grad_mode


def _inference_here():
    """This thread is inside inference_mode."""
    return _grad_mode().is_inference_mode_enabled()


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `Size([2, 3])`."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.Size'>)

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for i, n in enumerate(sizes):
            if not isinstance(n, (int, np.integer, Tensor)) or isinstance(n, bool):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(n).__name__}')")
        if all(type(n) is int for n in sizes):
            return super().__new__(cls, sizes)
        return super().__new__(cls, [int(n) for n in sizes])  # (numpy ints and 0-d tensors: their ints)

    def __repr__(self):
        return f"microtorch.Size({list(self)})"

    # (slices, sums and repeats of a Size are Sizes, as torch's)
    def __getitem__(self, key):
        part = tuple.__getitem__(self, key)
        return Size(part) if isinstance(key, slice) else part

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other))) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


_plain_size = tuple.__new__


class Tensor:
    __module__ = "microtorch"  # (as torch's: type(x) prints <class 'microtorch.Tensor'>, the name it is used by)
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_output_nr", "_version_counter",
                 "__dict__", "__weakref__")
    # Rarely set: class-level defaults, so that creating a tensor stays cheap.
    _grad = None
    _base = None
    _retains_grad = False
    _backward_hooks = None
    _post_acc_hooks = None
    _accumulator = None
    _fw_grads = None
    _keep_accumulator = None   # a strong reference to the AccumulateGrad an alias routes to
    # views (autograd/views.py): the root base's weak list of its views, and how a view was made
    _views = None
    _views_limit = 16
    _view_custom = None        # True: returned by a custom Function (torch refuses an in-place op on it)
    _view_nograd = False       # made under no_grad
    _grad_from_base = False    # requires grad only because its base does (made under no_grad): no gradient reaches it
    _inference = False         # made inside inference_mode (or a view of such a tensor): torch's inference tensor
    _view_multi = False        # one of several views returned together (split, unbind)
    _view_replay = None        # its replay steps from its base (the view ops, its place in memory): how it is rebuilt
    __array_priority__ = 1000  # numpy defers to Tensor's operators (ndarray * Tensor -> Tensor)

    def __new__(cls, *args, **kwargs):  # (Tensor(t) of a tensor t: its alias, see _tensor_methods._legacy_constructor)
        return object.__new__(cls)

    def __init__(self, *args, requires_grad=False, **kwargs):
        # torch's legacy constructor (legacy_array): Tensor(sizes...) or Tensor(data), always the default float
        # dtype (microtorch.tensor(...) infers the dtype and is the one to use)
        if getattr(self, "_data", None) is not None:  # (Tensor(t): the alias __new__ made, nothing left to do)
            return
        made = legacy_array(get_default_dtype(), "Tensor", args, kwargs)
        _init_slots(self, made._data if isinstance(made, Tensor) else made)
        self._requires_grad = False
        self.requires_grad = requires_grad

    @classmethod
    def _make(cls, data, requires_grad=False):
        """Wrap an ndarray without copying or checks (the ops' fast path)."""
        t = _new(cls)
        t._data = data
        t._requires_grad = requires_grad
        t.grad_fn = None
        t._output_nr = 0
        t._version_counter = [0]
        if _inference.threads and _inference_here():
            t._inference = True
        return t

    # ---- metadata ---------------------------------------------------------------------
    @property
    def dtype(self):
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def shape(self):
        return _plain_size(Size, self._data.shape)  # (numpy's ints: no checks)

    def size(self, dim=None, **axis):
        if axis:  # (numpy's name for dim, which torch's parser takes too)
            dim = _axis_for_dim("size", dim, axis)
        if dim is None:
            return _plain_size(Size, self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def device(self):
        return _CPU if type(self._data) is not _meta.MetaArray else device("meta")

    @property
    def is_meta(self):
        return type(self._data) is _meta.MetaArray

    @property
    def is_cuda(self):
        return False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for hook in subclass_hooks:  # (__torch_function__'s dispatch registers here: a user's subclass turns it on)
            hook(cls)

    @property
    def layout(self):
        return _dtype.strided

    is_sparse = False  # (a sparse COO tensor is microtorch.sparse's subclass)
    _sparse = False

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        """The bytes of the tensor's elements (numel * itemsize; an expanded tensor counts each element it shows)."""
        return self._data.size * self._data.itemsize

    def stride(self, dim=None, **axis):
        if axis:
            dim = _axis_for_dim("stride", dim, axis)
        a = self._data
        if a.size == 0 and not any(a.strides) and a.flags.owndata:  # (numpy zeroes a new empty array's strides;
            # torch's count each 0 as 1. An expanded one keeps its zeros, as torch's)
            strides = tuple(int(np.prod([max(n, 1) for n in a.shape[d + 1:]])) for d in range(a.ndim))
        else:
            strides = tuple(s // a.itemsize for s in a.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim, "stride")]

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    @property
    def _version(self):
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    # ---- autograd metadata -------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self.grad_fn is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return
        if flag and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients (this one is "
                f"{self.dtype}); convert it first, e.g. x = x.float() or x.double()")
        if flag and self._inference and not _inference_here():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if self._grad_from_base:  # as torch: such a view requires grad while its base does, whatever its own flag;
            if not flag:          # set on it, the flag makes it a leaf of its own, whose .grad fills
                return
            self._grad_from_base = False
        self._requires_grad = flag
        if self._views:
            _views_follow(self, flag)

    def requires_grad_(self, requires_grad=True):
        from .autograd import extension  # (the core's extension point: loaded by now, a lookup)
        transforms = extension.registered()
        if transforms is not None:  # torch.func refuses it inside a transformed function
            transforms.requires_grad_called()
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the "
                ".grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf "
                "Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                "instead. See github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: grad is "
                                   f"{list(value.shape)}, tensor is {list(self.shape)}")
            expected = self.__dict__.get("_grad_dtype", self.dtype)   # (Tensor.grad_dtype; None: any)
            if expected is not None and value.dtype is not expected:
                raise RuntimeError(f"assigned grad has data of a different type: grad is {value.dtype}, tensor's "
                                   f"grad_dtype is {expected}; cast it (.to({expected})) or set grad_dtype")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Keep `.grad` for this non-leaf after backward (a no-op on leaves)."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self.grad_fn._retain_grad(self)
        self._retains_grad = True

    def register_hook(self, hook):
        """hook(grad) runs when the gradient of this tensor is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        from .autograd._hooks import add_hook
        if self._backward_hooks is None:
            self._backward_hooks = {}
        return add_hook(self._backward_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after the gradient is accumulated into this leaf's .grad."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd._hooks import add_hook
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return add_hook(self._post_acc_hooks, hook)

    def detach(self):
        """The same data (and version counter) without history (not a view: no _base, as in torch)."""
        t = Tensor._make(self._data)
        t._version_counter = counter = self._version_counter
        if t._inference or self._inference:  # (as a view: an inference tensor's is one, a normal tensor's is not)
            t._inference = self._inference
        root = self._base if self._base is not None else self
        if root._requires_grad and len(counter) == 1:  # the counter names the tensor with history whose memory it
            counter.append(weakref.ref(root))         # counts: a change through t makes torch rebuild its views
        return t

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """The same data with a version counter of its own, outside autograd (as torch's .data)."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        value = value if isinstance(value, Tensor) else tensor(value)
        self._data = value._data

    # ---- conversions -------------------------------------------------------------------
    def numpy(self, *, force=False):
        if self._requires_grad and not force and _grad_enabled():  # (torch allows it under no_grad)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        """numpy's protocol: copy=True always copies, copy=False never does (ValueError if a
        dtype change needs one), None copies only to change the dtype. As torch's, refused for a tensor that
        requires grad while grad mode is on (np.asarray(y), plt.plot(y)): detach() it first."""
        if self._requires_grad and _grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if dtype is None or np.dtype(dtype) == self._data.dtype:
            return self._data.copy() if copy else self._data
        if copy is False:
            raise ValueError(f"Unable to avoid copy while converting a {self._data.dtype} tensor to "
                             f"{np.dtype(dtype)}: use np.asarray(t, dtype=...) or copy=None")
        return self._data.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """numpy's protocol, as torch's: a ufunc or function numpy computed on a tensor's array (np.exp(t),
        np.argmax(t)) comes back as a tensor sharing its memory; a bool result as uint8, as torch gives it."""
        array = np.asarray(array)
        return from_numpy(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar; "
                               "use .tolist() or index one element first")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def _one_element(self, op):
        if self._data.size != 1:  # torch: ValueError here, RuntimeError in item()
            raise ValueError(f"{op}(): only one element tensors can be converted to Python scalars, and this one "
                             f"has {self._data.size} (shape {list(self.shape)}); index one element first, or use "
                             ".tolist()")
        return self.item()

    def __float__(self):
        if self._requires_grad:
            _warn_scalar_with_grad()
        return float(self._one_element("float"))

    def __int__(self):
        return int(self._one_element("int"))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {list(self.shape)}); use .any() or .all()")
        return bool(self._data.reshape(()).item())

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        if self._requires_grad:
            _warn_scalar_with_grad()
        return complex(self._one_element("complex"))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        """reversed(x): x flipped along dim 0 (FlipBackward0), a 0-d tensor itself, as torch's"""
        return self if self._data.ndim == 0 else self.flip(0)

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment")
        t = type(self)._make(self._data.copy(), self._requires_grad) if type(self) is Tensor else \
            _copy_subclass(self)
        memo[id(self)] = t
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._data.copy())
        for name, value in self.__dict__.items():  # the user's attributes (not the graph's, hooks or views)
            if not hasattr(Tensor, name):
                t.__dict__[name] = copy.deepcopy(value, memo)
        return t

    def to(self, *args, **kwargs):
        """to(dtype) / to("cpu") / to(other): a converted tensor (self if nothing changes)."""
        dtype, placed = kwargs.get("dtype"), kwargs.get("device")
        if len(args) > 1 and isinstance(args[1], Tensor):
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(args[0]).__name__}, "
                            "Tensor): a tensor goes alone, to(other), or pass its dtype, to(device, other.dtype)")
        if "device" in kwargs and args and isinstance(args[0], (_dtype.dtype, Tensor)):
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(args[0]).__name__}, "
                            "device=...): a device goes first, to(device, dtype), or by keyword with dtype=")
        for a in args if placed is None else (*args, placed):  # (device= is read as a positional device is)
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (int, np.integer)) and not isinstance(a, bool):
                device_type(a)  # (an index: the accelerator's device, torch's RuntimeError here)
            elif isinstance(a, (str, device)) and device_type(a) != "cpu":
                if device_type(a) == "meta":
                    return _meta.to_meta(self if dtype is None else self.to(dtype))
                raise unavailable(a)
            elif isinstance(a, (str, device)) and type(self._data) is _meta.MetaArray:
                _meta.from_meta(self)
        fmt = kwargs.get("memory_format")
        if dtype is None or _dtype.to_dtype(dtype) is self.dtype:
            if fmt is not None:  # (a copy only if the format asked is not the one self is laid out in)
                return self._to_dtype(self.dtype, fmt)
            return self._to_dtype(self.dtype, fmt) if kwargs.get("copy") else self  # (torch's node: ToCopyBackward0)
        return self._to_dtype(_dtype.to_dtype(dtype), fmt)  # (ops/: differentiable)

    def type(self, dtype=None, non_blocking=False, *, memory_format=None):
        """x.type(): the name of x's legacy tensor class; x.type(t), t a legacy class (microtorch.DoubleTensor), its
        name ('torch.DoubleTensor') or a dtype: x converted to it (x itself when it is of that dtype already)."""
        if dtype is None:
            return f"microtorch.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        if memory_format is None:
            return self.to(legacy_type_dtype(dtype), non_blocking=non_blocking)
        return self.to(legacy_type_dtype(dtype), non_blocking=non_blocking, memory_format=memory_format)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def bool(self):
        return self.to(_dtype.bool_)

    def cfloat(self):
        return self.to(_dtype.complex64)

    def cdouble(self):
        return self.to(_dtype.complex128)

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        raise cuda_unavailable(device)

    def new_tensor(self, data, *, dtype=None, requires_grad=False):
        if data is None:  # (numpy would say int() of None, from inside tensor())
            raise TypeError("new_tensor(): 'NoneType' object cannot be interpreted as a number; pass the data, "
                            "e.g. x.new_tensor([1, 2])")
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *sizes, size=None, dtype=None, requires_grad=False):  # (x.new_zeros(2, 3) or size=(2, 3))
        return _filled(_new_size("new_zeros", sizes, size), 0, dtype or self.dtype, requires_grad)

    def new_ones(self, *sizes, size=None, dtype=None, requires_grad=False):  # (x.new_ones(2, 3) or size=(2, 3))
        return _filled(_new_size("new_ones", sizes, size), 1, dtype or self.dtype, requires_grad)

    def new_empty(self, *sizes, size=None, dtype=None, requires_grad=False):  # (x.new_empty(2, 3) or size=(2, 3))
        return _filled(_new_size("new_empty", sizes, size), 0, dtype or self.dtype, requires_grad)

    # ---- printing ------------------------------------------------------------------------
    def __repr__(self):
        from ._printing import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        # as torch: a 0-d tensor formats as its number (f"loss {loss}" prints `loss 0.25`, f"{loss:.3f}" too); any
        # other, a subclass (Parameter) or a meta tensor as object formats it: its str, and no format spec
        if self._data.ndim == 0 and type(self) is Tensor and not self.is_meta:
            return format(self.detach().item(), spec)
        return object.__format__(self, spec)


def _init_slots(t, data):
    t._data = data
    t.grad_fn = None
    t._output_nr = 0
    t._version_counter = [0]


_scalar_warned = []


def _warn_scalar_with_grad():
    """torch's warning, once per process, for float(t) or complex(t) of a tensor that requires grad in grad mode
    (the number leaves the graph: gradients do not flow through it)."""
    if not _scalar_warned and _grad_enabled():
        _scalar_warned.append(True)
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.", UserWarning, stacklevel=3)


def _grad_enabled():
    return _grad_mode().is_grad_enabled()


def _views_follow(root, flag):
    """root's requires_grad changed: its live views without a history of their own follow it (torch reads a
    view's requires_grad from its base), and like those made under no_grad, no gradient reaches them."""
    for ref in root._views:
        v = ref()
        if v is not None and v._base is root and Tensor.grad_fn.__get__(v) is None and v._data.dtype.kind in "fc" \
                and (v._grad_from_base or not v._requires_grad):
            v._requires_grad = v._grad_from_base = flag


def _rebuild(data, requires_grad):
    return Tensor._make(data, requires_grad)


def _copy_subclass(t):
    new = object.__new__(type(t))
    _init_slots(new, t._data.copy())
    new._requires_grad = t._requires_grad
    return new


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
               "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
               "complex128": "ComplexDoubleTensor"}


# ---- torch's legacy constructor: Tensor(2, 3), Tensor([1, 2]), FloatTensor(data) (_legacy_tensor_types.py) ----
def legacy_array(dtype, name, args, kwargs):
    """What the legacy constructor name(*args, **kwargs) makes, as an array of dtype: zeros of the sizes given (torch
    leaves them uninitialized), or the data converted (a numpy array already of dtype is shared, as torch shares it);
    for name(t) of a tensor, t itself, which the caller aliases."""
    sizes, data = _legacy_arguments(name, args, dict(kwargs))
    if sizes is not None:
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension {min(sizes)}: "
                               f"{list(sizes)}; sizes are counts of elements, 0 or more")
        return np.zeros(sizes, dtype.np)
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype == dtype.np:
        _no_negative_strides(data, f"{name}(): ")
        return _numpy_strides(data)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"{name}(): invalid data type '{type(data).__name__}'; pass numbers, (nested) lists of "
                        f"numbers or a numpy array")
    if not isinstance(data, (list, tuple, range, np.ndarray)):
        raise TypeError(f"{name}(): data must be a sequence (got {_type_name(data)}); pass a list such as "
                        f"{name}([{data!r}]), or sizes as ints such as {name}(2, 3)")
    try:
        return tensor(data, dtype=dtype)._data
    except (TypeError, ValueError, RuntimeError) as e:  # (tensor()'s message, naming this constructor instead)
        if type(e) not in (TypeError, ValueError, RuntimeError):  # (a subclass may need more than a message)
            raise
        raise type(e)(str(e).replace("tensor(): ", f"{name}(): ")) from None


def _legacy_arguments(name, args, kwargs):
    """(sizes, None) or (None, data or a tensor), from a legacy constructor's arguments, which torch's parser reads
    as one of: (), (*sizes), (size=...), (data), (tensor), each with device= (the CPU only)."""
    _legacy_device(name, args, kwargs.pop("device", None))
    if kwargs:
        return _legacy_keyword(name, args, kwargs)
    if not args:
        return (0,), None
    first = args[0]
    if len(args) == 1 and isinstance(first, Size):
        return tuple(first), None
    whole = isinstance(first, (int, np.integer)) and not isinstance(first, (bool, np.bool_))
    if len(args) == 1 and not whole:
        return None, first  # data, or a tensor to alias
    if not whole and (isinstance(first, (bool, np.bool_)) or _size_int(first) is None):
        raise _legacy_usage(name, args, {})  # (torch reads a leading int tensor as a size, a leading bool as none)
    sizes = tuple(_size_int(a) for a in args)
    if None in sizes:
        bad = args[sizes.index(None)]
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found element of type "
                        f"{_type_name(bad)} at pos {sizes.index(None) + 1}; pass sizes as ints, e.g. {name}(2, 3)")
    return sizes, None


def _size_int(a):
    """a as a size (an int, or a tensor of one integer), else None."""
    if isinstance(a, (int, np.integer)):
        return int(a)
    if isinstance(a, Tensor) and a.numel() == 1 and a.dtype.np.kind in "iub":
        return int(a.item())
    return None


def _legacy_keyword(name, args, kwargs):
    """The form a keyword names: size=(2, 3), data=[...] or other=tensor, given alone."""
    key, value = next(iter(kwargs.items()))
    if len(kwargs) == 1 and not args:
        if key == "size" and isinstance(value, (tuple, list)) and all(_size_int(s) is not None for s in value):
            return tuple(_size_int(s) for s in value), None
        if key == "data" or key == "other" and isinstance(value, Tensor):
            return None, value
    raise _legacy_usage(name, args, kwargs)


def _legacy_device(name, args, where):
    """torch's errors for a device= its legacy constructors refuse: any but the CPU, and any with a tensor."""
    if where is None:
        return
    if len(args) == 1 and isinstance(args[0], Tensor):
        raise RuntimeError(f"{name}(tensor, device=...): the legacy constructor given a tensor takes no device; use "
                           "microtorch.tensor(...) or microtorch.as_tensor(...) instead")
    if isinstance(where, int) and not isinstance(where, bool):
        raise RuntimeError(f"Cannot access accelerator device when none is available. ({name}(device={where}): an "
                           "index means an accelerator; microtorch runs on the CPU, leave device= out)")
    try:
        kind = device(where).type if isinstance(where, str) else getattr(where, "type", None)
    except RuntimeError as e:  # (a name that is no device's)
        raise RuntimeError(f"{name}(device={where!r}): {e}") from None
    if kind != "cpu":
        raise RuntimeError(f"{name}(): legacy constructor expects device type: cpu but device type: {kind} was "
                           "passed (microtorch runs on numpy, on the CPU: leave device= out)")


def _legacy_usage(name, args, kwargs):
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of: "
                     f"(), (*sizes), (size=tuple of ints), (data), (tensor), each with device='cpu' or none; e.g. "
                     f"{name}(2, 3) or {name}([1.0, 2.0])")


def _type_name(v):
    """v's type as torch's parser names it in a message: Tensor, float, numpy.float32."""
    if isinstance(v, Tensor):
        return "Tensor"
    kind = type(v)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


_LEGACY_NAMES = {name: _dtype._BY_NAME[d] for d, name in _TYPE_NAMES.items()}  # "FloatTensor": float32, ...


def legacy_type_dtype(t):
    """The dtype x.type(t) converts to: t a dtype, a legacy tensor class (microtorch.FloatTensor, Tensor: the
    default dtype), or a class's name ('torch.FloatTensor', 'microtorch.FloatTensor')."""
    if isinstance(t, _dtype.dtype):
        return t
    if t is Tensor or isinstance(t, str) and t in ("torch.Tensor", "microtorch.Tensor"):
        return get_default_dtype()
    if isinstance(t, type):  # (a legacy class goes by its name, microtorch.FloatTensor; another class is refused)
        t = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
    if not isinstance(t, str):
        raise TypeError(f"type(): dtype must be a type, str, or dtype object, not {_type_name(t)}; pass e.g. "
                        "microtorch.DoubleTensor, 'torch.DoubleTensor' or microtorch.float64")
    module, _, name = t.rpartition(".")
    if module in ("torch.cuda", "microtorch.cuda"):
        raise RuntimeError(f"type('{t}'): Torch not compiled with CUDA enabled (microtorch runs on numpy, on the CPU: "
                           f"use '{module.rsplit('.', 1)[0]}.{name}')")
    if module in ("torch", "microtorch") and name in _LEGACY_NAMES:
        return _LEGACY_NAMES[name]
    raise ValueError(f"invalid type: '{t}'; name a tensor class such as 'torch.FloatTensor' or "
                     f"'torch.LongTensor', or pass a dtype such as microtorch.float32")


DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")  # (torch's, in its order)


class device:
    """A device name. Tensors live on the CPU here (or on 'meta': shapes without data, see _meta.py); as in torch
    on a machine without GPUs, `device("cuda")` can be named, and putting a tensor there raises (`unavailable`).
    "cpu:0" is the CPU with an index, which tensors drop (their .device is device(type='cpu'))."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.device'>)

    def __init__(self, type="cpu", index=None):
        kind = device_type(type)  # (an unknown kind is torch's RuntimeError)
        if ":" in str(type):
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: "
                                   f"{type}")
            index = int(str(type).partition(":")[2])
        self.type, self.index = kind, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # (torch's device("cpu") == "cpu" is False: a device equals devices only)
        return isinstance(other, device) and str(other) == str(self)

    def __hash__(self):
        return hash(str(self))

    def __enter__(self):  # `with device("meta"):` factories given no device make their tensors there
        _default_stack.append(_default_device)
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        set_default_device(_default_stack.pop())


_Device = device  # (the class, where a parameter named device hides it)

# Where factories (tensor, zeros, rand, arange, nn's parameters...) put a tensor given no device, as torch's
# set_default_device: None until set. _placement is that device unless it is the CPU, where tensors are anyway.
_default_device = _placement = None
_default_stack = []


def set_default_device(device):
    """torch.set_default_device: the device of new tensors whose factory is given none (None: the CPU)."""
    global _default_device, _placement
    if device is not None and not isinstance(device, _Device):
        if isinstance(device, int) and not isinstance(device, bool):
            raise RuntimeError("Cannot access accelerator device when none is available. (set_default_device: an "
                               "index means an accelerator; microtorch runs on the CPU, give 'cpu')")
        if not isinstance(device, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type(device).__name__}), "
                            "but expected a device, a string such as 'cpu' or 'meta', or None (set_default_device)")
        device = _Device(device)
    _default_device = device
    _placement = device if device is not None and device.type != "cpu" else None


def get_default_device():
    """torch.get_default_device: where factories given no device put new tensors."""
    if _placement is not None and _placement.type != "meta":  # (torch makes a tensor there to ask: it raises)
        raise unavailable(_placement)
    return _default_device if _default_device is not None else _CPU


def placement(given):
    """The device a factory's tensor goes to: the one given, else the default one (None: the CPU)."""
    return given if given is not None else _placement


def unavailable(d):
    """torch's error for putting a tensor on device d, which this machine lacks (every device but the CPU and meta)."""
    kind = device_type(d)
    fix = " (microtorch runs on numpy, on the CPU: use device='cpu', or choose with torch.accelerator.is_available())"
    if kind in ("cuda", "xpu"):
        return AssertionError(f"Torch not compiled with {'CUDA' if kind == 'cuda' else 'XPU'} enabled{fix}")
    return RuntimeError(f"PyTorch is not linked with support for {kind} devices{fix}")


def cuda_unavailable(index_or_device):
    """torch's error for .cuda(device) on a machine without GPUs."""
    if isinstance(index_or_device, int) and not isinstance(index_or_device, bool):
        return RuntimeError("Cannot access accelerator device when none is available. (microtorch runs on the CPU: "
                            "drop the .cuda() call)")
    if index_or_device is not None and not isinstance(index_or_device, (str, device)):
        return TypeError(f"cuda(): argument 'device' (position 1) must be torch.device, not "
                         f"{type(index_or_device).__name__}")
    if index_or_device is not None and device_type(index_or_device) != "cuda":
        return RuntimeError(f"Invalid device, must be cuda device (got {index_or_device})")
    return unavailable("cuda")


def device_type(d):
    """The kind of device d names ('cpu', 'meta', 'cuda', ...), read as torch reads a device or its string:
    'cpu:0' is the CPU; an index that is not a number is torch's RuntimeError."""
    if isinstance(d, device):
        return d.type
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):  # (an index alone names the accelerator's)
        raise RuntimeError("Cannot access accelerator device when none is available. (A device given as an index "
                           "means the accelerator's; microtorch runs on the CPU: use device='cpu'.)")
    kind, colon, index = str(d).partition(":")
    if colon and not index.isdigit():
        raise RuntimeError(f"Invalid device string: '{d}'")
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {d}")
    return kind


_CPU = device("cpu")


subclass_hooks = []  # fn(cls), called when a subclass of Tensor is defined (the extension point of _torch_function)


def _axis_for_dim(op, dim, given):
    """x.size(axis=0): numpy's name for dim, as torch's parser takes it; any other keyword, or both, is refused."""
    if dim is not None or list(given) != ["axis"]:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(given))}'")
    return given["axis"]


def _wrap_dim(dim, ndim, op):
    if ndim == 0 and dim in (0, -1):  # torch wraps dims of a 0-d tensor for reductions, not for size/stride
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions (it is 0-d)")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n if ndim else 0


def _size_arg(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    return tuple([int(s) if type(s) is Tensor and s._data.ndim == 0 and s._data.dtype.kind in "iu" else s
                  for s in size])  # (a 0-d integer tensor: its int, as torch reads it: zeros(3, lengths.max()))


# ---- creation ------------------------------------------------------------------------------
_PLAIN = frozenset({bool, int, float, complex})  # Python numbers: torch infers bool, int64, the default float, complex
_FLOAT_MAX = {np.dtype(np.float16): 65504.0, np.dtype(np.float32): 3.4028234663852886e38,
              np.dtype(np.complex64): 3.4028234663852886e38}  # (beyond: inf, which numpy's cast warns about)
_IINFO = {}  # (np.iinfo costs half a microsecond: one per integer dtype)


def _plain_dtype(types):
    """The dtype torch infers for Python numbers of these types (no number: the default float)."""
    if complex in types:
        return get_default_dtype().to_complex()
    if float in types or not types:
        return get_default_dtype()
    return _dtype.int64 if int in types else _dtype.bool_


def _is_sequence(x):
    """What torch's tensor() reads as a sequence besides lists and tuples (Python's sequence protocol: a deque, a
    range, an array.array, a UserList); not a mapping, text, an array or a tensor."""
    return (hasattr(type(x), "__getitem__") and hasattr(type(x), "__len__") and not isinstance(
        x, (list, tuple, str, bytes, dict, np.ndarray, np.generic, Tensor)) and not hasattr(x, "keys"))


def _sequences_listed(data):
    """data with every other sequence (a deque of rewards) made a list, as torch reads them."""
    if _is_sequence(data):
        return [_sequences_listed(x) for x in data]
    if isinstance(data, (list, tuple)) and any(_is_sequence(x) or isinstance(x, (list, tuple)) for x in data):
        return type(data)(_sequences_listed(x) for x in data) if type(data) in (list, tuple) else data
    return data


def _infer_dtype(data):
    """The dtype torch.tensor infers: bool, int64, the default float, or complex; a numpy array or scalar and a
    tensor bring their own."""
    if isinstance(data, np.ndarray):
        return _dtype.from_numpy_dtype(data.dtype)
    kinds, numbers = set(), set()
    stack = [data]
    while stack:
        x = stack.pop()
        if x.__class__ in _PLAIN:
            numbers.add(x.__class__)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, (np.ndarray, np.generic)):  # numpy arrays and scalars keep their dtype
            if x.__class__ is np.ndarray:
                _warn_listed_arrays()
            kinds.add(_dtype.from_numpy_dtype(x.dtype))
        elif isinstance(x, (bool, int, float, complex)):  # (subclasses: a numpy scalar was taken above)
            numbers.add(next(t for t in (bool, int, float, complex) if isinstance(x, t)))
        else:  # (torch: a string is a TypeError, anything else its RuntimeError)
            error = TypeError if isinstance(x, (str, bytes)) else RuntimeError
            raise error(f"tensor(): Could not infer dtype of {type(x).__name__}; pass numbers, "
                        "nested lists of numbers, numpy arrays or tensors")
    if numbers:
        kinds.add(_plain_dtype(numbers))
    result = None
    for k in kinds:
        result = k if result is None else _dtype.promote_types(result, k)
    return result or get_default_dtype()


def _listed_arrays(data):
    """data is a list or tuple holding a numpy array at some depth (torch converts those one element at a time)."""
    stack = [data] if isinstance(data, (list, tuple)) else []
    while stack:
        for x in stack.pop():
            if x.__class__ is np.ndarray:
                return True
            if isinstance(x, (list, tuple)):
                stack.append(x)
    return False


def _warn_listed_arrays():
    warn_once("listed arrays", "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
              "converting the list to a single numpy.ndarray with numpy.array() before converting to a tensor.")


def _depth(data):
    """How many dims torch reads from nested data: along the first elements, through lists, tuples and numpy
    arrays (a tensor there is an element, which must hold one number)."""
    n, x = 0, data
    while isinstance(x, (list, tuple)):
        n += 1
        if not x:
            return n
        x = x[0]
    return n + x.ndim if isinstance(x, np.ndarray) else n


def _unwrapped(x, depth):
    """x with its tensors replaced by their arrays: a tensor where a number belongs (depth 0) must hold one,
    as torch reads it with .item()."""
    if isinstance(x, Tensor):
        if depth <= 0 and x.numel() != 1:
            raise ValueError(f"tensor(): only one element tensors can be converted to Python scalars (an element "
                             f"of shape {list(x.shape)} stands where a number belongs); to join tensors use "
                             "microtorch.stack([...]) or microtorch.cat([...])")
        return x._data.reshape(()) if depth <= 0 else x._data
    if isinstance(x, (list, tuple)):
        return [_unwrapped(v, depth - 1) for v in x]
    return x


def _to_numpy(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and _holds_tensor(data):
        return np.array(_unwrapped(data, _depth(data)))
    return np.asarray(data)


def _holds_tensor(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            return True
        if isinstance(x, (list, tuple)):
            stack.extend(v for v in x if v.__class__ not in _PLAIN)
    return False


def _converted(convert, *args):
    """convert(*args) (numpy's conversion of tensor()'s data), with numpy's errors said in tensor()'s words."""
    try:
        return convert(*args)
    except ValueError as e:
        if "only one element" in str(e):
            raise
        err = _ragged(args[0], _sizes(args[0]), 0) if convert is _to_numpy else None
        if err is not None:
            raise err from None
        raise ValueError(f"tensor(): the nested sequence is ragged or not numeric ({e}); every row "
                         "must have the same length") from None
    except TypeError as e:  # None (or an object) where the dtype wants numbers
        raise TypeError(f"tensor(): {e}; the data must be numbers or (nested) sequences of numbers") from None


def _sizes(data):
    """The shape torch reads from nested data: the lengths along the first elements."""
    sizes, x = [], data
    while isinstance(x, (list, tuple)) or isinstance(x, np.ndarray) and x.ndim:
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    return sizes


def _ragged(x, sizes, dim):
    """torch's error for the first element of nested data that does not fit the shape `sizes` (a row of another
    length, a number where a row belongs, a row where a number belongs), or None."""
    if dim == len(sizes):
        if isinstance(x, (list, tuple)):
            return TypeError(f"tensor(): '{type(x).__name__}' object cannot be interpreted as a number (a row where "
                             f"a number belongs, at dim {dim}); every row must nest as deep as the first")
        return None
    if not isinstance(x, (list, tuple)) and not (isinstance(x, (np.ndarray, Tensor)) and x.ndim):
        return TypeError(f"tensor(): not a sequence ({x!r} stands where a row of {sizes[dim]} belongs, at dim "
                         f"{dim}); every row must nest as deep as the first")
    if len(x) != sizes[dim]:
        return ValueError(f"tensor(): expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)}); every "
                          "row must have the same length")
    return next((err for v in x if (err := _ragged(v, sizes, dim + 1)) is not None), None) if sizes[dim] else None


def _cast(src, np_dtype):
    if src.dtype == np_dtype:  # (a copy: nothing to convert, no warning to silence)
        return np.array(src)
    if src.dtype.kind in "iub" and np_dtype != np.float16:  # (these casts never warn: no need to silence them)
        return src.astype(np_dtype)
    return quietly(_dtype.cast, src, np_dtype)  # (70000 into float16 is inf, silently, as torch)


def _refuse_non_numbers(data, dt):
    """torch's TypeError for an element of `data` that is not a number when the dtype is given (numpy would read
    None as NaN, a string as text), or a Python complex number for a real dtype (numpy drops its imaginary part)."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif x.__class__ is complex and dt.np.kind != "c":
            raise TypeError(f"tensor(): must be real number, not complex ({x} into {dt}; pass a complex dtype, or "
                            "the real part)")
        elif not isinstance(x, (int, float, complex, np.generic, np.ndarray, Tensor)):
            raise TypeError(f"tensor(): must be real number, not {type(x).__name__}; the data must be numbers or "
                            "(nested) sequences of numbers")


def _iinfo(np_dtype):
    info = _IINFO.get(np_dtype)
    if info is None:
        info = _IINFO[np_dtype] = np.iinfo(np_dtype)
    return info


def _fits(src, info):
    """Whether every number of `src` (the numpy array of some Python integers) surely converts into an integer
    dtype of range `info` as torch converts it; if not, _check_integers looks at the numbers themselves."""
    kind = src.dtype.kind
    if not src.size:
        return True
    if kind != "i":  # (bools and floats, which may be numpy scalars torch refuses; object: an int beyond 64 bits)
        return False
    lo, hi = src.min(), src.max()
    low = -info.max if info.min == 0 else info.min  # (uint8 takes an int down to -255: it wraps)
    return bool(low <= lo and hi <= info.max)


def _check_integers(data, dt):
    """torch's checked conversion of the Python (and numpy scalar) numbers in `data` into the integer or bool
    dtype `dt`: an int must fit in 64 bits (ValueError) and then in dt (uint8 also takes an int down to -255,
    which wraps), a float must be a number within dt's range, a complex number is refused, and so is a numpy
    scalar that is not an int (np.float32, np.bool_: torch reads an integer with __index__). An array, or a tensor
    given as the data, is cast unchecked, as in torch."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))  # (the first bad number in reading order is the one reported)
        elif isinstance(x, Tensor) and x is not data and x.numel() == 1:
            _check_number(_tensor_number(x, dt), dt)
        elif x is not data or not isinstance(x, (np.ndarray, Tensor)):
            _check_number(x, dt)


def _tensor_number(x, dt):
    """The number a one-element tensor in tensor()'s data stands for (torch: an integer dtype takes it by
    __index__, which a floating tensor refuses)."""
    if dt.np.kind in "iub" and x.dtype.is_floating_point or x.dtype.is_complex:
        raise TypeError(f"tensor(): only integer tensors of a single element can be converted to an index (a "
                        f"{x.dtype} element, into {dt}); convert it first, e.g. x.long()")
    return x.item()


def _check_number(x, dt):
    """torch's checked conversion of one number of tensor()'s data into the integer or bool dtype dt."""
    if isinstance(x, np.generic) and not isinstance(x, (float, np.integer)) and not (
            isinstance(x, np.bool_) and dt.np.kind == "b"):  # (np.float64 is a Python float; np.float32 is not)
        raise TypeError(f"tensor(): '{type(x).__module__}.{type(x).__name__}' object cannot be interpreted as an "
                        f"integer ({x} into {dt}; convert it with float(...) or int(...) first)")
    if dt.np.kind == "b" or isinstance(x, (bool, np.bool_)):
        return
    info = _iinfo(dt.np)
    if isinstance(x, (int, np.integer)):
        if not -2 ** 63 <= x < 2 ** 63:
            raise ValueError(f"tensor(): Overflow when unpacking long long ({x} does not fit in 64 bits; "
                             "write it as a float, or pass dtype=microtorch.float64)")
        if not (-info.max if info.min == 0 else info.min) <= x <= info.max:
            _overflow(x, dt, info)
    elif isinstance(x, float):
        if not float(info.min) <= x <= float(info.max):  # (NaN and inf too: an integer holds neither)
            _overflow(x, dt, info)
    elif isinstance(x, complex):
        raise TypeError(f"'complex' object cannot be interpreted as an integer ({x} into {dt}; pass its .real, "
                        "or a complex dtype)")


def _overflow(x, dt, info):
    raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow (tensor(): {x} does not fit "
                       f"in {dt}, whose range is {info.min} to {info.max}; pick a wider dtype)")


def _plain_array(data, dtype):
    """The array of a Python number or a flat list of them, in the dtype given or inferred, by the cheap path:
    Python's min and max check the range, so that numpy's warning machinery is not needed; None for what the
    general path converts (nesting, other elements, a number out of range, which it refuses or converts)."""
    if data.__class__ in _PLAIN:
        types, lo, hi = (data.__class__,), data, data
    else:
        flat = _rows_joined(data) if data and data[0].__class__ in (list, tuple) else data
        types = set(map(type, flat)) if flat else None
        if not types or not types <= _PLAIN or complex in types:
            return None
        lo, hi = min(flat), max(flat)  # (a NaN first makes them NaN: the range tests fail, the general path runs)
    if complex in types or int in types and not (-2 ** 63 <= lo and hi < 2 ** 63):
        return None
    dt = _dtype.to_dtype(dtype) if dtype is not None else _plain_dtype(types)
    np_dt = dt.np
    if np_dt.kind in "fc":
        limit = _FLOAT_MAX.get(np_dt)
        if limit is not None and not -limit <= lo <= hi <= limit:
            return None
        return _dtype.cast(np.array(data), np_dt) if np_dt.char == "e" else np.array(data, np_dt)  # (e: float16)
    if np_dt.kind == "b":
        return np.array(data, np_dt)
    info = _iinfo(np_dt)
    if float in types or not ((-info.max if info.min == 0 else info.min) <= lo and hi <= info.max):
        return None
    return np.array(data, np_dt) if lo >= 0 else np.array(data).astype(np_dt)  # (uint8 takes -1 as 255)


def _rows_joined(data):
    """The numbers of a list of rows of equal length, one after the other (a matrix written as nested lists), or
    None when data is not that."""
    rows = set(map(type, data))
    if not rows <= {list, tuple} or len(set(map(len, data))) != 1:
        return None
    return list(itertools.chain.from_iterable(data))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of `data` (numbers, nested lists, arrays, tensors)."""
    cls = data.__class__
    if device is None:
        device = _placement
    if (cls in _PLAIN or cls is list or cls is tuple) and device is None:  # the commonest calls, kept cheap
        array = _plain_array(data, dtype)
        if array is not None:
            return _leaf(array, requires_grad)
    elif cls is np.ndarray and dtype is None and device is None:  # a copy in its own dtype (one torch has)
        _no_negative_strides(data, "tensor(): ")
        return _leaf(_numpy_strides(np.array(data, _dtype.from_numpy_dtype(data.dtype).np)), requires_grad)
    if isinstance(data, (str, bytes)):  # (numpy would read it as text, or as True into bool)
        raise TypeError(f"tensor(): invalid data type '{type(data).__name__}'; pass numbers, nested lists of "
                        "numbers, numpy arrays or tensors")
    if isinstance(data, Tensor):
        warn_at_user_line("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                          "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                          "microtorch.tensor(sourceTensor).")  # (at the user's line: each such line warns once)
    if device is not None and device_type(device) != "cpu":  # (meta: made here, then moved; others raise)
        return _leaf(tensor(data, dtype=dtype, device=_CPU).to(device)._data, requires_grad)
    data = _sequences_listed(data)
    if isinstance(data, np.ndarray):
        _no_negative_strides(data, "tensor(): ")
        if data.dtype.kind in "OUSVMm":  # (an array of objects, text or dates is refused, dtype or not, as torch)
            _dtype.from_numpy_dtype(data.dtype)
    _no_string_dimension(data)
    if dtype is None:
        dt = _infer_dtype(data)
    else:
        dt = _dtype.to_dtype(dtype)
        if _listed_arrays(data):
            _warn_listed_arrays()
    src = _converted(_to_numpy, data)
    if src.dtype.kind in "OUS" and dtype is not None or src.dtype.kind == "c" and dt.np.kind not in "cb":
        _refuse_non_numbers(data, dt)  # (inferring the dtype refused the first ones already)
    listed = cls is list or cls is tuple  # (a list here holds numpy scalars or tensors: [np.bool_, 1] is int64)
    checked = not isinstance(data, (np.ndarray, Tensor)) and dt.np.kind in "iub" and (src.dtype != dt.np or listed)
    if checked and (listed or dt.np.kind == "b" or not _fits(src, _iinfo(dt.np))):
        _check_integers(data, dt)
    array = _converted(_cast, src, dt.np)
    return _leaf(_numpy_strides(array) if isinstance(data, np.ndarray) else array, requires_grad)


def _no_string_dimension(data):
    """torch's ValueError for a string met as the first element of a (nested) list: torch reads the sizes down the
    first elements, and a string would be one more dimension (its characters)."""
    x = data
    while isinstance(x, (list, tuple)) and len(x):
        x = x[0]
        if isinstance(x, str):
            raise ValueError("tensor(): too many dimensions 'str' (a string is not a number: pass numbers, or "
                             "convert the strings first, e.g. [float(s) for s in data])")


def _no_negative_strides(array, name=""):
    """torch's ValueError for a numpy array read backwards (a[::-1]): a tensor has no negative stride. (A guarded
    op's name is put in front by its guard, ops/_checks.py; tensor() is not guarded and gives its own.)"""
    if min(array.strides, default=0) < 0:
        raise ValueError(f"{name}At least one stride in the given numpy array is negative (strides "
                         f"{array.strides}), and tensors with negative strides are not currently supported. Make a "
                         "copy of your array with array.copy() first.")


def _numpy_strides(array):
    """torch keeps an empty numpy array's strides (zeros) in the tensor it copies it to: a view keeps stride() from
    giving it the strides of a new empty tensor"""
    return array.view() if array.size == 0 else array


def _leaf(array, requires_grad):
    t = Tensor._make(array)
    if requires_grad:
        t.requires_grad = True
        _made_leaf(t)
    return t


def _made_leaf(t):
    """t, after telling a running torch.func transform that its function made t, a leaf requiring grad: torch puts
    such a tensor on the transform's level, so the transform's results keep no graph to it (factories call this too)."""
    from .autograd import extension  # (the core's extension point: loaded by now, a lookup)
    transforms = extension.registered()
    if transforms is not None:
        transforms.made_leaf(t)
    return t


def as_tensor(data, *, dtype=None, device=None):
    """Like tensor(), but shares memory with a numpy array or tensor when it can. dtype and device are
    keyword-only, as torch's (as_tensor(x, float64) would read the dtype as a second datum)."""
    if dtype is not None and not isinstance(dtype, (_dtype.dtype, type, np.dtype)):
        raise TypeError(f"as_tensor(): argument 'dtype' must be microtorch.dtype, not {type(dtype).__name__}; pass "
                        "a dtype such as microtorch.float64")
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(dtype)
    elif isinstance(data, np.ndarray) and (dtype is None or _dtype.to_dtype(dtype).np == data.dtype):
        out = from_numpy(data)
    else:
        out = tensor(data, dtype=dtype)
    device = placement(device)
    return out if device is None else out.to(device)  # (a tensor moves as .to moves it: meta, or torch's error)


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (writes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    _no_negative_strides(ndarray)
    if not ndarray.flags.writeable:
        warn_once("read-only array", "The given NumPy array is not writable, and PyTorch does not support "
                  "non-writable tensors. This means writing to this tensor will result in undefined behavior. You may "
                  "want to copy the array to protect its data or make it writable before converting it to a tensor. "
                  "This type of warning will be suppressed for the rest of this program.")
        ndarray = _writable(ndarray)
    return Tensor._make(_numpy_strides(ndarray))


def _writable(ndarray):
    """A writable array for a read-only one, as torch writes into the memory of any array it was given: a writable
    view of the same memory where numpy allows one (the array's flag was only turned off), else a copy (memory that
    is truly read-only, as a bytes object's: torch's writes there are undefined)."""
    view = ndarray.view()
    try:
        view.flags.writeable = True
        return view
    except ValueError:
        return ndarray.copy()


def _new_size(op, sizes, size):
    """The size of x.new_zeros(2, 3), new_zeros((2, 3)) or new_zeros(size=(2, 3)); torch's parser
    wants a sequence for size= and some size."""
    if size is not None:
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size).__name__}; pass "
                            "size=(5,)")
        return _size_arg((size,))
    if not sizes:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"; pass the size, e.g. '
                        f"x.{op}(2, 3)")
    return _size_arg(sizes)


def _filled(size, value, dtype, requires_grad):
    for s in size:
        if isinstance(s, (int, np.integer)) and s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        if not isinstance(s, (int, np.integer)):
            raise RuntimeError(f"Trying to create tensor with negative dimension or a non-integer size: "
                               f"{list(size)}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else get_default_dtype()
    t = Tensor._make(np.full(size, value, dtype=dt.np))
    if requires_grad:
        t.requires_grad = True
    return t
