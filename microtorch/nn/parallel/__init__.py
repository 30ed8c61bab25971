"""microtorch.nn.parallel: DataParallel and DistributedDataParallel, as torch.nn.parallel names them.

DataParallel lives in nn/modules/parallel.py (it is also nn.DataParallel); DistributedDataParallel needs a
process group from microtorch.distributed."""
from ..modules.parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
