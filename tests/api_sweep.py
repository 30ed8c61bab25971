"""The API sweep: every public callable of microtorch called with bad arguments, beside torch.

The cases are generated, not listed. The public callables are found by introspection (module
functions of `microtorch`, Tensor methods and operators, `nn.functional`, `func`, `autograd`,
`autograd.functional`); each is called with argument lists drawn from a table of bad-argument
generators (wrong types, shapes, dims, dtypes, empty and 0-d tensors, huge sizes, NaN/inf,
missing and extra arguments). Each case runs in torch and in microtorch from the same numpy
inputs, and its outcome falls in one category:

  leak      microtorch raised from inside numpy, the standard library, or a line of its own that
            is not a `raise` (an internal IndexError, AttributeError, RecursionError, MemoryError...)
  type      both raised, but microtorch's exception is not an instance of torch's type
  message   both raised the same type, but microtorch's message does not name the op
  silent    torch raised, microtorch returned
  refused   torch returned, microtorch raised (cleanly)
  value     both returned, with different results
  ok        same type of error, or an equal result

Run alone (prints counts and examples):
    PYTHONPATH=. python tests/api_sweep.py [--long] [--show CATEGORY ...] [--only NAME]
`tests/test_api_sweep.py` runs it in a subprocess with a memory limit.
"""
import math
import operator
import os
import signal
import sys
import time
import traceback
import zlib

import numpy as np

# ---- argument specs: placeholders made concrete once per library -----------------------------


