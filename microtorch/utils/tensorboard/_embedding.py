"""The embedding projector's files. Each embedding gets a directory <step>/<tag>/ in the log directory holding
tensors.tsv (one vector a line), metadata.tsv (labels) and sprite.png (the thumbnails in one square picture);
projector_config.pbtxt, beside the event files, lists every embedding and where its files are."""
import math

import numpy as np
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._convert_np import make_np
from ._utils import make_grid


def _join(directory, name):
    """directory/name by gfile, which is TensorFlow's when it is installed, else tensorboard's stub (whose
    filesystems join paths themselves)."""
    if hasattr(tf.io.gfile, "join"):
        return tf.io.gfile.join(directory, name)
    return tf.io.gfile.get_filesystem(directory).join(directory, name)


def _write(path, contents):
    """contents (str or bytes) as the whole file at path (local, or any filesystem gfile knows)."""
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(tf.compat.as_bytes(contents))


def make_tsv(metadata, save_path, metadata_header=None):
    """metadata.tsv: one label a line, or with a header, one tab-separated row of columns a line."""
    if not metadata_header:
        lines = [str(label) for label in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(column) for column in row) for row in [metadata_header] + metadata]
    _write(_join(save_path, "metadata.tsv"), "\n".join(lines) + "\n")


def make_sprite(label_img, save_path):
    """sprite.png: the (N, C, H, W) thumbnails in a grid of ceil(sqrt(N)) columns, padded with black to a square
    (the projector cuts the sprite into single_image_dim pieces)."""
    from io import BytesIO

    from PIL import Image

    columns = math.ceil(label_img.size(0) ** 0.5)
    grid_hwc = make_grid(make_np(label_img), ncols=columns).transpose(1, 2, 0)
    square = np.zeros((grid_hwc.shape[1], grid_hwc.shape[1], 3))
    square[:grid_hwc.shape[0], :, :] = grid_hwc
    with BytesIO() as png:
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(png, format="PNG")
        _write(_join(save_path, "sprite.png"), png.getvalue())


def make_mat(matlist, save_path):
    """tensors.tsv: each row of the (N, D) array on a line, tab-separated (each number as Python prints it)."""
    lines = ["\t".join(str(number.item()) for number in row) + "\n" for row in matlist]
    _write(_join(save_path, "tensors.tsv"), "".join(lines))


def get_embedding_info(metadata, label_img, subdir, global_step, tag):
    """The projector config's entry for one embedding: its name and the paths of its files."""
    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = _join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = _join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = _join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.size(3), label_img.size(2)])  # width, height
    return info


def write_pbtxt(save_path, contents):
    """projector_config.pbtxt (the whole config, rewritten at each embedding added)."""
    _write(_join(save_path, "projector_config.pbtxt"), contents)
