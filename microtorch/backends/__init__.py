"""torch.backends: which accelerator backends exist (none here; microtorch runs on numpy), and their switches."""
from . import cuda, cudnn, mps  # noqa: F401
