"""The random generators behind rand, randn, randint, randperm, uniform_, normal_, bernoulli, dropout and init.

They draw as torch's CPU generator does: the 32-bit Mersenne Twister seeded with the low 32 bits of the seed,
and rand, randn, randint, randperm, uniform_, normal_ and bernoulli (so dropout's masks) turn its draws into
numbers as torch's kernels do, so that `manual_seed(0); rand(3)` gives torch's tensor([0.4963, 0.7682, 0.0885])
and a seeded nn.Linear starts from torch's weights; float32 normals drawn 16 or more at a time take torch's
vector kernel's log, sine and cosine (_cephes_f32.py), so `randn(64, 784)` is torch's to the bit. multinomial,
poisson, binomial, exponential_, cauchy_, geometric_ and log_normal_ draw as torch's too.
"""
import math

import numpy as np

from . import _cephes_f32
from ._fma import fma

# the mantissa bits of a uniform draw; half draws a float's, then rounds it (torch's CPU kernel computes half in float)
_DIGITS = {np.dtype(np.float16): 24, np.dtype(np.float32): 24, np.dtype(np.float64): 53}
_SLICE = 1 << 20  # elements drawn at a time for a large tensor
_TORCH_DEFAULT_SEED = 67280421310721  # torch.Generator()'s first seed; the global generator starts from it too
# (torch's picks a new one in each process: here an unseeded notebook draws the same numbers on every run)


