"""Image helpers of the writer: reorder an image's axes to height, width, channels (from its `dataformats` letters),
tile a batch of images into one grid, render matplotlib figures, and tile a batch of videos into frames."""
import numpy as np


def figure_to_image(figures, close=True):
    """A matplotlib figure drawn by Agg, as a uint8 array (C, H, W) of RGB; a list of figures gives (N, C, H, W).
    close=True closes each figure once drawn (as plt.close)."""
    import matplotlib.pyplot as plt  # (for plt.close; imported even when close=False, as torch does)

    if isinstance(figures, list):
        return np.stack([_figure_rgb(figure, close, plt) for figure in figures])
    return _figure_rgb(figures, close, plt)


def _figure_rgb(figure, close, plt):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
    width, height = figure.canvas.get_width_height()
    rgb_chw = np.moveaxis(rgba.reshape([height, width, 4])[:, :, :3], 2, 0)  # alpha dropped
    if close:
        plt.close(figure)
    return rgb_chw


def make_grid(images, ncols=8):
    """(N, C, H, W) images with 1 or 3 channels, laid out ncols to a row on one (3, H * rows, W * ncols) canvas of
    their dtype (grey ones repeated to RGB; the last row's empty places left at 0)."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = int(np.ceil(float(count) / ncols))
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


# torch's messages carry the indentation of their continuation lines
_TWICE = "You can not use the same dimension shorthand twice." + " " * 13 + "input_format: {}"
_MISMATCH = "size of input tensor and input format are different." + " " * 9 + "tensor shape: {}, input_format: {}"


def convert_to_HWC(tensor, input_format):  # noqa: N802 (torch's name)
    """A numpy image whose axes `input_format` names (N, C, H, W letters in any order, e.g. "CHW", "HWC", "HW",
    "NCHW") as (H, W, C): a batch is tiled into a grid, grey images repeated to three channels."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(_TWICE.format(input_format))
    if len(tensor.shape) != len(input_format):
        raise AssertionError(_MISMATCH.format(tensor.shape, input_format))
    input_format = input_format.upper()
    if len(input_format) == 4:
        grid_chw = make_grid(tensor.transpose([input_format.find(c) for c in "NCHW"]))
        return grid_chw.transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    return None  # (any other number of axes: as in torch, the caller fails on None)


def _is_power_of_two(n):
    return n != 0 and (n & (n - 1)) == 0


def _prepare_video(video):
    """A batch of videos (N, T, C, H, W) as T frames (T, H', W', C) that show the N videos side by side in a grid
    (N padded with black videos to a power of two); uint8 values scaled to [0, 1]."""
    batch, frames, channels, height, width = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if not _is_power_of_two(video.shape[0]):
        missing = int(2 ** video.shape[0].bit_length() - video.shape[0])
        video = np.concatenate((video, np.zeros(shape=(missing, frames, channels, height, width))), axis=0)
    nrows = 2 ** ((batch.bit_length() - 1) // 2)
    ncols = video.shape[0] // nrows
    video = np.reshape(video, (nrows, ncols, frames, channels, height, width))
    video = np.transpose(video, axes=(2, 0, 4, 1, 5, 3))
    return np.reshape(video, (frames, nrows * height, ncols * width, channels))