class T:
    """A tensor fixture by name (see _FIXTURES); one object per name within a case."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class D:
    """A dtype by name."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Fn:
    """A Python function of a tensor (for func transforms and autograd.functional)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "fn_" + self.name


_rng = np.random.default_rng(12)
_F23 = _rng.standard_normal((2, 3)).astype(np.float32)
_ARRAYS = {
    "f23": _F23, "f3": _rng.standard_normal(3).astype(np.float32),
    "f234": _rng.standard_normal((2, 3, 4)).astype(np.float32), "f0d": np.array(1.5, np.float32),
    "e0": np.zeros(0, np.float32), "e03": np.zeros((0, 3), np.float32), "e20": np.zeros((2, 0), np.float32),
    "i23": np.arange(6).reshape(2, 3), "b23": np.array([[True, False, True], [False, False, True]]),
    "c23": (_F23 + 1j * _F23[::-1]).astype(np.complex64), "d23": _F23.astype(np.float64),
    "nan23": np.array([[np.nan, 1.0, np.inf], [-np.inf, 0.0, -1.0]], np.float32),
    "idx_oob": np.array([0, 7]), "idx_neg": np.array([-9]), "tgt": np.array([0, 2]),
    "idx_f": np.array([0.0], np.float32),
}
_FUNCTIONS = {
    "sum": lambda x: x.sum(), "id": lambda x: x, "num": lambda x: 3.0,
    "pair": lambda x: (x.sum(), x), "int": lambda x: x.long().sum(),
}


def make(spec, lib, memo):
    """The concrete argument for `lib` (torch or microtorch)."""
    if isinstance(spec, T):
        if spec.name not in memo:
            memo[spec.name] = _tensor(spec.name, lib, memo)
        return memo[spec.name]
    if isinstance(spec, D):
        return getattr(lib, spec.name)
    if isinstance(spec, Fn):
        return _FUNCTIONS[spec.name]
    if isinstance(spec, list):
        return [make(s, lib, memo) for s in spec]
    if isinstance(spec, tuple):
        return tuple(make(s, lib, memo) for s in spec)
    if isinstance(spec, dict):
        return {k: make(v, lib, memo) for k, v in spec.items()}
    return spec


def _tensor(name, lib, memo):
    if name == "f23g":
        return lib.tensor(_F23.copy(), requires_grad=True)
    if name == "y":  # a scalar with history, from the leaf f23g of the same case
        return (make(T("f23g"), lib, memo) * 2).sum()
    if name == "y23":  # a non-scalar with history
        return make(T("f23g"), lib, memo) * 2
    return lib.tensor(_ARRAYS[name].copy())


# ---- the bad-argument table --------------------------------------------------------------------
NAN, INF, HUGE = float("nan"), float("inf"), 10 ** 13

# what stands first: `self` of a Tensor method, the first argument of a function
FIRST = [T("f23"), T("f0d"), T("e03"), T("i23"), T("b23"), T("c23"), T("nan23"), T("f23g"), T("y")]

# what follows it: (args, kwargs); the first group runs in the short profile
REST_CORE = [
    ((), {}), ((0,), {}), ((5,), {}), ((-4,), {}), ((None,), {}), (("a",), {}), ((1.5,), {}),
    ((T("f23"),), {}), ((T("idx_oob"),), {}), ((0, T("idx_oob")), {}), ((), {"dim": 5}), ((), {"bogus": 1}),
    ((T("tgt"),), {}), ((HUGE,), {}),
]
REST_MORE = [
    ((1,), {}), ((NAN,), {}), ((INF,), {}), ((T("f3"),), {}), ((T("i23"),), {}), ((T("e0"),), {}),
    ((T("f0d"),), {}), ((T("b23"),), {}), ((T("f23g"),), {}), (((0, 5),), {}), (((0, 0),), {}),
    (([],), {}), ((0, 5), {}), ((5, 0), {}), ((0, 1, 2, 3, 4, 5), {}), ((T("f23"), T("f23")), {}),
    ((T("f23"), 0.5), {}), ((0, T("idx_neg")), {}), ((0, T("idx_f")), {}), ((), {"dim": "a"}),
    ((), {"dtype": D("int64")}), ((), {"dtype": D("bool")}), ((), {"dim": 0, "keepdim": True}),
    ((T("f234"),), {}), ((T("e20"),), {}), ((T("c23"),), {}), ((2 ** 40, 2 ** 40), {}),
]

# whole argument lists for module-level functions (creation functions, cat, einsum, func, ...)
SOLO = [
    ((), {}), ((None,), {}), (("a",), {}), (([],), {}), (([T("f0d"), T("f0d")],), {}),
    (([T("f23"), T("i23")],), {}), (([T("f23"), "a"],), {}), (((T("f23"), T("f3")),), {}),
    ((HUGE,), {}), ((2 ** 40, 2 ** 40), {}), ((-1,), {}), ((2.5,), {}), (((2, -3),), {}), ((0,), {}),
    ((3,), {}), (([2, 3],), {}), ((NAN,), {}), ((INF,), {}), ((3,), {"dtype": D("bool")}),
    ((3,), {"dtype": "x"}), ((2, 3), {"bogus": 1}),
    (("ij,jk->ikz", T("f23"), T("f23")), {}), (("ij,jk", T("f23")), {}), (("i->j", T("f3")), {}),
    (("ii->i", T("f23")), {}), (("i,i", T("f3"), T("f23")), {}), (("i.->i", T("f3")), {}),
    (("ij->ij->i", T("f23")), {}), (("iij", T("f23")), {}),
    ((Fn("sum"),), {}), ((Fn("id"),), {}), ((Fn("num"),), {}), ((Fn("pair"),), {}), ((Fn("int"),), {}),
    ((Fn("sum"), T("f3")), {}), ((Fn("id"), T("f3")), {}), ((Fn("num"), T("f3")), {}),
    ((Fn("sum"), (T("f3"),), (T("f3"),)), {}), ((Fn("sum"), 5), {}),
    ((T("y"), T("f23g")), {}), ((T("y23"), T("f23g")), {}), ((T("y"), T("f23")), {}), ((T("y"), [T("f23g")] * 2), {}),
    ((T("y"), T("f23g")), {"grad_outputs": T("f3")}), ((T("y23"), T("f23g")), {"grad_outputs": T("f3")}),
    ((T("y"),), {"grad_tensors": T("f3")}),
]

# ---- what is swept -------------------------------------------------------------------------------
# global state (seeds, default dtype and device, print options, grad mode, threads) is left alone: other tests
# cover it
SKIP = {"set_default_dtype", "set_default_tensor_type", "set_default_device", "set_printoptions", "manual_seed",
        "seed", "set_rng_state", "set_grad_enabled", "set_detect_anomaly", "set_num_threads",
        "set_num_interop_threads", "get_num_threads", "get_num_interop_threads", "use_deterministic_algorithms",
        "set_float32_matmul_precision", "register_hook", "register_post_accumulate_grad_hook", "data_ptr"}
# results drawn at random or uninitialised: compare shape and dtype only
RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like",
          "randn_like", "randint_like", "dropout", "empty", "empty_like", "new_empty", "get_rng_state",
          "initial_seed", "gumbel_softmax", "resize_", "resize_as_"}  # (resize_: a grown storage's new elements)
# microtorch-only formats: no oracle, only leaks count (torch.save pickles, microtorch writes .npz)
NO_ORACLE = {"load", "save"}
# Tensor operators, called the way Python calls them
OPERATORS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv, "__mod__": operator.mod, "__pow__": operator.pow,
    "__matmul__": operator.matmul, "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__radd__": lambda a, *b: operator.add(*b, a), "__rsub__": lambda a, *b: operator.sub(*b, a),
    "__rtruediv__": lambda a, *b: operator.truediv(*b, a), "__rpow__": lambda a, *b: operator.pow(*b, a),
    "__rmatmul__": lambda a, *b: operator.matmul(*b, a),
    "__iadd__": operator.iadd, "__isub__": operator.isub, "__imul__": operator.imul,
    "__itruediv__": operator.itruediv, "__ipow__": operator.ipow,
    "__getitem__": operator.getitem, "__setitem__": operator.setitem, "__neg__": operator.neg,
    "__pos__": operator.pos, "__abs__": operator.abs, "__invert__": operator.invert,
    "__float__": float, "__int__": int, "__bool__": bool, "__complex__": complex, "__len__": len,
    "__index__": operator.index, "__iter__": lambda a, *b: list(iter(a, *b)),
}


def families():
    """(family, microtorch namespace, torch namespace, argument lists) for each swept family."""
    import torch
    import microtorch as mt
    import microtorch.autograd.functional  # noqa: F401
    import microtorch.func  # noqa: F401
    import microtorch.nn.functional  # noqa: F401
    import torch.autograd.functional  # noqa: F401
    return [
        ("microtorch", mt, torch), ("Tensor", mt.Tensor, torch.Tensor),
        ("nn.functional", mt.nn.functional, torch.nn.functional), ("func", mt.func, torch.func),
        ("autograd", mt.autograd, torch.autograd),
        ("autograd.functional", mt.autograd.functional, torch.autograd.functional),
    ]


def public_names(ns, tns):
    """Public callables of a namespace that torch's namespace has too (torch is the oracle)."""
    import inspect
    out = []
    for name in sorted(dir(ns)):
        obj = getattr(ns, name, None)
        if name.startswith("_") or name in SKIP or not callable(obj) or inspect.isclass(obj) \
                or inspect.ismodule(obj) or not hasattr(tns, name):
            continue
        out.append(name)
    return out


