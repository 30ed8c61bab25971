"""torch.version: microtorch's version, and no CUDA or ROCm build (`torch.version.cuda` is None, as on a CPU
build of torch)."""
from . import __version__  # noqa: F401

cuda = None
hip = None
debug = False
