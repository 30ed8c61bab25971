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
    def __init__(self, rng=None):
        self.rng = rng or np.random.default_rng()

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(int(seed))
        return self


def get_rng_state():
    from ._tensor import Tensor
    import json
    state = json.dumps(_gen[0].bit_generator.state)
    return Tensor._make(np.frombuffer(state.encode(), dtype=np.uint8).copy())


def set_rng_state(state):
    import json
    s = json.loads(bytes(state._data).decode())
    _gen[0].bit_generator.state = s


def _rng(generator):
    return generator.rng if generator is not None else _gen[0]


def bernoulli_mask(shape, p_keep, np_dtype):
    return (_gen[0].random(shape) < p_keep).astype(np_dtype)
