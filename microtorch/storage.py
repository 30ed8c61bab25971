"""torch.storage: the storage classes, which say they live here (`microtorch.storage.TypedStorage`, as torch's print
torch.storage.TypedStorage); they are written in microtorch/_storage.py."""
from ._storage import TypedStorage, UntypedStorage, _reset_warn_typed_storage_removal  # noqa: F401

__all__ = ["TypedStorage", "UntypedStorage"]
