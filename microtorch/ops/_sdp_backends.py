"""The switches that say which kernels scaled_dot_product_attention may run, and the enum that names them.

torch keeps them in its global context; torch.backends.cuda (enable_flash_sdp, math_sdp_enabled, ...) and
torch.nn.attention.sdpa_kernel set and read them. They live here, below both, so that ops/attention.py can read
them when it picks a kernel. On a CPU torch consults two of them: FLASH_ATTENTION (its fused CPU kernel) and
MATH (the composed reference path); the others are kept and reported but choose nothing.
"""
import operator


class SDPBackend:
    """torch.nn.attention.SDPBackend: ERROR, MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION,
    OVERRIDEABLE. Like torch's (a pybind11 enum), members compare equal only to members of the same value (never
    to ints), convert with int(), are hashed by value, are not ordered, and the class is not iterable."""
    __module__ = "microtorch.nn.attention"   # where users meet it (torch's says torch.nn.attention too)
    __qualname__ = "_SDPBackend"              # so the class prints as torch's: <class '..._SDPBackend'>
    __slots__ = ("_value",)
    _NAMES = {-1: "ERROR", 0: "MATH", 1: "FLASH_ATTENTION", 2: "EFFICIENT_ATTENTION", 3: "CUDNN_ATTENTION",
              4: "OVERRIDEABLE"}

    def __new__(cls, value):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. microtorch.nn.attention._SDPBackend(value: typing.SupportsInt | "
                            f"typing.SupportsIndex)\n\nInvoked with: {value!r}") from None
        member = cls.__dict__.get(cls._NAMES.get(value, ""))
        if member is not None:
            return member
        self = object.__new__(cls)
        self._value = value
        return self

    @property
    def name(self):
        return self._NAMES.get(self._value, "???")

    @property
    def value(self):
        return self._value

    def __int__(self):
        return self._value

    __index__ = __int__

    def __eq__(self, other):
        return type(other) is SDPBackend and other._value == self._value

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._value)

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self._value}>"

    def __str__(self):
        return f"SDPBackend.{self.name}"


def _make_members():
    members = {}
    for value, name in SDPBackend._NAMES.items():
        member = object.__new__(SDPBackend)
        member._value = value
        setattr(SDPBackend, name, member)
        members[name] = member
    SDPBackend.__members__ = members


_make_members()

# torch's defaults: every backend on, tried (on a GPU) in this order of priority
_DEFAULT_PRIORITY = (1, 2, 0, 3, 4)   # flash, efficient, math, cudnn, overrideable
_enabled = {int(b): True for b in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                                   SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)}
_priority = list(_DEFAULT_PRIORITY)
_math_reduced_precision = [False]  # allow_fp16_bf16_reduction_math_sdp


def is_enabled(backend):
    return _enabled[int(backend)]


def set_enabled(backend, enabled):
    _enabled[int(backend)] = bool(enabled)


def priority_order():
    """the backends' values, most preferred first (what sdpa_kernel(..., set_priority=True) rearranges)"""
    return list(_priority)


def set_priority_order(order):
    _priority[:] = [int(b) for b in order]


def math_reduced_precision_allowed():
    return _math_reduced_precision[0]


def allow_math_reduced_precision(allowed):
    _math_reduced_precision[0] = bool(allowed)
