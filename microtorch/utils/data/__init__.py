"""microtorch.utils.data: datasets, samplers and the DataLoader that batches them (torch.utils.data).

A Dataset maps an index to an example; a sampler yields indices; a DataLoader groups indices into
batches (BatchSampler), fetches the examples and collates them into batched tensors.
"""
from ._collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,  # noqa: F401
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