def _keep(key, fraction):
    """A stable pseudo-random choice of cases (the same ones on every run)."""
    return zlib.crc32(key.encode()) % 1000 < fraction * 1000


def _hangs_torch(name, args):
    """torch 2.13's max_pool1d(x, 2**40, 2**40) loops in C for minutes (no signal interrupts it)."""
    return "pool" in name and any(isinstance(a, int) and a >= 2 ** 40 for a in args)


def cases(long=False):
    """Every case as (family, name, args, kwargs)."""
    rest = REST_CORE + (REST_MORE if long else [])
    out = []
    builtin_calls = ("__float__", "__int__", "__bool__", "__complex__", "__len__", "__index__", "__iter__")
    for fam, ns, tns in families():
        names = public_names(ns, tns)
        if fam == "Tensor":
            names += [n for n in OPERATORS if hasattr(ns, n)]
        for name in names:
            lists = [((first,) + args, kw) for first in FIRST for args, kw in rest  # float(x) and x + y take
                     if not (name in builtin_calls and args or name in OPERATORS and kw)]  # no more, no keywords
            if not long:  # the short profile: a stable 30% of the first-argument x core-table lists
                lists = [(a, k) for a, k in lists if _keep(f"{fam}.{name}{a}{k}", 0.3)]
            lists += [] if fam == "Tensor" else list(SOLO)  # and every whole argument list
            out += [(fam, name, a, k) for a, k in lists if not _hangs_torch(name, a)]
    return out


# ---- running one case ----------------------------------------------------------------------------
class Timeout(BaseException):
    """A case ran too long (BaseException: code under test must not swallow it)."""


class Raised:
    __slots__ = ("exc", "where")

    def __init__(self, exc, where):
        self.exc, self.where = exc, where


_TIMED_OUT = object()


def _alarm(signum, frame):
    raise Timeout()


