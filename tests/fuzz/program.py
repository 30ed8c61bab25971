"""A fuzz program: leaves made from numpy arrays, then straight-line steps, each one Python expression.

The same program runs on torch and on microtorch: every step is an expression over a library `L`
(`L.exp(v0)`, `v1.transpose(0, 1)`, `F.softmax(v2, -1)`), evaluated with `L` bound to one library.
Keeping steps as source text makes the reproducer a printout of the program itself.
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Leaf:
    name: str
    values: np.ndarray
    requires_grad: bool


@dataclass
class Step:
    out: str                       # the name this step's result is bound to
    op: str                        # the op family, for counts by category
    expr: str                      # Python source over L, F and earlier names
    args: tuple = ()               # the names it reads (for the minimizer's dependency walk)
    arrays: dict = field(default_factory=dict)  # name -> numpy array, turned into L tensors first
    inplace: bool = False          # the step mutates args[0] and returns it


@dataclass
class Program:
    seed: int
    leaves: list
    steps: list

    def code(self):
        """The program as Python source over L (a library) and F (its nn.functional)."""
        lines = []
        for leaf in self.leaves:
            rg = ", requires_grad=True" if leaf.requires_grad else ""
            lines.append(f"{leaf.name} = L.tensor({_array_src(leaf.values)}{rg})")
        for st in self.steps:
            for name, arr in st.arrays.items():
                lines.append(f"{name} = L.tensor({_array_src(arr)})")
            lines.append(f"{st.out} = {st.expr.format(*st.args)}  # {st.op}")
        return "\n".join(lines)


def _array_src(a):
    body = np.array2string(a, separator=", ", threshold=10**6, floatmode="unique", max_line_width=10**6)
    if a.ndim == 0:
        body = repr(a.item())
    if a.size == 0:
        return f"np.zeros({a.shape}, dtype=np.{a.dtype})"
    return f"np.array({body}, dtype=np.{a.dtype})"
