"""prune: zero some entries of a module's parameter through a mask, before every forward.

Pruning `weight` renames the parameter `weight_orig`, adds a buffer `weight_mask` of ones and zeros, makes
`module.weight` a plain attribute holding `weight_orig * weight_mask`, and registers the pruning method itself
as a forward pre-hook that recomputes that product. Pruning the same tensor again puts the methods into a
`PruningContainer`, whose newest method only sees the entries (or channels) still unpruned, so the masks
combine. `remove` makes the pruning permanent: `weight` is a parameter again, holding the pruned values.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._creation import ones_like, rand, rand_like, zeros_like
from ...ops import abs as abs_, norm, topk
from ...ops.order import kthvalue
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


def _composite_method(cls, module, name, args, kwargs):
    """A new cls(*args, **kwargs) for module.<name>; if the tensor is already pruned, the old hook is taken off
    and the new method joins it in a PruningContainer (which is returned)."""
    old, keys = None, []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(key)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    for key in keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        method = old
    elif old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        method = container
    return method


class BasePruningMethod(ABC):
    """A way of pruning: subclasses set PRUNING_TYPE ("unstructured", "structured" with a `dim`, or "global")
    and define compute_mask(t, default_mask); apply() prunes a module's tensor with it."""

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor t (ones where kept), starting from default_mask (the entries pruned so far)."""

    def apply_mask(self, module):
        """module.<name>_orig times its mask: the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune module.<name> with cls(*args, **kwargs), ranking its entries by importance_scores (by default
        the tensor itself); returns the method (or the container) registered as the forward pre-hook."""
        method = _composite_method(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):  # first pruning: the parameter becomes <name>_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # (put the parameter back as it was)
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with the entries this method prunes set to zero (the module is left alone)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, got "
                                     f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: <name> a parameter again holding the pruned values; _orig and _mask go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _slice_to_prune(method, t, mask):
    """Which part of t the method acts on: the unpruned entries, the unpruned channels along its dim, or all."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                 "defined.")
        n_dims = t.dim()
        dim = method.dim + n_dims if method.dim < 0 else method.dim
        if dim < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
        keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
        return tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
    if kind == "global":
        return (slice(None),) * len(t.shape)
    raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one tensor, in order; its mask is the newest method's, computed on the
    part the earlier ones left."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)  # (the same tensor when the dtypes agree, as torch's)
        slc = _slice_to_prune(method, t, default_mask)
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries (a fraction, or a count) chosen at random."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(n, t.nelement())
        mask = default_mask.clone()
        if n != 0:  # (the n entries with the largest random keys)
            mask.view(-1)[topk(rand_like(t).view(-1), k=n).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value (ties as torch.topk breaks them)."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(n, t.nelement())
        mask = default_mask.clone()
        if n != 0:
            mask.view(-1)[topk(abs_(t).view(-1), k=n, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, channels):
    """ones on the given channels (a bool mask or indices) of dim, zeros elsewhere"""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along `dim`, chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        n = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(n, size)
        if n == 0:
            return default_mask
        keys = rand(size)
        mask = _channel_mask(t, self.dim, keys > kthvalue(keys, k=n).values)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest n-norm (n as torch.norm's p: an int, inf, "fro")."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        n = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(n, size)
        kept = topk(_compute_norm(t, self.n, self.dim), k=size - n, largest=True)
        if n == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask is zero."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Prune nothing, but set up <name>_orig, <name>_mask (ones) and the hook. Returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune `amount` (a fraction or a count) of module.<name>'s entries at random. Returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune `amount` of module.<name>'s entries, those of smallest |importance| (default: |<name>|)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune `amount` of module.<name>'s channels along dim at random. Returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune `amount` of module.<name>'s channels along dim, those of smallest n-norm. Returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) tensors together: pruning_method(**kwargs) ranks all their entries at once (an
    unstructured method), and each tensor gets its part of the mask."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", ones_like(getattr(module, name)))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module, name, mask):
    """Prune module.<name> where `mask` is zero. Returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make module.<name>'s pruning permanent (see BasePruningMethod.remove). Returns module."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether module or any submodule has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


# ---- checks, with torch's messages ------------------------------------------------------------------------
def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t):
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return norm(t, p=n, dim=dims)
