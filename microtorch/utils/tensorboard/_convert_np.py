"""make_np: a value given to a SummaryWriter method (a microtorch tensor, a numpy array, a Python or numpy scalar)
as a numpy array, converted the way torch.utils.tensorboard converts torch tensors."""
import numpy as np

from ..._tensor import Tensor


def make_np(x):
    """x as a numpy array: an array as it is, a scalar as a one-element array, a tensor by its values (detached:
    logging never touches the graph); anything else is refused with torch's NotImplementedError."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            return np.random.randn(1)  # a meta tensor has no values: torch logs a random one
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")
