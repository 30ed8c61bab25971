"""The seeded program generator: what microtorch shares with torch, at the points where formulas are special.

`generate(seed)` draws a Program. It runs each step on torch as it goes (torch is the oracle) so that
the next step can pick arguments that fit the shapes it sees; a step torch refuses ends the program
(the runner then compares exception types).
"""
import random
import string

import numpy as np

from .program import Leaf, Program, Step

UNARY = ["neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "relu", "square", "reciprocal",
         "rsqrt", "log1p", "expm1", "atan", "sinh", "cosh", "erf", "sign", "asin", "tan"]
ACTIVATIONS = ["F.gelu({0})", "F.elu({0})", "F.leaky_relu({0}, 0.2)", "F.softplus({0})", "F.relu({0})",
               "F.gelu({0}, approximate='tanh')", "F.softplus({0}, beta=2.0, threshold=1.0)"]
BINARY = ["L.add({0}, {1})", "L.sub({0}, {1})", "L.mul({0}, {1})", "L.div({0}, {1})", "L.pow({0}, {1})",
          "L.maximum({0}, {1})", "L.minimum({0}, {1})", "L.add({0}, {1}, alpha=-2)", "{0} * {1}", "{0} - {1}",
          "L.where({0} > {1}, {0}, {1})", "L.where({0} > 0, {1}, {0})"]
SCALAR = ["{0} * 2.5", "{0} + 1", "1 - {0}", "{0} / 3", "2.0 / {0}", "2.0 ** {0}", "{0} * 0", "-{0}"]
POW_EXPONENTS = [0, 0.0, 1, 2, 3, -1, -2, 0.5, 1.5, 2.5, -0.5]
INPLACE_UNARY = ["{0}.add_(1.5)", "{0}.mul_(2)", "{0}.div_(-2)", "{0}.clamp_(min=0)", "{0}.clamp_(max=0.5)",
                 "{0}.relu_()", "{0}.exp_()", "{0}.sigmoid_()", "{0}.tanh_()", "{0}.neg_()", "{0}.pow_(2)",
                 "{0}.zero_()", "{0}.fill_(0.5)", "{0}.sub_(0.5)", "{0}.clamp_(-1.0, 1.0)", "{0}.mul_(0)"]
INPLACE_BINARY = ["{0}.add_({1})", "{0}.mul_({1})", "{0}.sub_({1}, alpha=2)", "{0}.copy_({1})", "{0}.div_({1})"]
# the wider profile (WIDER_FROM below): more of what a course uses
UNARY2 = ["L.log2({0})", "L.exp2({0})", "L.log10({0})", "L.atanh({0})", "L.acos({0})", "L.asinh({0})", "L.erfc({0})",
          "L.sinc({0})", "L.trunc({0})", "L.frac({0})", "L.logit({0})", "L.sgn({0})", "L.nan_to_num({0})",
          "F.silu({0})", "F.mish({0})", "F.hardtanh({0})", "F.softsign({0})", "F.logsigmoid({0})", "F.selu({0})",
          "F.celu({0})", "F.hardswish({0})", "F.hardsigmoid({0})", "F.relu6({0})", "F.softshrink({0})",
          "F.hardshrink({0})", "F.tanhshrink({0})", "L.square({0}).sqrt()", "{0}.detach()",
          "({0}.register_hook(lambda g: g * 2) and {0})", "({0}.register_hook(lambda g: None) and {0})"]
BINARY2 = ["L.atan2({0}, {1})", "L.hypot({0}, {1})", "L.fmod({0}, {1})", "L.remainder({0}, {1})", "L.lerp({0}, {1}, 0.3)",
           "L.xlogy({0}, {1})", "L.copysign({0}, {1})", "L.fmax({0}, {1})", "L.fmin({0}, {1})", "L.logaddexp({0}, {1})",
           "L.addcmul({0}, {0}, {1}, value=0.5)", "L.addcdiv({0}, {0}, {1}, value=-0.5)", "L.clamp({0}, min={1})",
           "L.clamp({0}, max={1})", "L.where({0} > {1}, {0}, 0.0)", "L.dist({0}, {1})", "L.lerp({0}, {1}, {1})"]
