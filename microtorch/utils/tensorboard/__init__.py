"""microtorch.utils.tensorboard: log scalars, histograms, images, figures, text, hyperparameters, PR curves and
embeddings for TensorBoard, as torch.utils.tensorboard does (same event files, record by record).

    from microtorch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter()                   # runs/<date>_<host>/events.out.tfevents...
    writer.add_scalar("training loss", loss, step)
    writer.close()

It needs the `tensorboard` package (an optional dependency, as for torch): without it the import fails as
`import torch.utils.tensorboard` does. `add_graph` needs torch.jit tracing, which microtorch does not have: draw a
model's graph with `microtorch.viz.explore(model, input)` instead.
"""
import re

import tensorboard  # before any module of ours: without tensorboard, this line fails as torch's first line does

_OLDEST = (1, 15)


def _release(version):
    """'2.21.0' -> (2, 21, 0): the leading numbers of a version string, enough to compare releases."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


if not hasattr(tensorboard, "__version__") or _release(tensorboard.__version__) < _OLDEST:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