class TorchStream(np.random.Generator):
    """numpy's Generator on torch's engine, with torch's own ways of drawing (the torch_* methods)."""

    def __init__(self, seed):
        key, pos = np.random.RandomState(int(seed) & 0xFFFFFFFF).get_state()[1:3]  # (mt19937's init_genrand)
        engine = np.random.MT19937()
        engine.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        super().__init__(engine)
        self.next_normal = None  # the second value of torch's last Box-Muller pair (its normal_distribution's)
        self.serial = False  # filling a tensor that is not contiguous: torch's kernels draw one value at a time

    def __reduce__(self):
        # (numpy's own reduction would rebuild a plain numpy Generator, without the torch_* ways of drawing)
        return _stream_at, (self.bit_generator.state, dict(vars(self)))

    def _bits32(self, n):
        return self.bit_generator.random_raw(n)  # (uint64 values of 32 bits: torch's random())

    def _bits64(self, n):
        pairs = self._bits32(2 * n).reshape(n, 2)
        return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]  # torch's random64(): the first draw is the high half

    def torch_uniform(self, np_dtype, low, high, size, fused=True):
        """uniform_(low, high) as torch's uniform_real_distribution: the dtype's mantissa bits of one draw (two for
        float64) scaled to [0, 1), then to [low, high) in double (float64: by one fused multiply-add where the kernel
        is compiled so, as uniform_'s; rrelu's is not)."""
        np_dtype, n = np.dtype(np_dtype), math.prod(size)
        if n > _SLICE:  # (in slices, drawn in turn: the same stream, without passes over huge fresh temporaries)
            out = np.empty(n, np_dtype if _DIGITS.get(np_dtype, 53) < 53 else np.float64)
            for start in range(0, n, _SLICE):
                out[start:start + _SLICE] = self.torch_uniform(np_dtype, low, high, (min(_SLICE, n - start),), fused)
            return out.reshape(size)
        digits = _DIGITS.get(np_dtype, 53)
        bits = self._bits64(n) if digits == 53 else self._bits32(n)
        x = (bits & np.uint64((1 << digits) - 1)).astype(np.float64) * 2.0 ** -digits
        if digits < 53:  # (low and high in the tensor's dtype first, as the kernel casts them)
            low, high = np_dtype.type(low), np_dtype.type(high)
            return (x * float(high - low) + float(low)).astype(np.float32).astype(np_dtype).reshape(size)
        if not fused:
            return (x * float(high - low) + float(low)).reshape(size)
        return fma(x, float(high - low), float(low)).reshape(size)  # (one rounding, as torch's fused kernel)

    def torch_normal(self, np_dtype, mean, std, size):
        """normal_(mean, std) as torch's kernel: 16 or more values by Box-Muller over blocks of 16 uniforms, fewer
        one by one (each pair's second value kept for the next call)."""
        n = math.prod(size)
        if n >= 16 and not self.serial:
            return self._normal_blocks(np.dtype(np_dtype), n, mean, std).reshape(size)
        values = fma(np.array([self._one_normal() for _ in range(n)]), float(std), float(mean))  # (fused, as torch)
        return values.astype(np_dtype).reshape(size)

    def _one_normal(self):
        if self.next_normal is not None:
            value, self.next_normal = self.next_normal, None
            return value
        u1, u2 = self.torch_uniform(np.float64, 0.0, 1.0, (2,))
        radius, theta = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
        self.next_normal = radius * math.sin(theta)
        return radius * math.cos(theta)

    def _normal_blocks(self, np_dtype, n, mean, std):
        if np_dtype == np.float16:  # torch's Half kernel: float blocks of 16, the whole ones only, then the last 16
            return self._normal_blocks_half(n, mean, std)
        data = self.torch_uniform(np_dtype, 0.0, 1.0, (n,))
        whole = n - n % 16
        _box_muller_16(data[:whole].reshape(-1, 16), mean, std)
        if n % 16:  # torch draws the last 16 anew and transforms them together
            data[n - 16:] = self.torch_uniform(np_dtype, 0.0, 1.0, (16,))
            _box_muller_16(data[n - 16:].reshape(1, 16), mean, std)
        return data

    def _normal_blocks_half(self, n, mean, std):
        """normal_ of float16: each block of 16 is drawn and transformed in float (as float32's), and rounded to
        half; unlike float32's kernel it draws uniforms for the whole blocks only before the last 16 anew."""
        whole = n - n % 16
        data = np.empty(n, np.float16)
        body = self.torch_uniform(np.float32, 0.0, 1.0, (whole,))
        _box_muller_16(body.reshape(-1, 16), mean, std)
        data[:whole] = body
        if n % 16:
            tail = self.torch_uniform(np.float32, 0.0, 1.0, (16,))
            _box_muller_16(tail.reshape(1, 16), mean, std)
            data[n - 16:] = tail
        return data

    def torch_bernoulli(self, p, size):
        """bernoulli as torch's kernels draw it: u < p, u a double, or a float when p is a float32 (or half) tensor's
        probabilities (torch's bernoulli_distribution<float>)."""
        single = isinstance(p, np.ndarray) and p.dtype.itemsize < 8
        return self.torch_uniform(np.float32 if single else np.float64, 0.0, 1.0, size) < p

    def torch_exponential(self, np_dtype, lambd, size):
        """exponential_(lambd) as torch's kernel: -log(1 - u) / lambd for a double u, in np_dtype."""
        u = self.torch_uniform(np.float64, 0.0, 1.0, size)
        log1p = np.asarray(np.frompyfunc(math.log1p, 1, 1)(-u), dtype=np.float64)  # (the C library's, as the
        return (-1.0 / lambd * log1p).astype(np_dtype)  # kernel: numpy's own differs in the last bit now and then)

    def torch_from_uniform(self, np_dtype, transform, size):
        """transform(u) of a double u per element, in np_dtype: torch's cauchy_ (median + sigma tan(pi (u - 1/2)))
        and geometric_ (ceil(log u / log(1 - p))) kernels."""
        return transform(self.torch_uniform(np.float64, 0.0, 1.0, size)).astype(np_dtype)

    def torch_log_normal(self, np_dtype, mean, std, size):
        """log_normal_(mean, std): exp of torch's one-at-a-time normals (their kept second values included)."""
        n = math.prod(size)
        values = [_exp(float(fma(self._one_normal(), float(std), float(mean)))) for _ in range(n)]  # (fused, and the
        # C library's exp, as the kernel)
        return np.array(values, dtype=np.float64).astype(np_dtype).reshape(size)

    def torch_poisson(self, rates):
        """poisson(rates) as torch's CPU kernel, element by element: Hoermann's transformed rejection for rates of 10
        or more, else multiplying uniforms until their product falls below exp(-rate)."""
        return np.array([self._one_poisson(float(r)) for r in np.ravel(rates)], dtype=np.float64).reshape(np.shape(rates))

    def _one_poisson(self, rate):
        if rate >= 10:
            return self._poisson_rejection(rate)
        if rate == 0:
            return 0
        count, product, floor = 0, 1.0, math.exp(-rate)
        while True:
            product *= self._uniform_double()
            if product <= floor:
                return count
            count += 1

    def _poisson_rejection(self, rate):
        """Hoermann's PTRS (1993), as torch writes it."""
        root, log_rate = math.sqrt(rate), math.log(rate)
        b = 0.931 + 2.53 * root
        a = -0.059 + 0.02483 * b
        inv_alpha, v_r = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2)
        while True:
            u = self._uniform_double() - 0.5
            v = self._uniform_double()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + rate + 0.43)
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= -rate + k * log_rate - math.lgamma(k + 1):
                return k

    def torch_binomial(self, counts, probs):
        """binomial(counts, probs) as torch's CPU kernel, element by element (arrays of one shape): BTRS (Hoermann's
        transformed rejection) where count * min(p, 1 - p) >= 10, else the sum of geometric gaps."""
        draws = [_one_binomial(float(n), float(p), self._uniform_double) for n, p in zip(np.ravel(counts), np.ravel(probs))]
        return np.array(draws, dtype=np.float64).reshape(np.shape(counts))

    def _uniform_double(self):
        return float(self.torch_uniform(np.float64, 0.0, 1.0, (1,))[0])

    def torch_integers(self, low, high, size):
        """randint(low, high) as torch's random_from_to: one draw (two when the range needs 64 bits) modulo it."""
        span, n = high - low, math.prod(size)
        bits = self._bits64(n) if span >= 2 ** 32 else self._bits32(n)
        return ((bits % np.uint64(span)).astype(np.int64) + low).reshape(size)

    def torch_permutation(self, n):
        """randperm(n) as torch's CPU kernel: a Fisher-Yates shuffle, swapping i with i + draw % (n - i)."""
        out = list(range(n))
        draws = self._bits32(max(n - 1, 0)).tolist()
        for i, bits in enumerate(draws):
            j = i + bits % (n - i)
            out[i], out[j] = out[j], out[i]
        return np.array(out, dtype=np.int64)


