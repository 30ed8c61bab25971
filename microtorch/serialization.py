"""torch.serialization: save and load, and the allowlist of globals a weights-only load may rebuild.

`load` (weights_only=True by default, as torch's) rebuilds tensors, Parameters and containers of them, and refuses
any other class a file names, since unpickling one can run code. A checkpoint that holds a class of one's own (a
config dataclass, as build-nanogpt saves) loads once that class is allowed: `add_safe_globals([GPTConfig])`, or
`with safe_globals([GPTConfig]): load(path)` for one block.
"""
from ._serialization import _SAFE_GLOBALS, load, save  # noqa: F401

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]


def add_safe_globals(safe_globals):
    """Allow these classes and functions (or (object, "module.name") pairs) in weights-only loads."""
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals():
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    _SAFE_GLOBALS.clear()


class safe_globals:
    """`with safe_globals([...]):` the globals are allowed inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._before = list(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self.safe_globals)

    def __exit__(self, *exc):
        _SAFE_GLOBALS[:] = self._before
        return False
