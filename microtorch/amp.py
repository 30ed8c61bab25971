"""torch.amp: mixed precision, as torch behaves on a machine without a GPU.

`autocast("cuda")` and `GradScaler("cuda")` (torch's defaults, and what most training code asks for) are
switched off with torch's warning, so such code runs in full precision, as on torch without CUDA. Autocast on
the CPU would run some ops in bfloat16 or float16: microtorch computes every op in its inputs' dtype, so it
refuses (a CPU autocast to another dtype, float32 say, switches off with torch's warning, as torch's).
`GradScaler("cpu")` works as torch's: the loss is multiplied by the scale, the gradients divided by it before
the step, a step with an inf or NaN gradient is skipped and the scale adapted.
"""
import functools
import warnings

from ._dtype import float32
from ._tensor import DEVICE_TYPES

_UNAVAILABLE = ("cuda",)  # device types torch knows but this machine lacks; others (mps, xpu...) silently off
_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"



def is_autocast_available(device_type):
    return True  # (torch answers for the device types it knows, present or not)


class autocast:
    """`with autocast(device_type, dtype=None, enabled=True):` or as a decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type == "meta":
            raise RuntimeError("unsupported scalarType (autocast has no 'meta' device: give 'cuda' or 'cpu')")
        _check_device_type(device_type)
        self.device, self.fast_dtype = device_type, dtype
        self._enabled = bool(enabled) and device_type not in ("mps", "xpu", "hpu", "mtia", "xla")
        if self._enabled and device_type in _UNAVAILABLE:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        if self._enabled and device_type == "cpu" and dtype is not None and \
                str(dtype).split(".")[-1] not in ("float16", "bfloat16"):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          "only supports dtypes of torch.bfloat16, torch.float16 currently.", UserWarning, stacklevel=2)
            self._enabled = False  # (float32 or float64: the code runs as written, as in torch)

    def __enter__(self):
        if self._enabled:
            raise NotImplementedError(
                f"autocast(device_type={self.device!r}) would run matrix products in "
                f"{'bfloat16' if self.fast_dtype is None else self.fast_dtype}; microtorch computes every op in the "
                "dtype of its inputs. Remove the autocast block, or give enabled=False.")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run_in_autocast(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run_in_autocast


def is_autocast_enabled(*device_type):
    """is_autocast_enabled() or is_autocast_enabled(device_type): always False here."""
    if len(device_type) > 1:
        raise TypeError(f"is_autocast_enabled() takes from 0 to 1 positional arguments but {len(device_type)} were "
                        "given")
    if device_type:
        (device_type,) = device_type
        if not isinstance(device_type, str):
            raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                            f"{type(device_type).__name__}")
        _check_device_type(device_type)
    return False  # (every autocast that runs here is switched off)


def _check_device_type(device_type):
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type} (autocast: give 'cuda' or 'cpu')")


class GradScaler:
    """Loss scaling: scale(loss).backward(), then step(optimizer) (unscaling first) and update()."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device, self._enabled = device, enabled
        if enabled and device in _UNAVAILABLE:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._scale, self._growth_tracker = init_scale, None, 0
        self._growth_factor, self._backoff_factor, self._growth_interval = growth_factor, backoff_factor, \
            growth_interval
        self._per_optimizer = {}  # id(optimizer) -> {"stage": ..., "found_inf": bool}

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """outputs (a tensor, or tensors nested in lists and tuples) times the current scale, a float32 number."""
        if not self._enabled:
            return outputs
        from ._tensor import Tensor, tensor
        if self._scale is None:
            self._scale = tensor(float(self._init_scale), dtype=float32)
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer):
        """Divide the gradients of optimizer's parameters by the scale, in place, noting any inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        state["found_inf"] = _unscale_grads(optimizer, self._inverse_scale())
        state["stage"] = _UNSCALED

    def _inverse_scale(self):
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        from ._tensor import tensor
        return tensor(1.0 / float(self._scale), dtype=float32)  # (the reciprocal in double, then float)

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless a gradient held an inf or NaN (then skipped: the scale was too large)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        if self._scale is None:
            raise AssertionError("Attempted step but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        state["stage"] = _STEPPED
        return None if state["found_inf"] else optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """After each iteration: back off after an inf or NaN, grow after growth_interval clean steps."""
        if not self._enabled:
            return
        from ._tensor import Tensor, tensor
        if new_scale is not None:
            self._scale = tensor(float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale),
                                 dtype=float32)
        elif self._scale is not None:
            self._scale = tensor(self._next_scale(), dtype=float32)
        self._per_optimizer = {}

    def _next_scale(self):
        if not self._per_optimizer:
            raise AssertionError("No inf checks were recorded prior to update.")
        scale = float(self._scale)
        if any(state["found_inf"] for state in self._per_optimizer.values()):
            self._growth_tracker = 0
            return scale * self._backoff_factor
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            self._growth_tracker = 0
            return scale * self._growth_factor
        return scale

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return float(self._init_scale) if self._scale is None else float(self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor":
                self._backoff_factor, "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        from ._tensor import tensor
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = tensor(float(state_dict["scale"]), dtype=float32)
        self._growth_factor, self._backoff_factor = state_dict["growth_factor"], state_dict["backoff_factor"]
        self._growth_interval, self._growth_tracker = state_dict["growth_interval"], state_dict["_growth_tracker"]


def _unscale_grads(optimizer, inverse_scale):
    """Multiply every gradient of optimizer's parameters by inverse_scale in place; was any not finite? (torch's
    AssertionError when no parameter has a gradient.)"""
    from .autograd.grad_mode import no_grad
    found_inf, checked = False, False
    with no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.dtype.name == "float16":
                    raise ValueError("Attempting to unscale FP16 gradients.")
                p.grad.mul_(inverse_scale)
                found_inf, checked = found_inf or not bool(p.grad.isfinite().all()), True
    if not checked:
        raise AssertionError("No inf checks were recorded for this optimizer.")
    return found_inf