def _one_binomial(n, p, uniform):
    if n <= 0 or p <= 0:
        return 0
    if p >= 1:
        return n
    q = min(p, 1 - p)  # (drawn for the rarer outcome, counted back for p > 1/2)
    if n == math.inf:  # (n - k: inf - inf, NaN, for p > 1/2)
        k = _btrs_infinite(uniform)
    else:
        k = _btrs(n, q, uniform) if n * q >= 10 else _binomial_inversion(n, q, uniform)
    return k if p <= 0.5 else n - k


def _btrs_infinite(uniform):
    """torch's BTRS for an infinite count, in IEEE arithmetic: its coefficients are infinite, so k is inf for a
    positive u and NaN (inf - inf) for a negative one, returned from the first pair inside the tight box (its other
    test compares with NaN, always false, and draws again)."""
    while True:
        u = uniform() - 0.5
        v = uniform()
        if 0.5 - abs(u) >= 0.07 and v <= 0.92:
            return math.inf if u > 0 else math.nan


def _binomial_inversion(n, p, uniform):
    """How many geometric gaps fit in n trials."""
    total, count, log_q = 0.0, 0, math.log1p(-p)
    while True:
        total += math.ceil(math.log(uniform()) / log_q)
        if total > n:
            return count
        count += 1


def _btrs(n, p, uniform):
    """Hoermann's BTRS (1993), as torch writes it (its last test has no log on the box's side, as torch's)."""
    spread = math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spread
    a, c, v_r = -0.0873 + 0.0248 * b + 0.01 * p, n * p + 0.5, 0.92 - 4.2 / b
    r, alpha, m = p / (1 - p), (2.83 + 5.1 / b) * spread, math.floor((n + 1) * p)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(n - k))
        if math.log(v * alpha / (a / (us * us) + b)) <= bound:
            return k


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)  # log k! minus Stirling's formula, k = 0..9


def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    square = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / square) / square) / (k + 1)


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:  # (the C function's inf)
        return math.inf


def _box_muller_16(blocks, mean, std):
    """In place, rows of 16 uniforms u: the first 8 feed the radius, the last 8 the angle (torch's normal_fill_16).
    float64 uses the C library's log, as torch's kernel (numpy's own differs in the last bit now and then); float32
    torch's vector kernel, with avx_mathfun's log, sine and cosine (_cephes_f32)."""
    if blocks.dtype == np.float32:
        for start in range(0, len(blocks), 4096):  # (in slices that stay in the cache: the float steps take many
            _box_muller_16_float32(blocks[start:start + 4096], mean, std)  # passes, on fresh pages when large)
        return None
    u1, u2 = 1 - blocks[:, :8], blocks[:, 8:].copy()
    log = np.frompyfunc(math.log, 1, 1)(u1).astype(np.float64) if blocks.dtype == np.float64 else np.log(u1)
    radius = np.sqrt(-2 * log).astype(blocks.dtype)
    theta = (2.0 * math.pi * u2.astype(np.float64)).astype(blocks.dtype)
    cos_part, sin_part = radius * np.cos(theta), radius * np.sin(theta)
    if blocks.dtype == np.float64:  # (torch's kernel fuses `* std + mean` into one rounding)
        blocks[:, :8], blocks[:, 8:] = fma(cos_part, std, mean), fma(sin_part, std, mean)
    else:
        blocks[:, :8], blocks[:, 8:] = cos_part * std + mean, sin_part * std + mean


