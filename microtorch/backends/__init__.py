"""torch.backends: which accelerator backends exist (none here; microtorch runs on numpy)."""
from . import mps  # noqa: F401