SAME_SHAPE2 = ["F.mse_loss({0}, {1})", "F.l1_loss({0}, {1}, reduction='sum')", "F.smooth_l1_loss({0}, {1})",
               "F.huber_loss({0}, {1}, delta=0.5)", "F.binary_cross_entropy_with_logits({0}, L.sigmoid({1}))",
               "F.kl_div({0}, L.softmax({1}, -1), reduction='batchmean')", "F.mse_loss({0}, {1}, reduction='none')"]
INPLACE2 = ["{0}.masked_fill_({0} > 0, 1.0)", "{0}.sqrt_()", "{0}.abs_()", "{0}.sin_()", "{0}.log_()",
            "{0}.clamp_(-0.5, 0.5)", "{0}.square_()", "{0}.reciprocal_()", "{0}.t_()", "{0}.squeeze_()",
            "{0}.unsqueeze_(0)", "{0}.transpose_(0, -1)"]


class Gen:
    """Draws one program; `self.env` holds the torch tensors of the steps so far."""

    def __init__(self, seed, torch):
        self.rng = random.Random(seed)
        self.nrng = np.random.default_rng(seed)
        self.torch, self.seed = torch, seed
        self.leaves, self.steps, self.env = [], [], {}
        self.zero_dims = self.rng.random() < 0.12

    # ---- leaves ------------------------------------------------------------------------------------
    def shape(self, ndim=None):
        ndim = self.rng.choices(range(5), [15, 25, 30, 20, 10])[0] if ndim is None else ndim
        return tuple(self.size() for _ in range(ndim))

    def size(self):
        if self.zero_dims and self.rng.random() < 0.25:
            return 0
        return self.rng.choice([1, 1, 2, 2, 3, 3, 4])

    def values(self, shape):
        mode = self.rng.choices(["normal", "ints", "equal", "pos"], [45, 25, 10, 20])[0]
        if mode == "normal":
            return self.nrng.standard_normal(shape)
        if mode == "ints":
            return self.nrng.integers(-2, 3, shape).astype(np.float64)
        if mode == "equal":
            return np.full(shape, self.rng.choice([0.0, 1.0, -0.5]))
        return np.abs(self.nrng.standard_normal(shape)) + 0.1

    def leaf(self, shape, requires_grad=None):
        name = f"a{len(self.leaves)}"
        rg = self.rng.random() < 0.85 if requires_grad is None else requires_grad
        leaf = Leaf(name, self.values(shape), rg)
        self.leaves.append(leaf)
        self.env[name] = self.torch.tensor(leaf.values.copy(), requires_grad=rg)
        return name

    # ---- picking arguments ----------------------------------------------------------------------------
    def floats(self):
        return [k for k, t in self.env.items() if t.dtype == self.torch.float64]

    def pick(self, pred=lambda t: True):
        names = [k for k in self.floats() if pred(self.env[k])]
        if not names:
            return None
        if self.rng.random() < 0.6:
            return names[-1]
        return self.rng.choice(names)

    def t(self, name):
        return self.env[name]

    def dim(self, nd, allow_none=False):
        if allow_none and self.rng.random() < 0.25:
            return None
        n = max(nd, 1)
        return self.rng.randrange(-n, n)

    def dims(self, nd):
        if nd == 0:
            return self.rng.choice([(), (0,), (-1,)])
        k = self.rng.randint(1, nd)
        return tuple(sorted(self.rng.sample(range(nd), k)))

    def broadcast_partner(self, shape):
        """A shape that broadcasts with `shape`: drop leading dims, set some to 1, add leading dims."""
        s = list(shape[self.rng.randint(0, len(shape)):]) if shape and self.rng.random() < 0.3 else list(shape)
        s = [1 if self.rng.random() < 0.25 else d for d in s]
        if self.rng.random() < 0.15 and len(s) < 4:
            s = [self.rng.choice([1, 2])] + s
        return tuple(s)

    # ---- the steps ----------------------------------------------------------------------------------
    def add(self, op, expr, args, arrays=None, inplace=False):
        out = f"v{len(self.steps)}"
        step = Step(out, op, expr, tuple(args), dict(arrays or {}), inplace)
        self.steps.append(step)
        from .run import eval_step
        try:
            self.env[out] = eval_step(self.torch, step, self.env)
        except Exception:
            return False
        return True

    def draw_step(self):
        makers = MAKERS if self.seed < WIDER_FROM else WIDER_MAKERS
        kind = self.rng.choices(list(makers), [w for w, _ in makers.values()])[0]
        return makers[kind][1](self)


