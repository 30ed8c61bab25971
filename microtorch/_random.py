"""The global random generator (numpy's PCG64) behind rand, randn, randint, dropout, init."""
import numpy as np

_gen = [np.random.default_rng(0)]
_initial_seed = [0]


def manual_seed(seed):
    """Seed the generator so that random tensors are reproducible."""
    seed = int(seed)
    _gen[0] = np.random.default_rng(seed)
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
    default_seed = 67280421310721  # a new torch.Generator() starts from this seed too

    def __init__(self, rng=None, device="cpu"):
        if isinstance(rng, np.random.Generator):
            self.rng, self._seed = rng, None
        else:  # Generator() or Generator("cpu"), as torch
            self.manual_seed(self.default_seed)
        self.device = "cpu"

    def manual_seed(self, seed):
        self.rng, self._seed = np.random.default_rng(int(seed)), int(seed)
        return self

    def initial_seed(self):
        return self._seed if self._seed is not None else _initial_seed[0]

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def get_state(self):
        import json
        from ._tensor import Tensor
        return Tensor._make(np.frombuffer(json.dumps(self.rng.bit_generator.state).encode(), np.uint8).copy())

    def set_state(self, new_state):
        import json
        self.rng.bit_generator.state = json.loads(bytes(new_state._data).decode())
        return self


def get_rng_state():
    from ._tensor import Tensor
    import json
    state = json.dumps(_gen[0].bit_generator.state)
    return Tensor._make(np.frombuffer(state.encode(), dtype=np.uint8).copy())


def set_rng_state(new_state):
    import json
    s = json.loads(bytes(new_state._data).decode())
    _gen[0].bit_generator.state = s


def _rng(generator):
    return generator.rng if generator is not None else _gen[0]


def bernoulli_mask(shape, p_keep, np_dtype):
    return (_gen[0].random(shape) < p_keep).astype(np_dtype)