def call(lib, fam, name, args, kwargs):
    """Run one case in `lib`: its result, or Raised(exception, where it was raised)."""
    memo = {}
    a, k = make(args, lib, memo), make(kwargs, lib, memo)
    try:
        if fam == "Tensor":
            fn = OPERATORS.get(name) or (lambda self, *r, **kw: getattr(self, name)(*r, **kw))
            out = fn(*a, **k)
        else:
            out = getattr(_NS[lib.__name__, fam], name)(*a, **k)
            if fam in ("func",) and callable(out) and not isinstance(out, type):
                out = out(make(T("f3"), lib, memo))  # a transform is only checked when called
        return out
    except Timeout:
        raise
    except Exception as e:  # noqa: BLE001 (every exception is an outcome here)
        return Raised(e, traceback.extract_tb(e.__traceback__)[-1])


_NS = {}  # (library name, family) -> namespace
_HERE = os.path.abspath(__file__)


def leak(raised, mt_dir):
    """Why an exception microtorch raised is an internal error, or None when it is its own."""
    e, last = raised.exc, raised.where
    path = os.path.abspath(last.filename)
    if type(e).__module__.startswith("numpy") or f"{os.sep}numpy{os.sep}" in path:
        return "numpy"
    if path == _HERE:  # the call itself (Python's own argument checks), or the user's function given to a
        return None  # transform failing on what it was given (torch passes both through as well)
    if isinstance(e, TypeError) and str(e).startswith("<lambda>()"):  # the user's function called with the
        return None  # wrong arguments (by a transform given too few primals): torch passes it through as well
    if not path.startswith(mt_dir):
        return "stdlib" if "site-packages" not in path else "library"
    line = (last.line or "").strip()
    if line.startswith("raise") or " raise " in f" {line} ":
        return None
    return type(e).__name__ if isinstance(e, (RecursionError, MemoryError)) else "internal"


def op_names(fam, name):
    """Names a message may use for the op."""
    base = name.strip("_")
    names = {name, base, base.rstrip("_"), base[1:] if base.startswith("r") and fam == "Tensor" else base}
    aliases = {"absolute": "abs", "negative": "neg", "multiply": "mul", "divide": "div", "true_divide": "div",
               "subtract": "sub", "clip": "clamp", "concat": "cat", "concatenate": "cat", "swapaxes": "transpose",
               "swapdims": "transpose", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
               "not_equal": "ne", "moveaxis": "movedim", "truediv": "div", "itruediv": "div", "iadd": "add", "isub": "sub",
               "imul": "mul", "ipow": "pow", "matmul": "matmul", "getitem": "index", "setitem": "index"}
    names |= {aliases.get(n, n) for n in list(names)}
    return names


# ---- comparing outcomes --------------------------------------------------------------------------
def same(t, m, shape_only=False):
    """Is microtorch's result `m` equal to torch's `t`? (a reason string when not)"""
    import torch
    import microtorch as mt
    if isinstance(t, torch.Tensor):
        if not isinstance(m, mt.Tensor):
            return f"torch gave a Tensor, microtorch a {type(m).__name__}"
        if tuple(t.shape) != tuple(m.shape):
            return f"shape {list(t.shape)} vs {list(m.shape)}"
        if str(t.dtype).split(".")[-1] != m.dtype.name:
            return f"dtype {t.dtype} vs {m.dtype}"
        if shape_only or t.numel() > 10 ** 6:
            return None
        a = t.detach().resolve_conj().resolve_neg().numpy()
        b = m.detach().numpy()
        if a.dtype.kind in "fc":
            ok = np.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True)
        else:
            ok = np.array_equal(a, b)
        return None if ok else f"values {a.ravel()[:4]} vs {b.ravel()[:4]}"
    if isinstance(t, (tuple, list)):
        if not isinstance(m, (tuple, list)) or len(t) != len(m):
            return f"torch gave {type(t).__name__} of {len(t)}, microtorch {type(m).__name__}"
        for x, y in zip(t, m):
            r = same(x, y, shape_only)
            if r:
                return r
        return None
    if isinstance(t, torch.dtype):
        return None if str(t).split(".")[-1] == str(m).split(".")[-1] else f"{t} vs {m}"
    if isinstance(t, (bool, int, float, complex)) and not shape_only:
        if not isinstance(m, (bool, int, float, complex, np.number)):
            return f"torch gave {t!r}, microtorch {type(m).__name__}"
        if type(t) is not type(m) and not (type(t) is float and isinstance(m, np.floating)):
            return f"torch gave {type(t).__name__} {t!r}, microtorch {type(m).__name__} {m!r}"
        both_nan = isinstance(t, float) and math.isnan(t) and math.isnan(m)
        return None if both_nan or t == m or abs(t - m) <= 1e-5 * abs(t) else f"{t!r} vs {m!r}"
    if t is None or isinstance(t, str):
        return None if m == t else f"{t!r} vs {m!r}"
    return None  # handles, context managers, functions: not compared