def generate(seed, torch, min_steps=2, max_steps=12):
    import warnings
    g = Gen(seed, torch)
    n = g.rng.randint(min_steps, max_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g.leaf(g.shape(), requires_grad=True)
        if g.rng.random() < 0.4:
            g.leaf(g.shape())
        while len(g.steps) < n:
            try:
                made = g.draw_step()
            except RuntimeError:  # torch refuses to even read a view whose base changed: end here
                made = False
            if made is False:
                break
    return Program(seed, g.leaves, g.steps)


# ---- the makers: each appends one step (returns False when torch refused it, None if it did not fit) ----
def m_unary(g):
    x = g.pick()
    r = g.rng.random()
    if r < 0.55:
        return g.add(name := g.rng.choice(UNARY), f"L.{name}({{0}})", [x])
    if r < 0.7:
        e = g.rng.choice(ACTIVATIONS)
        return g.add("F." + e.split("(")[0][2:], e, [x])
    if r < 0.85:
        e = g.rng.choice(POW_EXPONENTS)
        return g.add("pow_scalar", g.rng.choice(["L.pow({0}, %r)", "{0} ** %r"]) % e, [x])
    lo, hi = g.rng.choice([(None, 0.5), (0, None), (-1, 1), (0, 0), (1, -1), (-0.5, 0.5)])
    return g.add("clamp", f"L.clamp({{0}}, min={lo}, max={hi})", [x])


def m_scalar(g):
    return g.add("scalar", g.rng.choice(SCALAR), [g.pick()])


def m_binary(g):
    x = g.pick()
    shape = tuple(g.t(x).shape)
    others = [k for k in g.floats() if k != x and _broadcasts(shape, tuple(g.t(k).shape))]
    y = g.rng.choice(others) if others and g.rng.random() < 0.4 else g.leaf(g.broadcast_partner(shape))
    a, b = (x, y) if g.rng.random() < 0.7 else (y, x)
    e = g.rng.choice(BINARY)
    return g.add(e.split("(")[0].replace("L.", "") if "(" in e else "operator", e, [a, b])


def _broadcasts(s, t):
    return all(a == b or a == 1 or b == 1 for a, b in zip(s[::-1], t[::-1]))


def m_reduce(g):
    x = g.pick()
    nd = g.t(x).ndim
    kd = g.rng.random() < 0.4
    r = g.rng.randrange(11)
    if r == 0:
        d = g.dim(nd, True) if g.rng.random() < 0.6 else g.dims(nd)
        return g.add("sum", f"L.sum({{0}}, dim={d!r}, keepdim={kd})" if d is not None else "L.sum({0})", [x])
    if r == 1:
        d = g.dim(nd) if g.rng.random() < 0.6 else g.dims(nd)
        return g.add("mean", f"{{0}}.mean(dim={d!r}, keepdim={kd})" if g.rng.random() < 0.8 else "{0}.mean()", [x])
    if r in (2, 3):
        op = g.rng.choice(["var", "std"])
        d = g.dim(nd, True) if g.rng.random() < 0.7 else g.dims(nd)
        c = g.rng.choice(["correction=0", "correction=1", "correction=2", "unbiased=False", "unbiased=True"])
        return g.add(op, f"L.{op}({{0}}, dim={d!r}, {c}, keepdim={kd})", [x])
    if r == 4:
        d = g.dim(nd, True)
        return g.add("prod", f"L.prod({{0}}, dim={d}, keepdim={kd})" if d is not None else "L.prod({0})", [x])
    if r == 5:
        p = g.rng.choice([1, 2, 3, "'fro'", "float('inf')", 0.5])
        d = g.dim(nd, True)
        return g.add("norm", f"L.norm({{0}}, p={p}, dim={d}, keepdim={kd})" if d is not None
                     else f"L.norm({{0}}, p={p})", [x])
    if r == 6:
        d = g.dim(nd) if g.rng.random() < 0.7 else g.dims(nd)
        return g.add("logsumexp", f"L.logsumexp({{0}}, dim={d!r}, keepdim={kd})", [x])
    if r == 7:
        op = g.rng.choice(["amax", "amin"])
        d = g.dim(nd) if g.rng.random() < 0.6 else g.dims(nd)
        return g.add(op, f"L.{op}({{0}}, dim={d!r}, keepdim={kd})", [x])
    if r == 8:
        op = g.rng.choice(["max", "min"])
        return g.add(op, f"L.{op}({{0}})", [x])
    op, which = g.rng.choice(["max", "min"]), g.rng.choice(["values", "values", "indices"])
    return g.add(f"{op}_dim", f"L.{op}({{0}}, dim={g.dim(nd)}, keepdim={kd}).{which}", [x])


def m_shape(g):
    x = g.pick()
    t = g.t(x)
    nd, shape = t.ndim, tuple(t.shape)
    r = g.rng.randrange(12)
    if r in (0, 1):
        new = _reshape_target(g, shape)
        op = "view" if r == 1 and g.rng.random() < 0.7 else "reshape"
        return g.add(op, f"{{0}}.{op}({new!r})", [x])
    if r == 2:
        d0, d1 = g.dim(nd), g.dim(nd)
        return g.add("transpose", f"{{0}}.transpose({d0}, {d1})", [x])
    if r == 3:
        if nd > 2:
            return None
        return g.add("t", g.rng.choice(["{0}.t()", "L.t({0})"]), [x])
    if r == 4:
        perm = list(range(nd))
        g.rng.shuffle(perm)
        return g.add("permute", f"{{0}}.permute({tuple(perm)!r})", [x])
    if r == 5:
        sizes = [(-1 if g.rng.random() < 0.3 else s) if s != 1 else g.rng.choice([1, 2, 3, -1]) for s in shape]
        if g.rng.random() < 0.3:
            sizes = [g.rng.choice([1, 2])] + sizes
        return g.add("expand", f"{{0}}.expand({tuple(sizes)!r})", [x])
    if r == 6:
        if g.rng.random() < 0.4:
            return g.add("squeeze", "{0}.squeeze()", [x])
        return g.add("squeeze", f"{{0}}.squeeze({g.dim(nd)})", [x])
    if r == 7:
        return g.add("unsqueeze", f"{{0}}.unsqueeze({g.rng.randrange(-nd - 1, nd + 1)})", [x])
    if r == 8:
        return m_cat(g, x, shape)
    if r == 9:
        d = g.dim(nd)
        if g.rng.random() < 0.5:
            return g.add("split", f"L.split({{0}}, {g.rng.choice([1, 2, 3])}, dim={d})[{g.rng.choice([0, -1])}]", [x])
        n = shape[d] if nd else 0
        cut = g.rng.randint(0, n) if nd else 0
        return g.add("split", f"{{0}}.split([{cut}, {n - cut}], dim={d})[{g.rng.choice([0, 1])}]", [x])
    if r == 10:
        return g.add("flip", f"L.flip({{0}}, {g.dims(nd)!r})", [x])
    e = g.rng.choice(["{0}.flatten()", "{0}.clone()", "{0}.contiguous()", "{0}.mT", "{0}.flatten(1)"])
    return g.add(e.split("(")[0][4:].lstrip("."), e, [x])


def _reshape_target(g, shape):
    n = int(np.prod(shape))
    if n == 0:
        return g.rng.choice([(0,), (-1,), (0, 2), (2, 0, 1)])
    factors = [f for f in range(1, n + 1) if n % f == 0]
    out, left = [], n
    for _ in range(g.rng.randint(0, 3)):
        f = g.rng.choice([f for f in factors if left % f == 0])
        out.append(f)
        left //= f
    out.append(left)
    if g.rng.random() < 0.3:
        out[g.rng.randrange(len(out))] = -1
    if out == [1] and g.rng.random() < 0.5:
        return ()
    return tuple(out)


def m_cat(g, x, shape):
    nd = len(shape)
    if nd == 0 or g.rng.random() < 0.3:
        parts = [x] + [g.leaf(shape) for _ in range(g.rng.randint(1, 2))]
        d = g.rng.randrange(-nd - 1, nd + 1)
        names = ", ".join("{%d}" % i for i in range(len(parts)))
        return g.add("stack", f"L.stack([{names}], dim={d})", parts)
    d = g.dim(nd)
    parts = [x]
    for _ in range(g.rng.randint(1, 2)):
        s = list(shape)
        s[d] = g.rng.choice([0, 1, 2])
        parts.append(g.leaf(tuple(s)))
    g.rng.shuffle(parts)
    names = ", ".join("{%d}" % i for i in range(len(parts)))
    return g.add("cat", f"L.cat([{names}], dim={d})", parts)


def m_index(g):
    x = g.pick()
    t = g.t(x)
    nd, shape = t.ndim, tuple(t.shape)
    r = g.rng.randrange(5)
    name = f"k{len(g.steps)}"
    if r == 0 and nd:
        d = g.dim(nd)
        idx = g.nrng.integers(0, shape[d], size=tuple(g.size() or 1 for _ in range(nd))) if shape[d] else \
            np.zeros([1] * nd, np.int64)
        idx = idx.astype(np.int64)
        idx_shape = list(idx.shape)
        for i in range(nd):
            if i != d % nd:
                idx_shape[i] = min(idx_shape[i], shape[i])
        idx = idx[tuple(slice(0, s) for s in idx_shape)]
        return g.add("gather", f"L.gather({{0}}, {d}, {name})", [x], {name: idx})
    if r == 1 and nd:
        d = g.dim(nd)
        n = shape[d]
        idx = g.nrng.integers(-n if n else 0, n, size=g.rng.randint(0, 4)) if n else np.zeros(0, np.int64)
        idx = np.where(idx < 0, idx + n, idx).astype(np.int64)
        return g.add("index_select", f"L.index_select({{0}}, {d}, {name})", [x], {name: idx})
    if r == 2 and nd:
        mask = g.nrng.random(shape) < 0.5
        return g.add("mask_index", f"{{0}}[{name}]", [x], {name: mask})
    key, arrays = _index_key(g, shape, name)
    return g.add("getitem", f"{{0}}[{key}]", [x], arrays)


def _index_key(g, shape, name):
    parts, arrays, d = [], {}, 0
    used_ellipsis = False
    for _ in range(g.rng.randint(1, 3)):
        r = g.rng.random()
        if r < 0.12:
            parts.append("None")
            continue
        if r < 0.2 and not used_ellipsis:
            parts.append("...")
            used_ellipsis = True
            d = len(shape) - sum(1 for p in parts if p not in ("None", "..."))
            continue
        if d >= len(shape):
            break
        n = shape[d]
        if r < 0.45 and n:
            parts.append(str(g.rng.randrange(-n, n)))
        elif r < 0.85:
            a, b = g.rng.choice([None, 0, 1, -1]), g.rng.choice([None, 2, -1, 3])
            st = g.rng.choice([None, None, 2])
            parts.append(":".join("" if v is None else str(v) for v in (a, b, st)).rstrip(":") or ":")
        else:
            arr_name = f"{name}_{d}"
            arrays[arr_name] = g.nrng.integers(-n, n, size=g.rng.randint(0, 4)).astype(np.int64) if n else \
                np.zeros(0, np.int64)
            parts.append(arr_name)
        d += 1
    return (", ".join(parts) or "...") if len(parts) != 1 else parts[0], arrays


def m_matmul(g):
    x = g.pick(lambda t: t.ndim >= 1) or g.leaf(g.shape(g.rng.randint(1, 3)))
    shape = tuple(g.t(x).shape)
    k = shape[-1]
    nd = g.rng.choice([1, 1, 2, 2, 3, 4])
    if nd == 1:
        other = (k,)
    else:
        batch = list(shape[:-2][-(nd - 2):]) if nd > 2 and len(shape) > 2 else []
        batch = [1 if g.rng.random() < 0.3 else b for b in batch]
        while len(batch) < nd - 2:
            batch = [g.rng.choice([1, 2])] + batch
        other = tuple(batch) + (k, g.size())
    y = g.leaf(other)
    if g.rng.random() < 0.3 and len(shape) >= 2:  # the fresh operand on the left: (.., m, n) @ x
        y = g.leaf(shape[:-2] + (g.size(), shape[-2]))
        return g.add("matmul", g.rng.choice(["L.matmul({0}, {1})", "{0} @ {1}"]), [y, x])
    return g.add("matmul", g.rng.choice(["L.matmul({0}, {1})", "{0} @ {1}"]), [x, y])


def m_einsum(g):
    x = g.pick(lambda t: t.ndim <= 3)
    if x is None:
        return None
    shape = tuple(g.t(x).shape)
    letters = iter(string.ascii_lowercase)
    xs = [next(letters) for _ in shape]
    sizes = dict(zip(xs, shape))
    if len(shape) >= 2 and shape[0] == shape[1] and g.rng.random() < 0.3:
        xs[1] = xs[0]  # a repeated label takes the diagonal
    if g.rng.random() < 0.35:  # one operand
        out = [c for c in dict.fromkeys(xs) if g.rng.random() < 0.6]
        g.rng.shuffle(out)
        return g.add("einsum", f"L.einsum('{''.join(xs)}->{''.join(out)}', {{0}})", [x])
    ys, yshape = [], []
    for _ in range(g.rng.randint(0, 3)):
        if xs and g.rng.random() < 0.6:
            c = g.rng.choice(xs)
            if c in ys:
                continue
            ys.append(c)
            yshape.append(1 if g.rng.random() < 0.2 else sizes[c])
        else:
            c = next(letters)
            ys.append(c)
            yshape.append(g.size())
    y = g.leaf(tuple(yshape))
    labels = list(dict.fromkeys(xs + ys))
    out = [c for c in labels if g.rng.random() < 0.5]
    g.rng.shuffle(out)
    sx, sy, so = "".join(xs), "".join(ys), "".join(out)
    if g.rng.random() < 0.2 and xs and ys:  # a leading ellipsis on both operands
        sx, sy, so = "..." + sx[1:], "..." + sy[1:], "..." + so.replace(xs[0], "").replace(ys[0], "")
    return g.add("einsum", f"L.einsum('{sx},{sy}->{so}', {{0}}, {{1}})", [x, y])


def m_softmax(g):
    x = g.pick()
    nd = g.t(x).ndim
    e = g.rng.choice(["L.softmax({0}, %d)", "L.log_softmax({0}, %d)", "F.softmax({0}, dim=%d)",
                      "F.log_softmax({0}, dim=%d)"]) % g.dim(nd)
    return g.add("softmax" if "log" not in e else "log_softmax", e, [x])


def m_cross_entropy(g):
    x = g.pick(lambda t: t.ndim in (1, 2, 3))
    if x is None or g.t(x).shape[1 if g.t(x).ndim > 1 else 0] == 0 or g.rng.random() < 0.3:
        x = g.leaf((g.rng.choice([1, 2, 3]), g.rng.choice([1, 2, 4])))
    shape = tuple(g.t(x).shape)
    c = shape[1] if len(shape) > 1 else shape[0]
    red = g.rng.choice(["mean", "sum", "none"])
    name = f"k{len(g.steps)}"
    if g.rng.random() < 0.25:  # class probabilities as target
        p = g.nrng.random(shape)
        p = p / p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)
        return g.add("cross_entropy", f"F.cross_entropy({{0}}, {name}, reduction='{red}')", [x], {name: p})
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    target = g.nrng.integers(0, c, size=tshape).astype(np.int64)
    return g.add("cross_entropy", f"F.cross_entropy({{0}}, {name}, reduction='{red}')", [x], {name: target})


