"""microtorch.utils: torch.utils's data loading (`microtorch.utils.data`)."""
from . import data  # noqa: F401
