"""Container: the old name of a Module built from keyword children (deprecated by torch)."""
import warnings

from .module import Module


class Container(Module):
    """Module(**children): each keyword becomes a child module (torch deprecates it in favour of Module)"""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