def _box_muller_16_float32(blocks, mean, std):
    """torch's normal_fill_16_AVX2, every step in float32 (radius sqrt(-2 log(1 - u)), angle 2 pi u, then one
    fused n * std + mean)."""
    f32 = np.float32
    radius = np.sqrt(f32(-2) * _cephes_f32.log(f32(1) - blocks[:, :8]))
    sin, cos = _cephes_f32.sincos(f32(2 * math.pi) * blocks[:, 8:])
    std, mean = f32(std), f32(mean)
    blocks[:, :8], blocks[:, 8:] = fma(radius * cos, std, mean), fma(radius * sin, std, mean)


def drawn_for(rng, array, draw):
    """Values for `array`'s positions made by draw(shape) in the order torch's kernels fill array: its memory's
    (TensorIterator walks the dims from the largest stride to the smallest, so a transposed or permuted tensor is
    filled as it lies in memory, a strided slice in its own order), and, where array is not contiguous, one value
    at a time (normal_'s block path is for contiguous tensors only)."""
    order = sorted(range(array.ndim), key=lambda d: -abs(array.strides[d]))
    rng.serial = not array.flags.c_contiguous
    try:
        values = np.asarray(draw(tuple(array.shape[d] for d in order)))
    finally:
        rng.serial = False
    return values.transpose(np.argsort(order)) if order != sorted(order) else values


_gen = [TorchStream(_TORCH_DEFAULT_SEED)]
_initial_seed = [_TORCH_DEFAULT_SEED]


def manual_seed(seed):
    """Seed the generator so that random tensors are reproducible (and are torch's for that seed)."""
    seed = int(seed)
    _gen[0] = TorchStream(seed)
    _initial_seed[0] = seed
    return Generator(_gen[0])


def seed():
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed():
    return _initial_seed[0]


def generator():
    return _gen[0]


class Generator:
    """A random stream of its own (torch.Generator): pass generator= to draw from it."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.Generator'>)
    default_seed = _TORCH_DEFAULT_SEED  # a new torch.Generator() starts from this seed too

    def __init__(self, rng=None, device="cpu"):
        if isinstance(rng, np.random.Generator):
            self.rng, self._seed = rng, None
        else:  # Generator() or Generator("cpu"), as torch
            self.manual_seed(self.default_seed)
        self.device = "cpu"

    def manual_seed(self, seed):
        self.rng, self._seed = TorchStream(seed), int(seed)
        return self

    def initial_seed(self):
        return self._seed if self._seed is not None else _initial_seed[0]

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def get_state(self):
        return _state_of(self.rng)

    def set_state(self, new_state):
        _restore(self.rng, new_state)
        return self

    def __reduce__(self):
        """pickle, copy and deepcopy: a new generator at the same point of the stream, as torch's"""
        return (_generator_at, (self._seed, self.get_state()))


def _stream_at(state, fields):
    stream = TorchStream(0)
    stream.bit_generator.state = state
    vars(stream).update(fields)
    return stream


def _generator_at(seed, state):
    made = Generator().set_state(state)
    made._seed = seed
    return made


def _state_of(stream):
    """The engine's state and the kept normal value, as a uint8 tensor (torch's get_rng_state is one too)."""
    import json
    from ._tensor import Tensor
    state = {"engine": stream.bit_generator.state, "next_normal": getattr(stream, "next_normal", None)}
    return Tensor._make(np.frombuffer(json.dumps(state, default=_listed).encode(), np.uint8).copy())


def _listed(value):
    return value.tolist()  # (the engine's key, an array)


def _restore(stream, new_state):
    import json
    state = json.loads(bytes(new_state._data).decode())
    stream.bit_generator.state = state["engine"]
    stream.next_normal = state["next_normal"]


def get_rng_state():
    return _state_of(_gen[0])


def set_rng_state(new_state):
    _restore(_gen[0], new_state)


def _rng(generator):
    return generator.rng if generator is not None else _gen[0]


def bernoulli_mask(shape, p_keep, np_dtype, like=None):
    """1 with probability p_keep, as torch's bernoulli_(p): one double draw per element, kept when below p_keep
    (dropout's masks, so a seed drops torch's units). like: the array the mask is drawn into, whose memory order
    the draws follow (dropout's empty_like(input): a transposed input gets a transposed mask)."""
    if like is not None and not like.flags.c_contiguous:
        return drawn_for(_gen[0], like, lambda s: _gen[0].torch_bernoulli(p_keep, s)).astype(np_dtype)
    return _gen[0].torch_bernoulli(p_keep, tuple(shape)).astype(np_dtype)
