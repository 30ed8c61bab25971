"""The chain rule of one backward node, as LaTeX: dL/da = dL/dy * (local derivative).

`local_rule(op)` gives, per input of the op, a template in which @G stands for the upstream
gradient dL/dy, @A, @B, @C for the op's inputs, @OP for the product (a dot for scalars, a
circled dot for tensors) and @N for a count or an exponent. Ops without a rule get the
generic vector-Jacobian product. `symbol(name)` turns a variable name into LaTeX.
"""
import re

_RULES = {
    "Add": ["@G", "@G"],
    "Sub": ["@G", "-@G"],
    "Rsub": ["-@G", "@G"],
    "Mul": ["@G @OP @B", "@G @OP @A"],
    "Div": [r"@G @OP \frac{1}{@B}", r"-@G @OP \frac{@A}{@B^{2}}"],
    "Neg": ["-@G"],
    "Pow": [r"@G @OP @N\,@A^{@N-1}"],
    "Pow1": [r"@G @OP @B\,@A^{@B-1}", r"@G @OP @A^{@B}\ln @A"],
    "Exp": [r"@G @OP e^{@A}"],
    "Expm1": [r"@G @OP e^{@A}"],
    "Log": [r"@G @OP \frac{1}{@A}"],
    "Log1p": [r"@G @OP \frac{1}{1+@A}"],
    "Log2": [r"@G @OP \frac{1}{@A \ln 2}"],
    "Log10": [r"@G @OP \frac{1}{@A \ln 10}"],
    "Sin": [r"@G @OP \cos(@A)"],
    "Cos": [r"-@G @OP \sin(@A)"],
    "Tan": [r"@G @OP (1+\tan^{2}(@A))"],
    "Tanh": [r"@G @OP (1-\tanh^{2}(@A))"],
    "Sinh": [r"@G @OP \cosh(@A)"],
    "Cosh": [r"@G @OP \sinh(@A)"],
    "Sigmoid": [r"@G @OP \sigma(@A)\,(1-\sigma(@A))"],
    "Relu": [r"@G @OP \mathbb{1}[@A>0]"],
    "Sqrt": [r"@G @OP \frac{1}{2\sqrt{@A}}"],
    "Rsqrt": [r"-@G @OP \frac{1}{2}@A^{-3/2}"],
    "Reciprocal": [r"-@G @OP \frac{1}{@A^{2}}"],
    "Abs": [r"@G @OP \operatorname{sign}(@A)"],
    "Sum": [r"@G\,\mathbf{1}"],
    "Mean": [r"\frac{1}{@N}\,@G\,\mathbf{1}"],
    "Mm": [r"@G\,@B^{\top}", r"@A^{\top}@G"],
    "Matmul": [r"@G\,@B^{\top}", r"@A^{\top}@G"],
    "Bmm": [r"@G\,@B^{\top}", r"@A^{\top}@G"],
    "Mv": [r"@G\,@B^{\top}", r"@A^{\top}@G"],
    "Dot": [r"@G\,@B", r"@G\,@A"],
    "Addmm": [r"\operatorname{sum\_to}(@G)", r"@G\,@C^{\top}", r"@B^{\top}@G"],
    "T": [r"@G^{\top}"],
    "Transpose": [r"@G^{\top}"],
    "Permute": [r"\operatorname{permute}^{-1}(@G)"],
    "View": [r"\operatorname{reshape}(@G)"],
    "UnsafeView": [r"\operatorname{reshape}(@G)"],
    "Reshape": [r"\operatorname{reshape}(@G)"],
    "Squeeze": [r"\operatorname{unsqueeze}(@G)"],
    "Unsqueeze": [r"\operatorname{squeeze}(@G)"],
    "Expand": [r"\operatorname{sum\_to}(@G)"],
    "Clone": ["@G"],
    "ToCopy": ["@G"],
    "Conj": [r"\overline{@G}"],
}

# elementwise ops that broadcast their inputs: a smaller input's gradient is summed back
BROADCASTING = {"Add", "Sub", "Rsub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Where", "Atan2",
                "Hypot", "Lerp", "Addcmul", "Addcdiv", "Fmod", "Remainder", "Copysign", "Xlogy"}

_NAME_RE = re.compile(r"^([A-Za-z])_?(\d+)$")


def symbol(name, fallback="x"):
    """A variable name as LaTeX: x -> x, x1 -> x_{1}, loss -> \\mathit{loss}."""
    if not name:
        name = fallback
    name = str(name)
    if len(name) == 1 and name.isalpha():
        return name
    m = _NAME_RE.match(name)
    if m:
        return f"{m.group(1)}_{{{m.group(2)}}}"
    safe = re.sub(r"[{}\\$^%&#~]", "", name).replace("_", r"\_")
    return r"\mathit{" + safe + "}"


def partial(loss_sym, var_sym):
    return r"\frac{\partial " + loss_sym + r"}{\partial " + var_sym + "}"


def local_rule(op, n_inputs):
    """Templates per input for a short op name ('Mul'), or None if there is no rule."""
    rule = _RULES.get(op)
    if rule is None:
        return None
    if len(rule) < n_inputs:
        return None
    return rule


def fill(template, G, inputs, OP, N=None):
    out = template.replace("@G", G).replace("@OP", OP)
    for tok, val in zip(("@A", "@B", "@C"), inputs):
        out = out.replace(tok, "{" + val + "}")
    if N is not None:
        out = out.replace("@N", N)
    return out


def sum_to(rhs, shape):
    """rhs summed back to an input's shape: sum_to(rhs, (3,))."""
    shape = tuple(int(d) for d in shape)
    return r"\operatorname{sum\_to}\left(" + rhs + r",\ " + str(shape).replace(" ", r"\,") + r"\right)"


def generic(G, y_sym, x_sym, scalar):
    """The vector-Jacobian product when there is no nicer rule."""
    if scalar:
        return G + r"\cdot" + partial(y_sym, x_sym)
    return r"\left(" + partial(y_sym, x_sym) + r"\right)^{\top}" + G