def judge(fam, name, t_out, m_out, mt_dir):
    """(category, detail) for one case."""
    if isinstance(m_out, Raised):
        why = leak(m_out, mt_dir)
        if why:
            w = m_out.where
            return "leak", f"{why}: {type(m_out.exc).__name__}: {str(m_out.exc)[:160]} " \
                           f"[{os.path.basename(w.filename)}:{w.lineno} {(w.line or '').strip()[:60]}]"
    if name in NO_ORACLE:
        return "ok", ""
    if isinstance(t_out, Raised) and isinstance(m_out, Raised):
        if _torch_leaked(t_out):  # torch's own internal error: any clean error of microtorch's is better
            return "ok", ""
        ttype = next(c for c in type(t_out.exc).__mro__ if c.__module__ == "builtins")
        if not isinstance(m_out.exc, ttype):
            return "type", f"torch {type(t_out.exc).__name__}: {str(t_out.exc)[:100]!r}; " \
                           f"microtorch {type(m_out.exc).__name__}: {str(m_out.exc)[:100]!r}"
        if str(m_out.exc).replace("microtorch", "torch") == str(t_out.exc):
            return "ok", ""  # torch's own words (Python's, where both operators give way to the other operand)
        msg = str(m_out.exc).lower()
        if not any(n.lower() in msg for n in op_names(fam, name)):
            return "message", f"{type(m_out.exc).__name__}: {str(m_out.exc)[:160]!r}"
        return "ok", ""
    if isinstance(t_out, Raised):
        return "silent", f"torch {type(t_out.exc).__name__}: {str(t_out.exc)[:120]!r}; microtorch returned " \
                         f"{_short(m_out)}"
    if isinstance(m_out, Raised):
        return "refused", f"microtorch {type(m_out.exc).__name__}: {str(m_out.exc)[:120]!r}; torch returned " \
                          f"{_short(t_out)}"
    why = same(t_out, m_out, shape_only=name in RANDOM)
    return ("value", why) if why else ("ok", "")


def _torch_leaked(t_out):
    """torch's Python code tripping over a bad argument (`torch.norm([t])`: AttributeError 'list' object has no
    attribute 'layout'): no type to copy."""
    internal = (AttributeError, AssertionError, KeyError, IndexError, UnboundLocalError)
    return isinstance(t_out.exc, internal) and f"{os.sep}torch{os.sep}" in t_out.where.filename and \
        not (t_out.where.line or "").strip().startswith("raise")


def _short(x):
    try:
        return repr(x).replace("\n", " ")[:80]
    except Exception as e:  # noqa: BLE001
        return f"a {type(x).__name__} whose repr raises {type(e).__name__}: {e}"


def run(case_list, per_case_seconds=5.0, progress=None):
    """Run the cases; a list of (case, category, detail)."""
    import torch
    import microtorch as mt
    for fam, ns, tns in families():
        _NS["microtorch", fam], _NS["torch", fam] = ns, tns
    mt_dir = os.path.dirname(os.path.abspath(mt.__file__))
    old = signal.signal(signal.SIGALRM, _alarm)
    results = []
    try:
        for i, case in enumerate(case_list):
            fam, name, args, kwargs = case
            outs = []
            for lib in (torch, mt):
                signal.setitimer(signal.ITIMER_REAL, per_case_seconds)
                try:
                    outs.append(call(lib, fam, name, args, kwargs))
                except Timeout:
                    outs.append(_TIMED_OUT)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    _restore(lib)
            if outs[1] is _TIMED_OUT:
                results.append((case, "timeout", f"microtorch ran over {per_case_seconds} s"))
            elif outs[0] is _TIMED_OUT:
                results.append((case, "ok", "torch timed out"))
            else:
                try:
                    results.append((case, *judge(fam, name, outs[0], outs[1], mt_dir)))
                except Exception as e:  # noqa: BLE001 (a result that cannot even be compared)
                    results.append((case, "value", f"comparing raised {type(e).__name__}: {e}"))
            if progress and i % 5000 == 0:
                progress(i)
    finally:
        signal.signal(signal.SIGALRM, old)
    return results


