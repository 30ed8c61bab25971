"""torch.backends.cuda on a machine without GPUs: the matmul switches exist (TF32, reduced-precision
reductions) and keep what is set; there is no GPU product for them to change.

The switches of scaled_dot_product_attention's backends are here too (enable_flash_sdp, math_sdp_enabled, ...,
and the deprecated sdp_kernel context manager). Two of them matter on a CPU, as in torch: flash (torch's fused
CPU kernel) and math (the composed path); ops/attention.py reads them from ops/_sdp_backends.py. The questions
about GPU kernels (can_use_flash_attention, ...) answer False, as torch's CPU build does.
"""
import contextlib
import warnings

from .. import _runtime
from .._tensor import Tensor
from ..ops import _sdp_backends
from ..ops._sdp_backends import SDPBackend


class _MatmulSwitches:
    """torch.backends.cuda.matmul: allow_tf32 and the reduced-precision reduction flags, as torch's defaults.
    allow_tf32 is the float32 matmul precision read another way: True for 'high' and 'medium'."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _runtime.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, allowed):
        _runtime._matmul_precision[0] = "high" if allowed else "highest"


matmul = _MatmulSwitches()


def is_built():
    return False


# ---- scaled_dot_product_attention's backends ----------------------------------------------------------------
def _type_name(obj):
    """the type's name as CPython prints it for a C type: numpy's scalars are numpy.<name>"""
    kind = type(obj)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


# torch's setters take only a real bool; their errors, quirks kept: the flash and mem-efficient setters call
# themselves set_sdp_use_math, the cuDNN one leaves a stray %s
_MATH_SAYS, _CUDNN_SAYS = "set_sdp_use_math expects a bool, but got ", "set_sdp_use_cudnn expects a bool, but got %s"


def _need_bool(enabled, says):
    if not isinstance(enabled, bool):
        raise RuntimeError(says + _type_name(enabled))


def flash_sdp_enabled():
    """whether scaled_dot_product_attention may use its fused kernel (on a CPU: torch's flash CPU kernel)"""
    return _sdp_backends.is_enabled(SDPBackend.FLASH_ATTENTION)


def enable_flash_sdp(enabled):
    _need_bool(enabled, _MATH_SAYS)
    _sdp_backends.set_enabled(SDPBackend.FLASH_ATTENTION, enabled)


def mem_efficient_sdp_enabled():
    """whether the memory-efficient (GPU) kernel may be used; kept, but no CPU kernel reads it"""
    return _sdp_backends.is_enabled(SDPBackend.EFFICIENT_ATTENTION)


def enable_mem_efficient_sdp(enabled):
    _need_bool(enabled, _MATH_SAYS)
    _sdp_backends.set_enabled(SDPBackend.EFFICIENT_ATTENTION, enabled)


def math_sdp_enabled():
    """whether scaled_dot_product_attention may use the composed (math) path"""
    return _sdp_backends.is_enabled(SDPBackend.MATH)


def enable_math_sdp(enabled):
    _need_bool(enabled, _MATH_SAYS)
    _sdp_backends.set_enabled(SDPBackend.MATH, enabled)


def cudnn_sdp_enabled():
    """whether the cuDNN (GPU) kernel may be used; kept, but no CPU kernel reads it"""
    return _sdp_backends.is_enabled(SDPBackend.CUDNN_ATTENTION)


def enable_cudnn_sdp(enabled):
    _need_bool(enabled, _CUDNN_SAYS)
    _sdp_backends.set_enabled(SDPBackend.CUDNN_ATTENTION, enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    """whether the math path may reduce in fp16/bf16 (kept; microtorch's math path computes as it does anyway)"""
    return _sdp_backends.math_reduced_precision_allowed()


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _need_bool(enabled, _MATH_SAYS)
    _sdp_backends.allow_math_reduced_precision(enabled)


def is_flash_attention_available():
    """False: torch's FlashAttention is a CUDA kernel (its fused CPU kernel is another)"""
    return False


def is_ck_sdpa_available():
    return False


def _bool_like(obj):
    """what pybind11 converts to a C++ bool: None, and objects whose type defines __bool__ (not str, not lists)"""
    return obj is None or hasattr(type(obj), "__bool__")


class SDPAParams:
    """the arguments of one scaled_dot_product_attention call, for the can_use_* questions: query, key, value,
    attn_mask, dropout, is_causal, enable_gqa (all seven, by position, as torch takes them)"""
    __qualname__ = "_SDPAParams"  # torch's class prints as torch.backends.cuda._SDPAParams

    def __init__(self, *args):
        fits = len(args) == 7 and all(isinstance(t, Tensor) for t in args[:3]) and \
            (args[3] is None or isinstance(args[3], Tensor)) and \
            any(hasattr(type(args[4]), m) for m in ("__float__", "__index__")) and all(map(_bool_like, args[5:]))
        if not fits:
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. microtorch.backends.cuda._SDPAParams(arg0: microtorch.Tensor, arg1: "
                            "microtorch.Tensor, arg2: microtorch.Tensor, arg3: microtorch.Tensor | None, arg4: "
                            "typing.SupportsFloat | typing.SupportsIndex, arg5: bool, arg6: bool)\n\nInvoked with: "
                            + ", ".join(repr(a) for a in args))
        self.query, self.key, self.value, self.attn_mask = args[:4]
        self.dropout, self.is_causal, self.enable_gqa = float(args[4]), bool(args[5]), bool(args[6])


def can_use_flash_attention(params, debug=False):
    """False: FlashAttention is a CUDA kernel (and torch's CPU build says no without a warning)"""
    return False


def can_use_efficient_attention(params, debug=False):
    return False


def can_use_cudnn_attention(params, debug=False):
    return False


_SDP_KERNEL_DEPRECATED = ("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
                          "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
                          "manager, with updated signature.")


def _sdp_kernel_body(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    from ..nn.attention import sdpa_kernel
    wanted = ((SDPBackend.FLASH_ATTENTION, enable_flash), (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
              (SDPBackend.MATH, enable_math), (SDPBackend.CUDNN_ATTENTION, enable_cudnn))
    with sdpa_kernel([backend for backend, on in wanted if on]) as context:
        yield context


def _warn_then_start(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """the FutureWarning comes when the context manager is made (torch's points at contextlib, whose
    _GeneratorContextManager makes the generator), then the generator runs _sdp_kernel_body"""
    warnings.warn(_SDP_KERNEL_DEPRECATED, FutureWarning, stacklevel=2)
    return _sdp_kernel_body(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


_warn_then_start.__name__ = _warn_then_start.__qualname__ = "sdp_kernel"
_warn_then_start.__deprecated__ = _SDP_KERNEL_DEPRECATED
sdp_kernel = contextlib.contextmanager(_warn_then_start)
sdp_kernel.__doc__ = ("Deprecated: enable only the backends of scaled_dot_product_attention named True, restoring "
                      "the switches on exit (use microtorch.nn.attention.sdpa_kernel).")
