"""OptimizedModule: what torch.compile returns for a module (microtorch compiles nothing, see _runtime.compile)."""
from .module import Module


class OptimizedModule(Module):
    """Holds the original module as `_orig_mod` (so state_dict keys start with `_orig_mod.`, as torch's) and runs
    it; the original's attributes read through."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)