def _restore(lib):
    """Leave global state as it was (a case may have entered a mode and raised)."""
    lib.set_grad_enabled(True)
    if lib.get_default_dtype() != lib.float32:
        lib.set_default_dtype(lib.float32)


def describe(case):
    fam, name, args, kwargs = case
    kw = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    a = ", ".join(repr(x) for x in args)
    if fam == "Tensor":
        return f"{args[0]!r}.{name}({', '.join(repr(x) for x in args[1:])}{', ' if kw and len(args) > 1 else ''}{kw})"
    return f"{fam}.{name}({a}{', ' if kw and a else ''}{kw})"


CATEGORIES = ("leak", "timeout", "type", "message", "silent", "refused", "value", "ok")


def summary(results):
    counts = {c: 0 for c in CATEGORIES}
    for _, cat, _ in results:
        counts[cat] += 1
    return counts


def known_key(case, category):
    """The line of api_sweep_known.txt that accepts a difference: its category and the callable."""
    return f"{category} {case[0]}.{case[1]}"


def write_known(path, results):
    keep = set()
    if os.path.exists(path):
        with open(path) as f:
            keep = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    keys = keep | {known_key(c, cat) for c, cat, _ in results if cat not in ("ok", "leak", "timeout")}
    with open(path, "w") as f:
        f.write(KNOWN_HEADER + "\n".join(sorted(keys)) + "\n")


KNOWN_HEADER = """\
# Differences from torch 2.13 that the API sweep (tests/api_sweep.py) accepts, one per line:
# "<category> <callable>", where the category is one of
#   type     both raise, microtorch's exception is not an instance of torch's type
#   message  both raise the same type, microtorch's message does not name the op
#   silent   torch raises, microtorch returns (it accepts more argument types than torch)
#   refused  torch returns, microtorch raises a clean error (a form it does not support)
#   value    both return, with different results
# A line accepts that category for every bad-argument list of that callable (the instances are
# printed by `python tests/api_sweep.py --show type message ...`). Leaks are never accepted.
# The list may only shrink: fix a difference and delete its line. Regenerate with
#   PYTHONPATH=. python tests/api_sweep.py --write-known tests/api_sweep_known.txt [--long]
"""


def limit_memory(extra_bytes=3 * 2 ** 30):
    """Cap this process's address space at what it uses now plus `extra_bytes`, so that a case
    that really allocates a huge array fails with MemoryError instead of exhausting the machine."""
    import resource
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + extra_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def main(argv):
    import argparse
    import json
    import tempfile
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--long", action="store_true", help="every argument list, not the short profile")
    p.add_argument("--show", nargs="*", default=["leak", "timeout"], help="categories to list")
    p.add_argument("--only", help="only callables with this name")
    p.add_argument("--json", help="write results to this file")
    p.add_argument("--max-show", type=int, default=400)
    p.add_argument("--write-known", metavar="FILE", help="list the callables that differ from torch in FILE (keeps "
                   "the entries already there: run the short and the long profile one after the other)")
    opts = p.parse_args(argv)
    import warnings
    warnings.simplefilter("ignore")  # deprecation and user warnings from both libraries
    import torch
    torch.set_num_threads(1)
    import microtorch  # noqa: F401
    all_cases = cases(long=opts.long or bool(os.environ.get("MICROTORCH_SWEEP_LONG")))
    if opts.only:
        all_cases = [c for c in all_cases if c[1] == opts.only]
    limit_memory()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:  # save() with a bad path writes here, not in the repo
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            results = run(all_cases, progress=lambda i: print(f"{i}/{len(all_cases)} cases, "
                                                              f"{time.perf_counter() - start:.0f} s", file=sys.stderr,
                                                              flush=True))
        finally:
            os.chdir(cwd)
    seconds = time.perf_counter() - start
    counts = summary(results)
    for case, cat, detail in results:
        if cat in opts.show and opts.max_show > 0:
            opts.max_show -= 1
            print(f"{cat:8} {describe(case)}\n         {detail}")
    print(f"{len(results)} cases in {seconds:.1f} s: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if opts.write_known:
        write_known(opts.write_known, results)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"seconds": seconds, "counts": counts,
                       "problems": [[describe(c), cat, d, known_key(c, cat)] for c, cat, d in results
                                    if cat != "ok"]}, f)


if __name__ == "__main__":
    main(sys.argv[1:])
