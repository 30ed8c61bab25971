"""One seed end to end: generate, run on both libraries, compare."""
import numpy as np

from .compare import compare, real
from .gen import generate
from .noise import rounding_only
from .run import run_program

_LIBS = {}


def libs():
    """(torch, microtorch), imported once per process; torch on one thread (2 cores, 8 users)."""
    if not _LIBS:
        import torch

        import microtorch
        torch.set_num_threads(1)
        _LIBS["t"], _LIBS["m"] = torch, microtorch
    return _LIBS["t"], _LIBS["m"]


def check_program(prog):
    torch, mt = libs()
    with np.errstate(all="ignore"):
        tt = run_program(torch, prog)
        try:
            mm = run_program(mt, prog)
        except Exception as e:  # a crash of the harness itself on microtorch: report, do not stop
            return [(f"crash:{type(e).__name__}", str(e)[:200])]
        diffs = compare(prog, tt, mm)
        return [("known:rounding", d) if (c, d) in real(diffs) and rounding_only(torch, prog, tt, mm, c) else (c, d)
                for c, d in diffs]


def check_seed(seed):
    torch, _ = libs()
    prog = generate(seed, torch)
    return prog, check_program(prog)