def m_inplace(g):
    cands = [k for k in g.floats() if not g.t(k).is_leaf or not g.t(k).requires_grad]
    if not cands or g.rng.random() < 0.04:
        cands = g.floats()
    x = cands[-1] if g.rng.random() < 0.6 else g.rng.choice(cands)
    if g.rng.random() < 0.3:  # make a view of it first, then modify the view
        t = g.t(x)
        views = ["{0}[0]", "{0}[..., 1:]", "{0}.transpose(0, -1)", "{0}.t()[0]", "{0}.diagonal()",
                 "L.einsum('ii->i', {0})", "{0}.expand({1})", "{0}.view(-1)", "{0}[:, ::2]", "{0}.unsqueeze(0)"]
        v = g.rng.choice(views)
        if "{1}" in v:
            v = v.replace("{1}", repr(tuple(t.shape)))
        if not g.add("view", v, [x]):
            return False
        x = g.steps[-1].out
    if g.rng.random() < 0.3:
        shape = tuple(g.t(x).shape)
        y = g.leaf(g.broadcast_partner(shape) if g.rng.random() < 0.5 else shape)
        return g.add("inplace", g.rng.choice(INPLACE_BINARY), [x, y], inplace=True)
    if g.rng.random() < 0.15 and g.t(x).ndim:  # x[0] = 2.0, as an expression
        return g.add("setitem", "{0}.__setitem__(0, 2.0) or {0}", [x], inplace=True)
    return g.add("inplace", g.rng.choice(INPLACE_UNARY), [x], inplace=True)


