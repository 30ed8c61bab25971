"""Complex numbers from their parts, one op each as torch's (ComplexBackward0, PolarBackward0): complex(real, imag)
and polar(abs, angle), with torch's backward formulas, which read the complex gradient's real part (a view in torch:
its graph shows the real view's nodes) and, for polar, the result itself."""
import numpy as np

from ._layout import like_torch_pair
from ._op import Op
from .elementwise import imag, real
from .scalar_overloads import mul_scalar


def _from_parts(re, im):
    """re + i im, each part kept as it is (re + 1j * im would make 0 * inf = NaN in the real part)"""
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


class Complex(Op):
    """real + i imag: d/dreal = real(g), d/dimag = imag(g)"""
    _grad_fn_name = "ComplexBackward0"
    _saved_names = ("real", "imag")  # (torch's node keeps each part that needs a gradient, freed by backward)

    @staticmethod
    def forward(ctx, re, im):
        need = ctx.needs_input_grad
        ctx.save_for_backward(re if need[0] else None, im if need[1] else None)
        return like_torch_pair(_from_parts(re, im), re, im)  # (laid out by the parts' strides, as torch's: see
        # ops/_layout.py)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # (unpacked, as torch's node does: raises once freed)
        need = ctx.needs_input_grad
        return real(grad) if need[0] else None, imag(grad) if need[1] else None

    @staticmethod
    def jvp(ctx, t_re, t_im):
        return Complex.apply(t_re, t_im)


class Polar(Op):
    """abs (cos angle + i sin angle): torch's polar_backward from the result r, d/dabs = real(conj(g) sgn(r)),
    d/dangle = real(conj(g) r i)"""
    _grad_fn_name = "PolarBackward0"
    _saved_names = ("result",)

    @staticmethod
    def forward(ctx, r, theta):
        out = like_torch_pair(_from_parts(r * np.cos(theta), r * np.sin(theta)), r, theta)  # (laid out as torch's,
        # by r's and theta's strides, before it is saved)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        need, g = ctx.needs_input_grad, grad.conj()
        return (real(g * z.sgn()) if need[0] else None,
                real(g * mul_scalar(z, 1j)) if need[1] else None)

    @staticmethod
    def jvp(ctx, t_r, t_theta):
        r, theta = ctx.inputs[:2]
        c, s = theta.cos(), theta.sin()
        return Complex.apply(t_r * c - t_theta * r * s, t_r * s + t_theta * r * c)