def m_unary2(g):
    return g.add("unary2", g.rng.choice(UNARY2), [g.pick()])


def m_binary2(g):
    x = g.pick()
    shape = tuple(g.t(x).shape)
    if g.rng.random() < 0.3:  # the losses and the others of two same-shaped operands
        return g.add("loss", g.rng.choice(SAME_SHAPE2), [x, g.leaf(shape)])
    y = g.leaf(g.broadcast_partner(shape))
    a, b = (x, y) if g.rng.random() < 0.7 else (y, x)
    return g.add("binary2", g.rng.choice(BINARY2), [a, b])


def m_dim_op(g):
    """ops along one dim: scans, sorts and selections, and shape ops that take a dim"""
    x = g.pick()
    t = g.t(x)
    nd, shape = t.ndim, tuple(t.shape)
    d = g.dim(nd)
    n = shape[d] if nd else 1
    k = g.rng.randint(1, max(n, 1))
    e = g.rng.choice([
        f"L.cumsum({{0}}, {d})", f"L.cumprod({{0}}, {d})", f"L.logcumsumexp({{0}}, {d})", f"L.cummax({{0}}, {d}).values",
        f"L.cummin({{0}}, {d}).indices", f"L.sort({{0}}, {d}, descending=True).values", f"L.sort({{0}}, {d}).indices",
        f"L.topk({{0}}, {k}, {d}).values", f"L.topk({{0}}, {k}, {d}, largest=False).values",
        f"L.median({{0}}, {d}).values", f"L.kthvalue({{0}}, {k}, {d}).values", "L.median({0})", "L.msort({0})",
        f"L.diff({{0}}, dim={d})", f"L.roll({{0}}, {g.rng.choice([1, -2])}, {d})", f"L.narrow({{0}}, {d}, 0, {k})",
        f"L.select({{0}}, {d}, {k - 1})", f"{{0}}.unbind({d})[0]", f"L.chunk({{0}}, 2, {d})[-1]",
        f"L.movedim({{0}}, {d}, 0)", f"{{0}}.unfold({d}, 1, 1)", f"F.softmin({{0}}, {d})", f"F.normalize({{0}}, dim={d})",
        f"L.var_mean({{0}}, {d})[0]", f"L.std_mean({{0}}, {d})[1]", f"L.nanmean({{0}}, {d})", f"L.aminmax({{0}}, dim={d}).max",
        f"L.argmax({{0}}, {d})", f"{{0}}.repeat({', '.join(['2'] + ['1'] * max(nd - 1, 0))})", "L.tile({0}, (2,))",
        "L.tril({0})", "L.triu({0}, 1)", "L.rot90({0})", "L.diag_embed({0})", "L.trace({0})",
        "F.layer_norm({0}, {0}.shape[-1:])", "F.pad({0}, (1, 1))", f"L.masked_fill({{0}}, {{0}} > 0, 2.0)"])
    return g.add(e.split("(")[0].replace("L.", "").replace("F.", "").lstrip("{0}."), e, [x])


def m_inplace2(g):
    cands = [k for k in g.floats() if not g.t(k).is_leaf or not g.t(k).requires_grad]
    if not cands:
        return None
    x = cands[-1] if g.rng.random() < 0.6 else g.rng.choice(cands)
    return g.add("inplace", g.rng.choice(INPLACE2), [x], inplace=True)


MAKERS = {
    "unary": (16, m_unary), "scalar": (6, m_scalar), "binary": (14, m_binary), "reduce": (16, m_reduce),
    "shape": (16, m_shape), "index": (9, m_index), "matmul": (6, m_matmul), "einsum": (6, m_einsum),
    "softmax": (4, m_softmax), "cross_entropy": (2, m_cross_entropy), "inplace": (9, m_inplace),
}
# The wider profile: seeds from WIDER_FROM on also draw the ops above UNARY2..INPLACE2 (activations, losses, scans,
# sorts, dim ops, hooks, more in-place ops). Seeds below keep the programs they always had (make test's, and the
# ranges already run).
WIDER_FROM = 500_000
WIDER_MAKERS = dict(MAKERS, unary2=(8, m_unary2), binary2=(6, m_binary2), dim_op=(10, m_dim_op),
                    inplace2=(3, m_inplace2))
